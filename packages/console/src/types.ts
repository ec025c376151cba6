/**
 * What the console reads from the API. Its server, status, import, latency and secret shapes are the
 * API's own: types of the zod schemas it validates and documents with, imported as types only (nothing
 * of them reaches the bundle; `views.test.ts` checks the answers are exactly those schemas). The shapes
 * below them are the console's reading of tools and results (a tool's JSON Schema, a result's content)
 * and of the key, access, thread and chat routes, whose schemas live in their route modules beside AWS code.
 */
import type * as views from "@mcpgw/api/views";
import type { z } from "zod";

export type { ServerState, ServerStatus } from "@mcpgw/core";

/** A server as `GET /v1/servers/{id}` answers it: its spec (secrets masked), version and live status. */
export type Server = views.ServerView;

/** A page of `GET /v1/servers`. */
export type ServerPage = z.infer<typeof views.ServerList>;

/** One point of a server's latency history (`GET /v1/servers/{id}/latency`). */
export type LatencyPoint = views.LatencyPointView;

/** What an import would do (`?dryRun=true`): server names, each list sorted. */
export type ImportPreview = z.infer<typeof views.ImportPreview>;

/** What an import did: the servers it stored, the names it skipped. */
export type ImportResult = z.infer<typeof views.ImportResult>;

/** A secret as listed: its name and key names, never its values. */
export type SecretSummary = z.infer<typeof views.SecretSummaryView>;

/** A tool as the console shows it: a server's (`GET /v1/servers/{id}/tools`) or the catalogue's. */
export interface Tool {
  name: string;
  server?: string;
  description?: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
}

/** The subset of JSON Schema a tool's input form is generated from. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
}

/** A tool of the aggregated catalogue (`GET /v1/tools`): its name is `<server>__<tool>`. */
export interface CatalogTool extends Tool {
  server: string;
}

/** One part of a tool result's `content`: text, an image (base64), or another kind shown as JSON. */
export interface ContentPart {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** What `POST /v1/tools/{name}/call` answers. */
export interface CallResult {
  content: ContentPart[];
  structuredContent?: Record<string, unknown>;
  text: string;
  isError: boolean;
}

/** A client API key as listed (never its material). `servers: null` = every server. */
export interface ApiKey {
  id: string;
  name: string;
  servers: string[] | null;
  serverIds: string[] | null;
  createdAt: string;
}

/** The answer to creating a key: the only time its material is shown. */
export interface NewApiKey extends ApiKey {
  key: string;
}

/** A thread as `GET /v1/threads` lists it. */
export interface ThreadSummary {
  id: string;
  owner: string;
  createdAt: string;
  instances: Array<{ serverId: string; server: string }>;
}

/** One registered instance of a thread-scoped server in a thread. */
export interface ThreadInstance {
  threadId: string;
  serverId: string;
  server: string;
  worktreeRoot: string;
  createdAt: string;
  pid?: number | null;
}

/** A thread as `GET /v1/threads/{id}` shows it. */
export interface ThreadDetail {
  id: string;
  owner: string;
  createdAt: string;
  instances: ThreadInstance[];
}

/** Whether one chat shows one server's tools. */
export interface ChatToggle {
  id: string;
  name: string;
  enabled: boolean;
}
