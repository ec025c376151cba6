import { z } from "zod";
import { ServerName } from "./names";

/** Header and env maps: string keys to string values. */
const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be a valid HTTP header name");
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid environment variable name");
/** A header value: CR, LF or NUL could split or smuggle headers, so they are refused at registration. */
const HeaderValue = z
  .string()
  .max(8_192)
  .refine((value) => !/[\r\n\0]/.test(value), "must not contain CR, LF or NUL");
export const HeaderMap = z.record(HeaderName, HeaderValue);
export const EnvMap = z.record(EnvName, z.string().max(32_768));

/** Names of secret-store entries (what `secretRef` points at). */
export const SecretName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, "must be 1-128 letters, digits, '_', '.' or '-'");

export const HttpUrl = z
  .string()
  .max(2_048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && !url.username && !url.password;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials");

export const SECRET_FORMATS = ["env", "properties", "json", "yaml"] as const;
export const SecretFormat = z.enum(SECRET_FORMATS);
export type SecretFormat = z.infer<typeof SecretFormat>;
export const Scope = z.enum(["project", "thread"]);
export const TimeoutSeconds = z.number().int().min(1).max(900);

const common = {
  name: ServerName,
  enabled: z.boolean().default(true),
  timeoutSeconds: TimeoutSeconds.default(30),
};

/** A remote MCP server reached over streamable HTTP (or legacy SSE). */
export const HttpServerSpec = z.strictObject({
  transport: z.literal("http"),
  ...common,
  url: HttpUrl,
  headers: HeaderMap.default({}),
});

/** A command-based MCP server spoken to over stdio (run by the stdio runner). */
export const StdioServerSpec = z
  .strictObject({
    transport: z.literal("stdio"),
    ...common,
    command: z.string().trim().min(1, "must not be empty").max(1_024),
    args: z.array(z.string().max(8_192)).max(256).default([]),
    env: EnvMap.default({}),
    scope: Scope.default("project"),
    secretRef: SecretName.optional(),
    secretFormat: SecretFormat.optional(),
  })
  .refine((spec) => !spec.secretFormat || spec.secretRef, {
    message: "secretFormat needs a secretRef",
    path: ["secretFormat"],
  });

/** What an admin configures for a server; `transport` may be left out when `url` or `command` says it. */
export const ServerSpec = z.preprocess(
  inferTransport,
  z.discriminatedUnion("transport", [HttpServerSpec, StdioServerSpec]),
);
export type ServerSpec = z.infer<typeof ServerSpec>;
export type HttpServerSpec = z.infer<typeof HttpServerSpec>;
export type StdioServerSpec = z.infer<typeof StdioServerSpec>;

function inferTransport(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input) || "transport" in input)
    return input;
  if ("command" in input) return { ...input, transport: "stdio" };
  if ("url" in input) return { ...input, transport: "http" };
  return input;
}

/** Fields a PATCH may carry; everything optional, validated again as a whole after merging. */
export const ServerPatch = z.strictObject({
  name: ServerName.optional(),
  transport: z.enum(["http", "stdio"]).optional(),
  enabled: z.boolean().optional(),
  timeoutSeconds: TimeoutSeconds.optional(),
  url: HttpUrl.optional(),
  headers: HeaderMap.optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: EnvMap.optional(),
  scope: Scope.optional(),
  secretRef: SecretName.nullable().optional(),
  secretFormat: SecretFormat.nullable().optional(),
});
export type ServerPatch = z.infer<typeof ServerPatch>;

/** A stored server: its spec plus identity, optimistic-concurrency version and timestamps. */
export type ServerRecord = ServerSpec & {
  id: string;
  version: number;
  createdAt: string;
  updatedAt: string;
};

/** `Omit` applied to each member of a union (a plain `Omit` would flatten the discriminated union). */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * A stored server without its sealed fields — what a read can return without a KMS call — with the
 * masked view of its secret map (headers for HTTP, env for stdio) stored beside the sealed value.
 */
export type PlainServer = DistributiveOmit<ServerRecord, "headers" | "env"> & {
  /** Every header (HTTP) or env (stdio) name with its mask; undefined for records stored before masks were. */
  masked: Record<string, string> | undefined;
  /** False when the sealed value no longer matches the digest written with it (tampered or corrupted). */
  sealIntact: boolean;
};

/** A plain stdio server (the runner's view). */
export type PlainStdioServer = Extract<PlainServer, { transport: "stdio" }>;
