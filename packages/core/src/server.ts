import { z } from "zod";
import { ChildLimits } from "./child-limits";
import { assertNever } from "./exhaustive";
import {
  FORBIDDEN_HEADERS,
  HEADER_SAYS,
  HEADER_TOKEN,
  HEADER_VALUE,
  isForbiddenHeader,
  NO_CR_LF_NUL,
  SENDABLE,
} from "./header-rules";
import { NAME_SAYS, SECRET_NAME } from "./name-rules";
import { ServerName } from "./names";
import { HTTP_URL, NOT_BLANK, NOT_MASKED, recordOf } from "./patterns";
import { Pinning } from "./pinning";

/** `word` matched in any case, in a pattern JSON Schema can carry (no flags): `host` → `[Hh][Oo][Ss][Tt]`. */
function anyCase(word: string): string {
  return [...word].map((char) => (/[a-z]/.test(char) ? `[${char.toUpperCase()}${char}]` : char)).join("");
}

/** A header name: an RFC 9110 token, and none of {@link FORBIDDEN_HEADERS} (any case; header-rules.ts). */
const HEADER_NAME = new RegExp(
  `^(?!(?:${FORBIDDEN_HEADERS.map(anyCase).join("|")})$)${HEADER_TOKEN.source.slice(1)}`,
);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HeaderName = z
  .string()
  .regex(HEADER_TOKEN, HEADER_SAYS.notToken)
  .refine((name) => !isForbiddenHeader(name), HEADER_SAYS.forbidden);
const EnvName = z.string().regex(ENV_NAME, "must be a valid environment variable name");
/** A header value: CR, LF or NUL could split or smuggle headers; past Latin-1 it cannot be sent at all. */
const HeaderValue = z
  .string()
  .max(8_192)
  .regex(NO_CR_LF_NUL, HEADER_SAYS.splits)
  .regex(SENDABLE, HEADER_SAYS.unsendable)
  .meta({ pattern: HEADER_VALUE.source });
const EnvValue = z.string().max(32_768);
/**
 * A value to store, documented as never a mask: a pasted mask (e.g. from this gateway's own output) is
 * no credential. `parseServerSpec` refuses masks (server.invalid), naming each.
 */
const real = (value: z.ZodString, pattern: RegExp) =>
  value.meta({ pattern: pattern.source, description: "the real value, never a mask (`…[SECRET]`)" });

/** Headers and env as an edit submits them: a value may be the mask of the stored one (kept). */
export const HeaderMap = recordOf(HeaderName, HEADER_NAME, HeaderValue);
export const EnvMap = recordOf(EnvName, ENV_NAME, EnvValue);
/** Headers and env of a spec: real values only. */
export const RealHeaderMap = recordOf(
  HeaderName,
  HEADER_NAME,
  real(HeaderValue, new RegExp(NOT_MASKED.source + HEADER_VALUE.source.slice(1))),
);
export const RealEnvMap = recordOf(EnvName, ENV_NAME, real(EnvValue, NOT_MASKED));

/** Names of secret-store entries (what `secretRef` points at). */
export const SecretName = z.string().regex(SECRET_NAME, NAME_SAYS.secret);

const URL_MESSAGE = "must be an http(s) URL without credentials";
/**
 * An upstream URL: what the URL parser reads as http(s) without credentials. The document shows the
 * canonical spellings (`HTTP_URL`); other spellings parse too, so the upstream policy can refuse them.
 */
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
  }, URL_MESSAGE)
  .meta({ format: "uri", pattern: HTTP_URL.source });

/** A command line's program: not blank (it is stored trimmed). */
export const Command = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(1_024)
  .meta({ pattern: NOT_BLANK.source });
export const Args = z.array(z.string().max(8_192)).max(256);

export const SECRET_FORMATS = ["env", "properties", "json", "yaml"] as const;
export const SecretFormat = z.enum(SECRET_FORMATS);
export type SecretFormat = z.infer<typeof SecretFormat>;
export const Scope = z.enum(["project", "thread"]);
/**
 * How a stdio server's callers share its process: `shared` (one child for every caller) or
 * `per_caller` (one child per caller principal — `user:<sub>`, `key:<id>`, `admin` — each under its
 * own uid, HOME, TMPDIR and secret file). A thread-scoped server's instances stay one per thread.
 */
export const Isolation = z.enum(["shared", "per_caller"]).meta({
  description:
    "`shared`: one child for every caller; `per_caller`: one child per caller principal (user, key or admin), spawned when it first calls and reaped when idle",
});
export type Isolation = z.infer<typeof Isolation>;
/** How long a call may take, in whole seconds: 1 to 900 (15 minutes). */
export const TimeoutSeconds = z
  .number({ error: "must be a number of seconds" })
  .int("must be a whole number of seconds")
  .min(1, "must be at least 1 second")
  .max(900, "must be at most 900 seconds (15 minutes)");

