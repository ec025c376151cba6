/**
 * Everything but tools on a gateway MCP server, forwarded to the upstream it names: resources,
 * resource templates and prompts (one server's on `/mcp/{server}`; all of them, renamed into the
 * gateway's form, on `/mcp`), completions, a 2025 session's log level and resource subscriptions.
 */
import { AppError, isModernRevision } from "@mcpgw/core";
import { ResourceNotFoundError, type ServerContext } from "@modelcontextprotocol/server";
import { forwardToServer } from "./call";
import { inScope, type ServerScope } from "./catalogue";
import { type Directory, type DirectoryEntry, isAvailable } from "./directory";
import { toMcpError } from "./mcp-errors";
import {
  gatewayPromptName,
  gatewayUri,
  gatewayUriTemplate,
  parseGatewayPromptName,
  parseGatewayUri,
} from "./mcp-names";
import { callerOf, forward, forwardOptions, forwardRound, type GatewayServer, paginate } from "./mcp-request";
import { isThreadScoped } from "./thread-access";

/** Pages read from one upstream for an aggregated list (a server that pages forever stops there). */
const MAX_UPSTREAM_PAGES = 20;

/** The lists `/mcp` aggregates besides tools, by the key their items come under. */
export type ListKey = "resources" | "resourceTemplates" | "prompts";

/** Lists of resources, templates or prompts: one server's as it pages them, or all, named for `/mcp`. */
export async function list(
  gateway: GatewayServer,
  method: string,
  key: ListKey,
  cursor: string | undefined,
  ctx: ServerContext,
) {
  const caller = callerOf(ctx);
  if (gateway.endpoint) {
    const entry = await endpointEntry(gateway, gateway.endpoint, caller.scope);
    return forward(gateway, entry, method, cursor ? { cursor } : {}, ctx);
  }
  const capability = key === "prompts" ? "prompts" : "resources";
  const entries = await aggregated(gateway, caller.scope, capability);
  const lists = await Promise.all(
    entries.map(async (entry) => {
      try {
        const items = await allPages(gateway, entry, method, key, ctx);
        return items.map((item) => renamed(entry.server.name, key, item));
      } catch (error) {
        // Best effort, like tools: one failing server never hides the others'.
        gateway.services.deps.logger.warn("aggregated list skipped a server", {
          server: entry.server.name,
          method,
          error: String(error),
        });
        return [];
      }
    }),
  );
  const { page, nextCursor } = paginate(lists.flat(), cursor);
  return { [key]: page, ...(nextCursor ? { nextCursor } : {}) };
}

/** A resource read from its server; on `/mcp` the contents' URIs come back in gateway form. */
export async function readResource(gateway: GatewayServer, uri: string, ctx: ServerContext) {
  // A URI of no server's (not in the gateway's form) is a resource that does not exist here.
  if (!gateway.endpoint && !parseGatewayUri(uri))
    throw new ResourceNotFoundError(uri, `Resource ${uri.slice(0, 200)} not found`);
  const { entry, name } = await target(gateway, uri, parseGatewayUri, ctx);
  const result = (await forwardRound(gateway, entry, "resources/read", { uri: name }, ctx)) as Record<
    string,
    unknown
  >;
  if (gateway.endpoint || !Array.isArray(result.contents)) return result;
  const contents = (result.contents as Array<Record<string, unknown>>).map((content) =>
    typeof content.uri === "string"
      ? { ...content, uri: gatewayUri(entry.server.name, content.uri) }
      : content,
  );
  return { ...result, contents };
}

/** A prompt from the server that offers it, under the server's own name. */
export async function getPrompt(
  gateway: GatewayServer,
  name: string,
  args: Record<string, string> | undefined,
  ctx: ServerContext,
) {
  const { entry, name: own } = await target(gateway, name, parsePromptTarget, ctx);
  return forwardRound(
    gateway,
    entry,
    "prompts/get",
    { name: own, ...(args ? { arguments: args } : {}) },
    ctx,
  );
}

/** Completions go to the server whose prompt or resource template they complete. */
export async function complete(gateway: GatewayServer, params: Record<string, unknown>, ctx: ServerContext) {
  const ref = (params.ref ?? {}) as { type?: string; name?: string; uri?: string };
  if (gateway.endpoint) {
    const entry = await endpointEntry(gateway, gateway.endpoint, callerOf(ctx).scope);
    return forward(gateway, entry, "completion/complete", params, ctx);
  }
  if (ref.type === "ref/prompt" && typeof ref.name === "string") {
    const { entry, name } = await target(gateway, ref.name, parsePromptTarget, ctx);
    return forward(gateway, entry, "completion/complete", { ...params, ref: { ...ref, name } }, ctx);
  }
  if (ref.type === "ref/resource" && typeof ref.uri === "string") {
    const { entry, name } = await target(gateway, ref.uri, parseGatewayUri, ctx);
    return forward(gateway, entry, "completion/complete", { ...params, ref: { ...ref, uri: name } }, ctx);
  }
  throw toMcpError(
    new AppError("request.invalid", "completion/complete needs a ref/prompt or ref/resource reference."),
  );
}

/** A 2025 client's log level: kept for its session, and (on `/mcp/{server}`) passed to the upstream. */
export async function setLevel(gateway: GatewayServer, level: string, ctx: ServerContext) {
  const session = gateway.services.sessions.byServer(gateway.server);
  if (session) session.logLevel = level;
  if (gateway.endpoint) {
    const entry = await endpointEntry(gateway, gateway.endpoint, callerOf(ctx).scope);
    await forwardToServer(
      gateway.services.deps,
      entry,
      "logging/setLevel",
      { level },
      { ...forwardOptions(gateway, ctx), authorize: false },
    ).catch(() => undefined);
  }
  return {};
}

