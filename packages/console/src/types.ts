/**
 * What the console reads from the API. Every answer's shape is the API's own: types of the zod schemas
 * it validates and documents with (packages/api/src/views.ts), imported as types only (nothing of them
 * reaches the bundle; `views.test.ts` checks the answers are exactly those schemas). The console's own
 * are only its readings of open-ended data, which the API documents as any JSON: a tool (`Tool`) and its
 * JSON Schema (`JsonSchema`, what the input form is generated from), and a result's content parts
 * (`ContentPart`); `CatalogTool` and `CallResult` are the API's shapes read through them.
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

/** A server's or tool's calls over the last hour or day (`GET /v1/audit/stats`). */
export type AuditStats = z.infer<typeof views.AuditStatsView>;

/** One event of the audit trail (`GET /v1/audit`): a tool call or an admin change, never a value. */
export type { AuditEvent, AuditPrincipal } from "@mcpgw/core";

/** What an import would do (`?dryRun=true`): server names, each list sorted. */
export type ImportPreview = z.infer<typeof views.ImportPreview>;

/** What an import did: the servers it stored, the names it skipped. */
export type ImportResult = z.infer<typeof views.ImportResult>;

/** A secret as listed: its name and key names, never its values. */
export type SecretSummary = z.infer<typeof views.SecretSummaryView>;

/** A client API key as listed (never its material). `servers: null` = every server. */
export type ApiKey = z.infer<typeof views.ApiKeyView>;

/** The answer to creating a key: the only time its material is shown. */
export type NewApiKey = z.infer<typeof views.NewApiKeyView>;

/** Which servers a user or group reaches by OAuth sign-in (`GET /v1/access`). `servers: null` = every server. */
export type AccessMapping = z.infer<typeof views.AccessMappingView>;

/** Whether one chat shows one server's tools. */
export type ChatToggle = z.infer<typeof views.ChatToggleView>;

/** A thread as `GET /v1/threads` lists it. */
export type ThreadSummary = z.infer<typeof views.ThreadSummaryView>;

/** A thread as `GET /v1/threads/{id}` shows it: its registered instances. */
export type ThreadDetail = z.infer<typeof views.ThreadView>;

/** One registered instance of a thread-scoped server in a thread. */
export type ThreadRegistration = z.infer<typeof views.ThreadRegistrationView>;

/** What starting an instance in a thread answers: its registration and the runner's pid. */
export type ThreadInstance = z.infer<typeof views.ThreadInstanceView>;

/** A tool of the aggregated catalogue (`GET /v1/tools`): its name is `<server>__<tool>`. */
export type CatalogTool = Omit<z.infer<typeof views.CatalogToolView>, "inputSchema"> & {
  inputSchema: JsonSchema;
};

/** What `POST /v1/tools/{name}/call` answers, its content read part by part. */
export type CallResult = Omit<z.infer<typeof views.CallResultView>, "content"> & { content: ContentPart[] };

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

/** One part of a tool result's `content`: text, an image (base64), or another kind shown as JSON. */
export interface ContentPart {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** How a server's tool definitions are pinned: changes wait for approval, are taken at once, or not pinned. */
export type Pinning = "approve" | "auto" | "off";

/** The annotation hints a tool declares about itself (MCP spec). */
export type AnnotationHint = "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint";

/** A tool's definition as pinned or as the upstream now describes it. */
export interface ToolDef extends Tool {
  title?: string;
  annotations?: Partial<Record<AnnotationHint, boolean>> & { title?: string };
  _meta?: Record<string, unknown>;
}

/** A tool change waiting for an admin (`GET /v1/servers/{id}/changes`). */
export interface PendingChange {
  id: string;
  tool: string;
  kind: "added" | "changed";
  before: ToolDef | null;
  after: ToolDef;
  diff: Array<{ field: string; before: unknown; after: unknown }>;
  screening: Array<{ rule: string; detail: string }>;
  detectedAt: string;
}

/** A rule of a tool set: tools of a server, with given annotation hints, or whose name matches a glob. */
export interface ToolRule {
  server?: string;
  annotations?: Partial<Record<AnnotationHint, boolean>>;
  glob?: string;
}

/** A set's own name, description or annotations for one of its tools. */
export interface ToolOverride {
  name?: string;
  description?: string;
  annotations?: Partial<Record<AnnotationHint, boolean>>;
}

/** A named selection of tools across servers (`/v1/toolsets`), served at `/mcp/sets/{name}`. */
export interface ToolSet {
  name: string;
  description?: string;
  tools?: string[];
  rules?: ToolRule[];
  overrides?: Record<string, ToolOverride>;
  /** The qualified names the set holds now (`GET /v1/toolsets/{name}` only). */
  resolved?: string[];
}

/** A key's or mapping's tool policy: an allow-list, annotation hints refused, names exempt from the refusal. */
export interface ToolPolicy {
  allow?: string[];
  refuse?: Partial<Record<AnnotationHint, boolean>>;
  except?: string[];
}

/** What a key or mapping carries beside its servers: tool sets and a tool policy. */
export interface ToolScope {
  toolsets?: string[] | null;
  toolPolicy?: ToolPolicy | null;
}