const common = {
  name: ServerName,
  enabled: z.boolean().default(true),
  timeoutSeconds: TimeoutSeconds.default(30),
  pinning: Pinning.optional(),
};

/** An OAuth scope token (RFC 6749 §3.3). */
const OAuthScope = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,256}$/, "must be an OAuth scope token");

/**
 * A client secret at the upstream's authorization server: sealed with the server's other secrets,
 * shown as `[SECRET]`; an edit that sends that mask back keeps the stored one.
 */
const ClientSecret = z.string().min(1).max(1_024).regex(NO_CR_LF_NUL, "must not contain CR, LF or NUL").meta({
  description:
    "the client's secret (confidential client): the real value on create (a mask is refused); stored sealed, shown as `[SECRET]`; an edit may send the mask back unchanged to keep it",
});
const ClientId = z.string().min(1).max(512).regex(NO_CR_LF_NUL);

/**
 * How the gateway authenticates to an HTTP upstream as an OAuth client (authorization code + PKCE).
 * `shared`: an admin authorizes once (`POST /v1/servers/{id}/authorize`) and every caller uses that
 * connection. `per_user`: each caller (signed-in user, key, or the admin) authorizes their own
 * connection, and their calls carry their own token. The client is registered by CIMD (when the
 * upstream's AS supports it and the gateway's admin URL is https), else by dynamic registration, else
 * `clientId` is used (with `clientSecret` when it is a confidential client).
 */
export const UpstreamOAuth = z
  .strictObject({
    type: z.literal("oauth"),
    mode: z.enum(["shared", "per_user"]).default("shared").meta({
      description:
        "shared: one connection an admin authorizes, used by every caller; per_user: each caller authorizes and uses their own",
    }),
    clientId: ClientId.optional().meta({
      description:
        "a client id registered with the upstream's authorization server beforehand (public client, or confidential with `clientSecret`)",
    }),
    clientSecret: ClientSecret.optional(),
    scopes: z.array(OAuthScope).max(32).optional().meta({
      description: "scopes to ask for (default: what the upstream's 401 or metadata names)",
    }),
  })
  .refine((auth) => !auth.clientSecret || auth.clientId, {
    message: "needs a clientId: a client secret goes with the client it belongs to",
    path: ["clientSecret"],
  })
  .meta({ id: "UpstreamOAuth", dependentRequired: { clientSecret: ["clientId"] } });
export type UpstreamOAuth = z.infer<typeof UpstreamOAuth>;

/**
 * Machine-to-machine access to an HTTP upstream (OAuth client_credentials grant): no user, no
 * authorize step. The worker obtains a token from the upstream's token endpoint — `tokenUrl`, else
 * the one its 401 leads to (protected-resource metadata → authorization server metadata) — and a new
 * one before it expires.
 */
export const UpstreamClientCredentials = z
  .strictObject({
    type: z.literal("client_credentials"),
    clientId: ClientId.meta({
      description: "the client id registered with the upstream's authorization server",
    }),
    clientSecret: ClientSecret,
    scopes: z.array(OAuthScope).max(32).optional().meta({
      description: "scopes to ask for (default: none named; the authorization server decides)",
    }),
    tokenUrl: HttpUrl.optional().meta({
      description: "the token endpoint (default: discovered from the upstream's 401 and its metadata)",
    }),
  })
  .meta({ id: "UpstreamClientCredentials" });
export type UpstreamClientCredentials = z.infer<typeof UpstreamClientCredentials>;

/** How the gateway authenticates to an HTTP upstream: as an OAuth client of a user, or of itself. */
export const UpstreamAuth = z.discriminatedUnion("type", [UpstreamOAuth, UpstreamClientCredentials]);
export type UpstreamAuth = z.infer<typeof UpstreamAuth>;

/** A remote MCP server reached over streamable HTTP (or legacy SSE). */
export const HttpServerSpec = z.strictObject({
  transport: z.literal("http").default("http"),
  ...common,
  url: HttpUrl,
  headers: RealHeaderMap.default({}),
  auth: UpstreamAuth.optional(),
  relaySessionLogs: z.boolean().optional().meta({
    description:
      "relay the log lines the server sends outside any call to every caller listening on /mcp/{server} whose scope holds it (default false): only for servers whose out-of-call logs are about the server, not a caller — every caller in scope hears them",
  }),
});

/** A command-based MCP server spoken to over stdio (run by the stdio runner). */
export const StdioServerSpec = z
  .strictObject({
    transport: z.literal("stdio").default("stdio"),
    ...common,
    command: Command,
    args: Args.default([]),
    env: RealEnvMap.default({}),
    scope: Scope.default("project"),
    isolation: Isolation.default("shared"),
    secretRef: SecretName.optional(),
    secretFormat: SecretFormat.optional(),
    limits: ChildLimits.optional(),
  })
  .refine((spec) => !spec.secretFormat || spec.secretRef, {
    message: "needs a secretRef: the format says how to read that secret",
    path: ["secretFormat"],
  })
  .meta({ dependentRequired: { secretFormat: ["secretRef"] } });