/** A 2025 client's resource subscription: kept for its session and passed to the upstream. */
export async function subscribe(
  gateway: GatewayServer,
  method: "resources/subscribe" | "resources/unsubscribe",
  uri: string,
  ctx: ServerContext,
) {
  const { entry, name } = await target(gateway, uri, parseGatewayUri, ctx);
  const session = gateway.services.sessions.byServer(gateway.server);
  if (method === "resources/subscribe") session?.subscriptions.add(uri);
  else session?.subscriptions.delete(uri);
  // A 2026 upstream has no resources/subscribe (its listen stream carries updates): kept here only,
  // unless it speaks 2025 too (its 2025 surface's subscriptions are made over its 2025 session).
  const surface = entry.profile?.legacy ?? entry.profile;
  const upstream = surface?.capabilities?.resources as { subscribe?: boolean } | undefined;
  if (upstream?.subscribe && speaksLegacy(entry))
    await forwardToServer(
      gateway.services.deps,
      entry,
      method,
      { uri: name },
      { ...forwardOptions(gateway, ctx), authorize: false },
    );
  return {};
}

/** A gateway prompt name as a {@link target} parse: the server and its own name for the prompt. */
function parsePromptTarget(gatewayName: string): { server: string; uri: string } | undefined {
  const parsed = parseGatewayPromptName(gatewayName);
  return parsed ? { server: parsed.server, uri: parsed.name } : undefined;
}

/** The server a gateway name (prompt name, resource URI) points at, and the server's own name for it. */
async function target(
  gateway: GatewayServer,
  gatewayName: string,
  parse: (name: string) => { server: string; uri: string } | undefined,
  ctx: ServerContext,
): Promise<{ entry: DirectoryEntry; name: string }> {
  const { scope } = callerOf(ctx);
  if (gateway.endpoint)
    return { entry: await endpointEntry(gateway, gateway.endpoint, scope), name: gatewayName };
  const parsed = parse(gatewayName);
  if (!parsed) {
    throw toMcpError(
      new AppError(
        "request.invalid",
        `'${gatewayName.slice(0, 200)}' names no server's prompt or resource on /mcp.`,
      ),
    );
  }
  return { entry: await endpointEntry(gateway, parsed.server, scope), name: parsed.uri };
}

/** A connected server in the caller's scope, by name, as an MCP error when it is not. */
function endpointEntry(gateway: GatewayServer, name: string, scope: ServerScope): Promise<DirectoryEntry> {
  return availableEntry(gateway.services.deps.directory, name, scope).catch((error: unknown) => {
    throw error instanceof AppError ? toMcpError(error) : error;
  });
}

/**
 * A connected server in the caller's scope, by name: else 404 `server.not_found` (out of scope is
 * unknown) or 409 `server.unavailable` (disabled, connecting, failed). For `/mcp/{server}`'s forwarded
 * requests and the REST browse lists alike.
 */
export async function availableEntry(
  directory: Pick<Directory, "named">,
  name: string,
  scope: ServerScope,
): Promise<DirectoryEntry> {
  const entry = await directory.named(name);
  if (!entry || !inScope(scope, entry.server.id))
    throw new AppError("server.not_found", `No server named '${name}'.`);
  if (!isAvailable(entry)) {
    throw new AppError(
      "server.unavailable",
      `Server '${name}' is ${entry.server.enabled ? (entry.status?.state ?? "connecting") : "disabled"}.`,
    );
  }
  return entry;
}

/** The servers `/mcp` aggregates a capability of: connected, in scope, not thread-scoped. */
async function aggregated(
  gateway: GatewayServer,
  scope: ServerScope,
  capability: "resources" | "prompts",
): Promise<DirectoryEntry[]> {
  const snapshot = await gateway.services.deps.directory.snapshot();
  return [...snapshot.byName.values()]
    .filter((entry) => isAvailable(entry) && inScope(scope, entry.server.id) && !isThreadScoped(entry))
    .filter((entry) => !entry.profile || entry.profile.capabilities?.[capability] !== undefined)
    .sort((a, b) => (a.server.name < b.server.name ? -1 : 1));
}

/** Every item of one upstream's list, page after page (up to {@link MAX_UPSTREAM_PAGES}). */
async function allPages(
  gateway: GatewayServer,
  entry: DirectoryEntry,
  method: string,
  key: ListKey,
  ctx: ServerContext,
) {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_UPSTREAM_PAGES; pages++) {
    const page = await forwardToServer(gateway.services.deps, entry, method, cursor ? { cursor } : {}, {
      ...forwardOptions(gateway, ctx),
      authorize: false,
    });
    items.push(...((page[key] as Array<Record<string, unknown>> | undefined) ?? []));
    cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    if (!cursor) break;
  }
  return items;
}

/** A list item of one server as `/mcp` shows it: prompt names and resource URIs in gateway form. */
function renamed(server: string, key: ListKey, item: Record<string, unknown>): Record<string, unknown> {
  if (key === "prompts" && typeof item.name === "string")
    return { ...item, name: gatewayPromptName(server, item.name) };
  if (key === "resources" && typeof item.uri === "string")
    return { ...item, uri: gatewayUri(server, item.uri) };
  if (key === "resourceTemplates" && typeof item.uriTemplate === "string")
    return { ...item, uriTemplate: gatewayUriTemplate(server, item.uriTemplate) };
  return item;
}

/** True for a server whose last probe spoke a 2025 revision, in either era (or that has no recorded profile yet). */
function speaksLegacy(entry: DirectoryEntry): boolean {
  const { profile } = entry;
  return !profile || profile.legacy !== undefined || !isModernRevision(profile.protocolVersion);
}
