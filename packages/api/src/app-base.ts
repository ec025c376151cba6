/**
 * What every plane's app is made of — errors as problems, request ids, the access log, the body
 * limit, health, authentication and the OpenAPI document — with no plane's routes: the admin and
 * gateway Lambdas each add their own plane to it, so each bundle holds only its own.
 */
import { swaggerUI } from "@hono/swagger-ui";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { CallerLimitSettings, ConsoleAdminSettings, Store } from "@mcpgw/aws";
import type { AuditLog, Logger, Pinning } from "@mcpgw/core";
import { PROMETHEUS_CONTENT_TYPE, traceRequests } from "@mcpgw/telemetry";
import type { RunnerRoute } from "@mcpgw/upstream";
import { requestId } from "hono/request-id";
import { auditHealthOf } from "./audit-writer";
import { authenticate, KeyIndex, TOKEN_FAILURES } from "./auth";
import { lazyBodyLimit } from "./body-limit";
import type { ConsoleAssets } from "./console/assets";
import { ConsoleSessions } from "./console/session";
import type { AppEnv } from "./env";
import type { GatewayDeps } from "./gateway/deps";
import { Readiness, type ReadinessOptions, registerHealthRoutes } from "./health";
import { unmatchedRequests } from "./method-not-allowed";
import { ProtectedResource } from "./oauth/resource";
import type { OAuthOptions } from "./oauth/routes";
import { type OidcClient, providerRules } from "./oidc/provider";
import { type McpOriginPolicy, originGuard } from "./origin-guard";
import { onError, problemOf } from "./problem";
import { validationHook } from "./route-groups";
import { SourceThrottle, type ThrottleRule } from "./throttle";

/** Everything the HTTP app needs from its surroundings. */
export interface AppDeps {
  store: Store;
  logger: Logger;
  adminToken: string;
  allowPrivateUpstreams: boolean;
  /** The pinning of servers that set none (PINNING_DEFAULT; default `approve`). */
  pinningDefault?: Pinning | undefined;
  /** How to reach the stdio runner, when there is one. */
  runner?: RunnerRoute | undefined;
  /** When set, thread worktree roots must be this absolute path or under it (WORKTREE_BASE). */
  worktreeBase?: string | undefined;
  /** Origin/Host checks of the MCP endpoints (DNS-rebinding protection). */
  mcp?: McpOriginPolicy;
  /** Which planes `createApp` serves (both by default); each Lambda builds the app of its own. */
  serve?: { admin?: boolean; gateway?: boolean };
  /** The largest message an upstream may send (MAX_UPSTREAM_MESSAGE_BYTES; default 16 MiB). */
  maxUpstreamMessageBytes?: number;
  /**
   * What `/readyz` checks besides the table, queue and key: `runner: true` adds the stdio runner
   * (`npm run dev`, where it runs in the same process); cache and timeout overrides for tests.
   */
  readiness?: Omit<ReadinessOptions, "runner"> & { runner?: boolean };
  /** The admin console's built files, served at `/` by the admin plane (none: the API alone). */
  console?: ConsoleAssets | undefined;
  /**
   * The gateway function's URL, where the admin function (serving the admin plane alone) forwards the
   * console's tool catalogue and calls (GATEWAY_URL; deployed only).
   */
  gatewayUrl?: string | undefined;
  /**
   * The admin function's public URL (PUBLIC_ADMIN_URL): where upstream authorization servers send the
   * browser back (`/oauth/upstream/callback`) and where the gateway's client metadata document is.
   */
  publicAdminUrl?: string | undefined;
  /**
   * OAuth (OAUTH_ISSUER): the authorization server (issuer, token signer, development sign-in), and the
   * MCP endpoints then take its access tokens too. Absent: OAuth is off and the MCP endpoints take the
   * admin token and API keys only.
   */
  oauth?: OAuthOptions | undefined;
  /**
   * The OpenID provider people sign in with (OIDC_ISSUER): at the authorization server (instead of the
   * development sign-in) and, for admins, at the console.
   */
  oidc?: OidcClient | undefined;
  /** Who may sign in to the console through `oidc` (CONSOLE_ADMIN_GROUP, CONSOLE_ADMINS); none when absent. */
  consoleAdmins?: ConsoleAdminSettings | undefined;
  /** Wrong tokens one source may present (default TOKEN_FAILURES: 20 a minute); tests that fuzz auth raise it. */
  tokenFailures?: ThrottleRule | undefined;
  /**
   * Each caller's limits on the data plane (CALLER_*; DEFAULT_CALLER_LIMITS when absent); `false`: no
   * limiter in the path at all (the bench's baseline).
   */
  limits?: CallerLimitSettings | false;
  /** Where tool calls and admin changes are recorded (none: no audit trail); see `createAuditWriter`. */
  audit?: AuditLog | undefined;
  /** AUDIT_RETENTION_DAYS: how long events are kept, and how far back `GET /v1/audit` reads (default 30). */
  auditRetentionDays?: number | undefined;
  /** The most bytes one `GET /v1/audit/export` streams (default 4 MiB; a test's smaller). */
  auditExportMaxBytes?: number | undefined;
  /**
   * The process's metrics as Prometheus text, served at `GET /metrics` without a token: `npm run dev`
   * only (it listens on 127.0.0.1); never given on Lambda.
   */
  metricsText?: (() => Promise<string>) | undefined;
  /**
   * Data-plane parts, made here unless given (tests inject their own; `callLatency` too, to flush it
   * sooner or to close it where the process has a close hook).
   */
  gateway?: Partial<
    Pick<GatewayDeps, "directory" | "pool" | "fetch" | "heartbeatMs" | "callLatency" | "searchModeThreshold">
  > & {
    /** How long a warm session may stay quiet before the gateway pings it (default 4 s; session-watch.ts). */
    sessionCheckMs?: number;
  };
}

