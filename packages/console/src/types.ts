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
  default?: unknown;
  minimum?: number;
  maximum?: number;
}
