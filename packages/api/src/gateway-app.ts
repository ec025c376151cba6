/**
 * The data plane (tools, calls, chats, threads, the MCP endpoints) behind `requireClient`, and the
 * gateway function's app.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_CALLER_LIMITS } from "@mcpgw/aws";
import { observeWarmSessions } from "@mcpgw/telemetry";
import { createGuardedFetch, SessionPool } from "@mcpgw/upstream";
import { type AppDeps, createBaseApp, documentApp } from "./app-base";
import type { AppEnv } from "./env";
import { registerBrowseRoutes } from "./gateway/browse";
import { CallLatency } from "./gateway/call-latency";
import type { GatewayDeps } from "./gateway/deps";
import { Directory, type Snapshot, servingGeneration } from "./gateway/directory";
import { CallerLimits, limitRequests } from "./gateway/limits";
import { registerMcpRoutes } from "./gateway/mcp";
import { ChangeWatcher } from "./gateway/mcp-changes";
import { McpEndpoints } from "./gateway/mcp-endpoint";
import { SessionLogRelay } from "./gateway/mcp-session-logs";
import { ProbeRequests } from "./gateway/probe-requests";
import { registerGatewayRoutes } from "./gateway/routes";
import { SessionWatch } from "./gateway/session-watch";
import { registerThreadRoutes } from "./gateway/threads";
import { registerProtectedResourceRoutes } from "./oauth/resource";
import { registerOAuthRoutes } from "./oauth/routes";
import { requireClient, routeGroup } from "./route-groups";
import { toolsetIndex } from "./toolsets";

/** Mounts the data-plane routes on `app`, each guarded by `requireClient`, with their warm state. */
export function registerGatewayPlane(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const changes = new ChangeWatcher();
  const sessionLogs = new SessionLogRelay(deps.logger);
  const dataPlane = { ...gatewayDeps(deps, changes), sessionLogs };
  const limits =
    deps.limits === false
      ? undefined
      : new CallerLimits(deps.limits ?? DEFAULT_CALLER_LIMITS, deps.store.rateBudget, deps.logger);
  const endpoints = new McpEndpoints(dataPlane, deps.adminToken, deps.logger, limits);
  const probes = new ProbeRequests(dataPlane);
  changes.start(dataPlane, endpoints, probes);
  new SessionWatch(
    dataPlane.pool,
    (serverId) => dataPlane.directory.cached(serverId),
    probes,
    deps.logger,
    deps.gateway?.sessionCheckMs,
  ).start();
  sessionLogs.start(endpoints.services.sessions, (serverId) => {
    const server = dataPlane.directory.cached(serverId)?.server;
    return server?.transport === "http" && server.relaySessionLogs === true;
  });
  const client = limits
    ? routeGroup(requireClient, [429], [limitRequests(limits, dataPlane)])
    : routeGroup(requireClient, []);
  registerGatewayRoutes(client, dataPlane);
  registerBrowseRoutes(client, dataPlane);
  registerThreadRoutes(client, { ...dataPlane, worktreeBase: deps.worktreeBase });
  registerMcpRoutes(client, endpoints, deps.mcp, deps.oauth);
  app.route("/", client);
  // The authorization server lives on the gateway's origin: a resource's PRM must name it there.
  if (deps.oauth) {
    registerOAuthRoutes(app, {
      store: deps.store,
      logger: deps.logger,
      oauth: deps.oauth,
      fetch: createGuardedFetch({ allowPrivate: false }),
      oidc: deps.oidc,
    });
    const { directory } = dataPlane;
    registerProtectedResourceRoutes(
      app,
      deps.oauth.issuer,
      async (name) => Boolean(await directory.named(name)),
      async (name) => Boolean(await toolsetIndex(deps.store).named(name)),
    );
  }
}

/** The gateway function's app: the common base and the data plane alone. */
export function createGatewayApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { app } = createBaseApp(deps);
  registerGatewayPlane(app, deps);
  return documentApp(app);
}

function gatewayDeps(deps: AppDeps, changes: ChangeWatcher): GatewayDeps {
  const pool = deps.gateway?.pool ?? new SessionPool();
  observeWarmSessions(pool);
  // Every refresh lets go of warm sessions of servers deleted, disabled or reconfigured since.
  const retainCurrent = (snapshot: Snapshot) =>
    pool.retain((serverKey, generation) => {
      const entry = snapshot.byId.get(serverKey.split("#")[0] ?? "");
      return entry?.server.enabled === true && servingGeneration(entry) === generation;
    });
  return {
    store: deps.store,
    logger: deps.logger,
    runner: deps.runner,
    directory: deps.gateway?.directory ?? new Directory(deps.store, deps.logger, undefined, retainCurrent),
    pool,
    fetch: deps.gateway?.fetch ?? createGuardedFetch({ allowPrivate: deps.allowPrivateUpstreams }),
    ...(deps.gateway?.heartbeatMs ? { heartbeatMs: deps.gateway.heartbeatMs } : {}),
    ...(deps.maxUpstreamMessageBytes ? { maxMessageBytes: deps.maxUpstreamMessageBytes } : {}),
    changes,
    callLatency: deps.gateway?.callLatency ?? new CallLatency(deps.store, deps.logger),
    publicAdminUrl: deps.publicAdminUrl,
    ...(deps.gateway?.searchModeThreshold === undefined
      ? {}
      : { searchModeThreshold: deps.gateway.searchModeThreshold }),
    pinningDefault: deps.pinningDefault,
    audit: deps.audit,
  };
}