/** The largest request body accepted. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * An app with no plane yet, the key index its planes share (key changes reach it at once) and the
 * console's sessions.
 */
export interface BaseApp {
  app: OpenAPIHono<AppEnv>;
  keyIndex: KeyIndex;
  consoleSessions: ConsoleSessions;
  /** Failed tokens per source (see `authenticate`), shared by every route that checks the admin token. */
  tokenFailures: SourceThrottle;
}

/** The common base of every plane's app: add planes to `app`, then {@link documentApp}. */
export function createBaseApp(deps: AppDeps): BaseApp {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.onError((error, c) => onError(error, c, deps.store.outages));
  app.notFound(unmatchedRequests(app));

  app.use(traceRequests());
  app.use(requestId());
  app.use(async function closeUnreadBodies(c, next) {
    await next();
    // Refused without reading the request body (401, 413, 404…): close the connection, or a keep-alive
    // client may send its next request into the unread rest of this one (seen with Node's fetch).
    if (c.res.status >= 400 && c.req.raw.body && !c.req.raw.bodyUsed)
      c.res.headers.set("connection", "close");
  });
  app.use(async function accessLog(c, next) {
    const started = performance.now();
    const logger = deps.logger.child({ requestId: c.get("requestId") });
    c.set("logger", logger);
    await next();
    logger.info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  const bodyLimit = lazyBodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => problemOf(c, "request.too_large", `The request body exceeds ${MAX_BODY_BYTES} bytes.`),
  });
  app.use("/v1/*", bodyLimit);
  app.use("/console/*", bodyLimit);

  const { runner: checkRunner, ...readinessOptions } = deps.readiness ?? {};
  const readiness = new Readiness(deps.store, deps.logger, {
    ...readinessOptions,
    audit: () => auditHealthOf(deps.audit),
    ...(checkRunner ? { runner: deps.runner } : {}),
  });
  registerHealthRoutes(app, readiness);
  const { metricsText } = deps;
  // No token: Prometheus scrapers send none. Given only by `npm run dev`, which listens on 127.0.0.1;
  // a browser page cannot read it through DNS rebinding (loopback Host, and Origin when one is sent).
  if (metricsText)
    app.get("/metrics", originGuard({ ...deps.mcp, loopbackOnly: true }), async (c) =>
      c.text(await metricsText(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE }),
    );
  const keyIndex = new KeyIndex(deps.store.keys);
  const consoleSessions = new ConsoleSessions(
    deps.store.consoleSessions,
    deps.adminToken,
    deps.oidc && deps.consoleAdmins ? providerRules(deps.consoleAdmins) : [],
  );
  const tokenFailures = new SourceThrottle(deps.tokenFailures ?? TOKEN_FAILURES);
  const verifyKey = (token: string) => keyIndex.verify(token);
  // The REST API (and signing everyone out) also takes the console's session cookie; the MCP endpoints
  // take bearer tokens only.
  const bearerOrCookie = authenticate({
    adminToken: deps.adminToken,
    verifyKey,
    consoleSession: (c) => consoleSessions.authenticates(c),
    failures: tokenFailures,
  });
  app.use("/v1/*", bearerOrCookie);
  app.use("/console/sessions", bearerOrCookie);
  const bearerOnly = authenticate({
    adminToken: deps.adminToken,
    verifyKey,
    protectedResource: deps.oauth ? new ProtectedResource(deps.oauth) : undefined,
    failures: tokenFailures,
  });
  app.use("/mcp", bearerOnly);
  app.use("/mcp/*", bearerOnly);
  return { app, keyIndex, consoleSessions, tokenFailures };
}

/** The OpenAPI document of what `app` serves, and its docs page. */
export function documentApp(app: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "The admin token (every route) or a client API key (data plane only)",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "MCP Gateway",
      version: "1.0.0",
      description: "Register MCP servers, watch their status, and call their tools through one front door.",
    },
  });
  app.get("/docs", swaggerUI({ url: "/openapi.json" }));
  return app;
}