/**
 * What an admin configures for a server; `transport` may be left out when `url` or `command` says it
 * (the document shows it optional: `url` makes it http, `command` stdio).
 */
export const ServerSpec = z.preprocess(
  inferTransport,
  z.discriminatedUnion("transport", [HttpServerSpec, StdioServerSpec]),
);
export type ServerSpec = z.infer<typeof ServerSpec>;

/** A transport kind by name (a PATCH may name one; it must be the stored one). */
export const Transport = z.enum(["http", "stdio"]);
/** The discriminant of {@link ServerSpec}: switch over it with `assertNever` in the default branch. */
export type Transport = ServerSpec["transport"];
/** Compiles only while {@link Transport}'s names are exactly the union's kinds (add a kind to both). */
const transportNamesMatch: [Transport, z.infer<typeof Transport>] extends [
  z.infer<typeof Transport>,
  Transport,
]
  ? true
  : never = true;
void transportNamesMatch;
export type HttpServerSpec = z.infer<typeof HttpServerSpec>;
export type StdioServerSpec = z.infer<typeof StdioServerSpec>;

function inferTransport(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input) || "transport" in input)
    return input;
  if ("command" in input) return { ...input, transport: "stdio" };
  if ("url" in input) return { ...input, transport: "http" };
  return input;
}

/** A spec field as a patch (or a view) carries it: optional, without the default that would fill it in. */
type LooseField<S> =
  S extends z.ZodDefault<infer Inner> ? z.ZodOptional<Inner> : z.ZodOptional<S & z.ZodType>;

/** Every field of a spec shape, loosened ({@link LooseField}): what derives from the spec schemas. */
export function looseFields<Shape extends Record<string, z.ZodType>>(
  shape: Shape,
): { [K in keyof Shape]: LooseField<Shape[K]> } {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => [
      key,
      (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field).optional(),
    ]),
  ) as never;
}

/**
 * Fields a PATCH may carry: every field of either transport's spec (derived from them: a field added
 * to a spec can be patched), all optional, validated again as a whole after merging. What differs
 * from the spec: either transport may be named (it cannot change); header and env maps may keep
 * stored values by their masks; a secret reference may be cleared (`null`); command and args are
 * checked with the merged server.
 */
export const ServerPatch = z.strictObject({
  ...looseFields(HttpServerSpec.shape),
  ...looseFields(StdioServerSpec.shape),
  transport: Transport.optional(),
  headers: HeaderMap.optional(),
  env: EnvMap.optional(),
  command: z.string().meta({ pattern: NOT_BLANK.source, maxLength: 1_024 }).optional(),
  args: z
    .array(z.string().meta({ maxLength: 8_192 }))
    .meta({ maxItems: 256 })
    .optional(),
  secretRef: SecretName.nullable().optional(),
  secretFormat: SecretFormat.nullable().optional(),
  auth: UpstreamAuth.nullable().optional(),
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
  /** Set when the stored config lacks required fields: what is wrong (the server can only be deleted). */
  unreadable?: string;
};

/** A plain stdio server (the runner's view). */
export type PlainStdioServer = Extract<PlainServer, { transport: "stdio" }>;

/** A server's upstream auth (HTTP servers may have one; stdio servers never do), or undefined. */
export function upstreamAuthOf(
  server: DistributiveOmit<ServerSpec, "headers" | "env">,
): UpstreamAuth | undefined {
  switch (server.transport) {
    case "http":
      return server.auth;
    case "stdio":
      return undefined;
    default:
      return assertNever(server);
  }
}

/** The (server, subject) an upstream credential belongs to: one per server in `shared` mode. */
export const SHARED_SUBJECT = "shared";

/** Whether each caller of the server gets a child of their own (a stdio server's `per_caller` isolation). */
export function isPerCaller(server: DistributiveOmit<ServerSpec, "headers" | "env">): boolean {
  return server.transport === "stdio" && server.isolation === "per_caller";
}

/** Whether each caller of the server uses their own upstream credential (`per_user` OAuth). */
export function isPerUser(server: DistributiveOmit<ServerSpec, "headers" | "env">): boolean {
  const auth = upstreamAuthOf(server);
  return auth?.type === "oauth" && auth.mode === "per_user";
}

/**
 * How an upstream credential's binding is compared: an edit that changes it drops the tokens. A client
 * secret counts by its presence here; a new value of it is {@link authSecretReplaced}.
 */
export function upstreamAuthKey(spec: DistributiveOmit<ServerSpec, "headers" | "env">): string {
  const auth = upstreamAuthOf(spec);
  if (!auth) return "";
  return JSON.stringify([
    auth.type,
    "mode" in auth ? auth.mode : "",
    auth.clientId ?? "",
    auth.clientSecret ? "secret" : "",
    auth.type === "client_credentials" ? [auth.tokenUrl ?? "", auth.scopes ?? []] : "",
    "url" in spec ? spec.url : "",
  ]);
}
