import { z } from "@hono/zod-openapi";
import {
  assertNever,
  effectivePinning,
  HttpServerSpec,
  initialStatus,
  LatencyPoint,
  looseFields,
  Pinning,
  type PlainServer,
  Scope,
  ServerStatus,
  StdioServerSpec,
  type StoredStatus,
  Transport,
  UNREADABLE_SECRETS,
  visibleNextAttempt,
} from "@mcpgw/core";

/**
 * A server as the API shows it: the fields of its spec (derived from the spec schemas: a field added
 * to a spec shows here), every header and env value masked, its identity, version and live status.
 */
export const ServerView = z
  .object({
    ...looseFields(HttpServerSpec.shape),
    ...looseFields(StdioServerSpec.shape),
    id: z.string(),
    name: z.string(),
    transport: Transport,
    enabled: z.boolean(),
    timeoutSeconds: z.number().int(),
    scope: Scope,
    pinning: Pinning,
    headers: z
      .record(z.string(), z.string())
      .optional()
      .openapi({
        description:
          "every value masked: Authorization as `<scheme> [SECRET]`, others `[SECRET]`; " +
          "send a mask back unchanged to keep the stored value",
      }),
    env: z
      .record(z.string(), z.string())
      .optional()
      .openapi({
        description:
          "every value masked as `[SECRET]` (`GET /v1/servers/{id}?reveal=env` shows them); " +
          "send a mask back unchanged to keep the stored value",
      }),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    status: ServerStatus.required({ nextAttemptAt: true, pendingChanges: true }),
  })
  .openapi("Server");
export type ServerView = z.infer<typeof ServerView>;

/**
 * The status a server whose stored values cannot be used shows, whatever was stored before: its
 * sealed values cannot be opened ({@link UNREADABLE_SECRETS}), or its config is unreadable.
 */
function unreadable(status: ServerView["status"], sentence = UNREADABLE_SECRETS): ServerView["status"] {
  return {
    ...status,
    state: "failed",
    reason: "failed",
    error: sentence,
    lastError: sentence,
    toolCount: 0,
  };
}

/**
 * The view of a stored server and its status (generation stays internal), from its masked secrets —
 * no KMS call. `revealedEnv` shows a stdio server's env values in the clear (the admin edit form);
 * `pinningDefault` is the pinning shown for a server that sets none (PINNING_DEFAULT; `approve`).
 */
export function toServerView(
  server: PlainServer,
  status: StoredStatus | undefined,
  {
    revealedEnv,
    pinningDefault = "approve",
  }: { revealedEnv?: Record<string, string>; pinningDefault?: Pinning | undefined } = {},
): ServerView {
  const {
    generation: _generation,
    supersededAt: _supersededAt,
    toolsListedAt: _listedAt,
    profileDigest: _digest,
    servingGeneration: _serving,
    servingSince: _servingSince,
    failureCount: _failures,
    ...kept
  } = status ?? { ...initialStatus(server.enabled), generation: 0, supersededAt: null };
  const stored = {
    ...kept,
    nextAttemptAt: visibleNextAttempt(kept),
    pendingChanges: kept.pendingChanges ?? 0,
  };
  const visible = server.unreadable
    ? unreadable(stored, server.unreadable)
    : server.sealIntact
      ? stored
      : unreadable(stored);
  // Every stored spec field as it is (a new field shows without an edit here); secrets as masks.
  const { masked = {}, sealIntact: _intact, unreadable: _unreadable, ...spec } = server;
  const pinning = effectivePinning(spec, pinningDefault);
  switch (spec.transport) {
    case "http":
      return {
        ...spec,
        pinning,
        relaySessionLogs: spec.relaySessionLogs ?? false,
        headers: masked,
        scope: "project",
        status: visible,
      };
    case "stdio":
      // A server stored before isolation existed is shared.
      return {
        ...spec,
        pinning,
        isolation: spec.isolation ?? "shared",
        env: revealedEnv ?? masked,
        status: visible,
      };
    default:
      return assertNever(spec);
  }
}

export const ServerList = z
  .object({
    servers: z.array(ServerView),
    nextCursor: z.string().optional().openapi({
      description: "Pass as `cursor` for the next page; absent on the last page",
    }),
  })
  .openapi("ServerList");

export const ToolView = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
  })
  .openapi("Tool");
export const ToolList = z.object({ tools: z.array(ToolView) }).openapi("ToolList");

export const ImportResult = z
  .object({ servers: z.array(ServerView), skipped: z.array(z.string()) })
  .openapi("ImportResult");

/** A point of a server's latency history as the API shows it: as stored, its time in ISO 8601. */
export const LatencyPointView = LatencyPoint.extend({
  at: z.string().openapi({
    description: "when the probe started, or when the calls' 10 s slot began (ISO 8601)",
  }),
}).openapi("LatencyPoint");
export type LatencyPointView = z.infer<typeof LatencyPointView>;

