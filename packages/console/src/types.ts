/** What the console reads from the API (the fields it shows; the OpenAPI document has the rest). */

export type ServerState = "connecting" | "connected" | "failed" | "disabled";

export interface ServerStatus {
  state: ServerState;
  reason: string | null;
  error: string | null;
  toolCount: number;
  lastConnectionAttemptAt: string | null;
  lastSuccessfulConnectionAt: string | null;
  lastConnectionFailureAt: string | null;
  lastConnectionLatencyMs: number | null;
  lastError: string | null;
  protocolVersion?: string;
  /**
   * Upstreams that need OAuth: whether an admin must authorize the gateway (or, for client_credentials,
   * whether its grant was refused), and until when it may.
   */
  authorization?: "required" | "authorized" | "refused";
  credentialExpiresAt?: string | null;
}

export interface Server {
  id: string;
  name: string;
  transport: "http" | "stdio";
  enabled: boolean;
  timeoutSeconds: number;
  scope: "project" | "thread";
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** An HTTP upstream the gateway signs in to with OAuth (shared: one authorization for everyone). */
  auth?:
    | {
        type: "oauth";
        mode: "shared" | "per_user";
        clientId?: string;
        clientSecret?: string;
        scopes?: string[];
      }
    | {
        type: "client_credentials";
        clientId: string;
        clientSecret: string;
        scopes?: string[];
        tokenUrl?: string;
      };
  secretRef?: string;
  secretFormat?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  status: ServerStatus;
}

export interface ServerPage {
  servers: Server[];
  nextCursor?: string | null;
}

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

/** A secret as listed: its name and key names, never its values. */
export interface SecretSummary {
  name: string;
  keys: string[];
  updatedAt: string;
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