export const LatencyHistoryView = z
  .object({
    points: z.array(LatencyPointView).openapi({
      description:
        "oldest first: probes of the last 2 h (one a minute at most), calls of the last 20 min (one point per 10 s)",
    }),
  })
  .openapi("LatencyHistory");

/** The figures of one bucket or of the whole window (`GET /v1/audit/stats`). */
const AuditStatsFigures = {
  calls: z.number().int().nonnegative().openapi({ description: "Tool calls that ended in it" }),
  errors: z.number().int().nonnegative().openapi({
    description:
      "Calls that did not end `ok` or `input_required`: tool errors and the gateway's or upstream's error codes",
  }),
  toolErrors: z
    .number()
    .int()
    .nonnegative()
    .openapi({ description: "Of the errors, those the tool answered (`tool_error`, an `isError` result)" }),
  p50Ms: z.number().nullable().openapi({ description: "Median duration (nearest rank); null without calls" }),
  p95Ms: z
    .number()
    .nullable()
    .openapi({ description: "95th percentile duration (nearest rank); null without calls" }),
};

export const AuditStatsView = z
  .object({
    window: z.enum(["hour", "day"]),
    bucketMs: z.number().int().openapi({ description: "60000 (hour) or 1800000 (day)" }),
    buckets: z
      .array(
        z.object({
          at: z.string().openapi({ description: "The bucket's start (ISO 8601)" }),
          ...AuditStatsFigures,
        }),
      )
      .openapi({ description: "Oldest first; the last one holds now" }),
    totals: z.object({
      ...AuditStatsFigures,
      errorRate: z.number().openapi({ description: "errors / calls (0 without calls)" }),
    }),
    partial: z.boolean().openapi({
      description: "The read stopped at its bound (20,000 events or 5 s) before the window's start",
    }),
  })
  .openapi("AuditStats");

/** What an import would do (`?dryRun=true`): server names, each list sorted. */
export const ImportPreview = z
  .object({
    created: z.array(z.string()).openapi({ description: "Servers the import would create" }),
    replaced: z
      .array(z.string())
      .openapi({ description: "Existing servers it would overwrite (`onConflict=replace`)" }),
    skipped: z
      .array(z.string())
      .openapi({ description: "Existing servers it would leave (`onConflict=skip`)" }),
  })
  .openapi("ImportPreview");

export const SecretSummaryView = z
  .object({ name: z.string(), keys: z.array(z.string()), updatedAt: z.string() })
  .openapi("SecretSummary");

/** The console's session: the CSRF token it sends with every state change, and when the session ends. */
export const ConsoleSession = z
  .object({
    csrfToken: z.string().openapi({ description: "Send as X-CSRF-Token with every state change" }),
    expiresAt: z.string(),
    gatewayUrl: z.string().openapi({
      description:
        "Where MCP clients reach the gateway (its origin): `<gatewayUrl>/mcp`, `<gatewayUrl>/mcp/{server}`",
    }),
  })
  .openapi("ConsoleSession");

/** How an admin may sign in to the console: the OpenID provider's button, when there is one. */
export const ConsoleSignInOptions = z
  .object({
    provider: z
      .object({
        name: z.string().openapi({ description: "What the button says: Sign in with <name>" }),
        url: z.string().openapi({ description: "Where the button goes (a browser navigation)" }),
      })
      .nullable()
      .openapi({ description: "The OpenID provider admins may sign in with; null: the admin token only" }),
  })
  .openapi("ConsoleSignInOptions");

/** A client API key as listed (never its material). `servers: null` = every server. */
/** A key's own call limits, each over the global one (CALLER_RATE_LIMIT, …); what is omitted is global. */
export const KeyRateLimitView = z
  .strictObject({
    perMinute: z.number().int().min(1).max(1_000_000).optional().openapi({ description: "Calls per minute" }),
    burst: z.number().int().min(1).max(100_000).optional().openapi({
      description: "Calls at once after a pause (the bucket's size; at most perMinute)",
    }),
    concurrent: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .openapi({ description: "Calls in flight at once" }),
  })
  .openapi("KeyRateLimit", { example: { perMinute: 600, burst: 60, concurrent: 16 } });

export const ApiKeyView = z
  .object({
    id: z.string(),
    name: z.string(),
    servers: z.array(z.string()).nullable().openapi({
      description:
        "Current names of the servers the key may use (deleted servers left out); null = every enabled server",
    }),
    serverIds: z.array(z.string()).nullable().openapi({
      description:
        "Ids of the servers the key may use: a renamed server keeps its keys, a new server with an old name gets none",
    }),
    rateLimit: KeyRateLimitView.nullable().openapi({
      description: "The key's own call limits over the global ones; null = the global limits",
    }),
    owner: z.string().nullable().openapi({
      description:
        "Who the key belongs to (`user:<name>` / `group:<name>`): who signs in to open its per_user authorization links; null = no owner (it cannot authorize a per_user server)",
    }),
    toolsets: z.array(z.string()).openapi({ description: "Tool sets the key may use besides its servers" }),
    toolPolicy: z.record(z.string(), z.unknown()).nullable().openapi({
      description: "What narrows the key's tools (`allow`, `refuse`, `except`); null = nothing",
    }),
    createdAt: z.string(),
  })
  .openapi("ApiKey");

/** The answer to creating a key: the only time its material is shown. */
export const NewApiKeyView = ApiKeyView.extend({
  key: z.string().openapi({ description: "Shown once; only its hash is stored" }),
}).openapi("NewApiKey");

export const ApiKeyList = z.object({ keys: z.array(ApiKeyView) });

/** Who may reach which servers by OAuth sign-in: a user's or group's mapping. */
export const AccessMappingView = z
  .object({
    subject: z.string().openapi({ example: "group:engineering" }),
    servers: z.array(z.string()).nullable().openapi({
      description: "Current names of the mapped servers (deleted ones left out); null = every server",
    }),
    serverIds: z
      .array(z.string())
      .nullable()
      .openapi({ description: "Ids of the mapped servers; null = every server" }),
    toolsets: z
      .array(z.string())
      .openapi({ description: "Tool sets the subject may use besides its servers" }),
    toolPolicy: z.record(z.string(), z.unknown()).nullable().openapi({
      description: "What narrows the subject's tools; null = nothing",
    }),
    updatedAt: z.string(),
  })
  .openapi("AccessMapping");

export const AccessMappingList = z.object({ access: z.array(AccessMappingView) });

/** A tool of the aggregated catalogue, as the REST routes show it. */
export const CatalogToolView = z
  .object({
    name: z.string().openapi({ example: "github__search_issues" }),
    server: z.string(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
  })
  .openapi("CatalogTool");

export const CatalogToolList = z.object({ tools: z.array(CatalogToolView) });

/** What `POST /v1/tools/{name}/call` answers. */
export const CallResultView = z
  .object({
    content: z.array(z.unknown()),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
    text: z.string().openapi({ description: "The text parts of `content`, joined by newlines" }),
    isError: z.boolean(),
  })
  .openapi("ToolCallResult");

/** Whether one chat shows one server's tools. */
export const ChatToggleView = z
  .object({ id: z.string(), name: z.string(), enabled: z.boolean() })
  .openapi("ChatServerToggle");

export const ChatToggleList = z.object({ servers: z.array(ChatToggleView) });

/** One registered instance of a thread-scoped server in a thread. */
export const ThreadRegistrationView = z
  .object({
    threadId: z.string(),
    serverId: z.string(),
    server: z.string(),
    worktreeRoot: z.string(),
    createdAt: z.string(),
  })
  .openapi("ThreadRegistration");

/** An instance as starting it answers: its registration and the runner's pid. */
export const ThreadInstanceView = ThreadRegistrationView.extend({ pid: z.number().int().nullable() }).openapi(
  "ThreadInstance",
);

const Owner = z.string().openapi({ description: "Who started the thread: `admin`, or the client key's id" });

/** A thread as `GET /v1/threads/{id}` shows it. */
export const ThreadView = z
  .object({ id: z.string(), owner: Owner, createdAt: z.string(), instances: z.array(ThreadRegistrationView) })
  .openapi("Thread");

/** A thread as `GET /v1/threads` lists it. */
export const ThreadSummaryView = z
  .object({
    id: z.string(),
    owner: Owner,
    createdAt: z.string(),
    instances: z
      .array(z.object({ serverId: z.string(), server: z.string() }))
      .openapi({ description: "The servers with an instance registered in the thread" }),
  })
  .openapi("ThreadSummary");

export const ThreadList = z.object({ threads: z.array(ThreadSummaryView) });

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().openapi({ example: "server.not_found" }),
    errors: z
      .array(
        z
          .object({
            field: z.string().openapi({
              description:
                'The field, as a dotted path into the body ("headers.X-Key"); "" for the body as a whole.',
              example: "timeoutSeconds",
            }),
            message: z.string().openapi({
              description: "What is wrong with it, in a sentence written for people.",
              example: "Must be at most 900 seconds (15 minutes).",
            }),
            entry: z
              .string()
              .optional()
              .openapi({ description: "An import's entry (the server's name in the document)." }),
          })
          .passthrough(),
      )
      .optional()
      .openapi({ description: "Each problem with the request's fields, when the refusal is about fields." }),
  })
  .passthrough()
  .openapi("Problem");
