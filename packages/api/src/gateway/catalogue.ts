import { AppError, parseQualifiedName, servingOlder, type ToolInfo } from "@mcpgw/core";
import type { CallNote } from "./call-audit";
import type { GatewayDeps } from "./deps";
import { type DirectoryEntry, isAvailable } from "./directory";
import { isThreadScoped } from "./thread-access";
import { enforce, type ToolGate } from "./tool-access";

/** A tool in the aggregated catalogue. */
export interface CatalogTool {
  name: string;
  server: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** The upstream's own name for the tool (what `/mcp/{server}` shows). */
  upstreamName: string;
  title?: string;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The upstream's definition, whole (`_meta`, `icons` and all): what the MCP endpoints list. */
  definition: ToolInfo;
}

/** Which servers a caller may use: every one (`null`) or these ids (a rename keeps them). */
export type ServerScope = ReadonlySet<string> | null;

/**
 * Every tool of every enabled, connected server the caller may use, sorted by qualified name;
 * servers the chat switched off are left out. Best effort: one broken server never hides the rest.
 * With a `gate`, it decides tool by tool instead of `scope` (a tool it refuses is left out).
 */
export async function listTools(
  deps: Pick<GatewayDeps, "directory" | "store">,
  options: { chat?: string; scope?: ServerScope; thread?: string; gate?: ToolGate | undefined } = {},
): Promise<CatalogTool[]> {
  const { gate } = options;
  const [snapshot, hidden, threadServers] = await Promise.all([
    deps.directory.snapshot(),
    hiddenServers(deps, options.chat),
    options.thread ? threadServerIds(deps, options.thread) : new Set<string>(),
  ]);
  const tools: CatalogTool[] = [];
  for (const entry of snapshot.byName.values()) {
    if (
      !isAvailable(entry) ||
      hidden.has(entry.server.id) ||
      (!gate && !inScope(options.scope, entry.server.id))
    )
      continue;
    // A thread-scoped server's tools belong to the threads that started an instance of it.
    if (isThreadScoped(entry) && !threadServers.has(entry.server.id)) continue;
    for (const [name, tool] of entry.tools)
      if (!gate || gate(entry, name, tool).ok) tools.push(catalogTool(name, entry.server.name, tool));
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A catalogue tool as the REST routes show it: `{name, server, description?, inputSchema}`. */
export function restTool({ name, server, description, inputSchema }: CatalogTool) {
  return { name, server, ...(description ? { description } : {}), inputSchema };
}

function catalogTool(name: string, server: string, tool: ToolInfo): CatalogTool {
  return {
    name,
    server,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    upstreamName: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    definition: tool,
  };
}

/**
 * Resolves `<server>__<tool>` to a server that may take the call, and the upstream's own tool name.
 * With a `gate`, it decides instead of `scope`: a server it hides is `server.not_found`, a tool it
 * refuses `tool.forbidden`. A `note` gets the server's id as soon as the server is found, so a refusal
 * after that (unavailable, no such tool, a policy's) is audited under it.
 */
export async function resolveTool(
  deps: GatewayDeps,
  qualified: string,
  options: { chat?: string; scope?: ServerScope; gate?: ToolGate | undefined; note?: CallNote } = {},
): Promise<{ entry: DirectoryEntry; tool: ToolInfo }> {
  const { server } = parseQualifiedName(qualified);
  // A server created, enabled or connected a moment ago may be newer than the cached view: looked up
  // again, within the staleness bound however much changed (see Directory.entry). So may the switch of
  // one whose older generation serves while a new one connects.
  const [entry, hidden] = await Promise.all([
    deps.directory.entry(
      server,
      (known) => isAvailable(known) && known.tools.has(qualified) && servingOlder(known.status) === undefined,
    ),
    hiddenServers(deps, options.chat),
  ]);
  if (entry && options.note) options.note.serverId = entry.server.id;
  if (!entry || (!options.gate && !inScope(options.scope, entry.server.id)))
    throw new AppError("server.not_found", `No server named '${server}'.`);
  if (options.gate) {
    // A tool the server lacks on a server the caller cannot reach is that server's absence too.
    const known = entry.tools.get(qualified);
    const decision = options.gate(entry, qualified, known ?? { name: qualified, inputSchema: {} });
    if (known || (!decision.ok && decision.code === "server.not_found")) enforce(decision);
  }
  if (hidden.has(entry.server.id)) {
    throw new AppError(
      "server.unavailable",
      `Server '${server}' is switched off for chat '${options.chat}'.`,
    );
  }
  if (!isAvailable(entry)) {
    const state = entry.server.enabled ? (entry.status?.state ?? "connecting") : "disabled";
    throw new AppError("server.unavailable", `Server '${server}' is ${state}.`, { state });
  }
  const tool = entry.tools.get(qualified);
  if (!tool) throw new AppError("tool.not_found", `Server '${server}' has no tool '${qualified}'.`);
  if (entry.drifted?.has(qualified)) {
    throw new AppError(
      "tool.definition_changed",
      `The upstream changed the definition of tool '${qualified}'; an admin must approve the change (GET /v1/servers/{id}/changes) before it is called.`,
      { tool: qualified },
    );
  }
  return { entry, tool };
}

async function threadServerIds(deps: Pick<GatewayDeps, "store">, thread: string): Promise<Set<string>> {
  return new Set((await deps.store.threads.list(thread)).map((instance) => instance.serverId));
}
/** True when the scope lets the caller use the server with this id. */
export function inScope(scope: ServerScope | undefined, serverId: string): boolean {
  return !scope || scope.has(serverId);
}

/** Ids of servers the chat switched off (a preference, not a boundary). */
function hiddenServers(deps: Pick<GatewayDeps, "directory">, chat: string | undefined): Promise<Set<string>> {
  return chat ? deps.directory.chatOff(chat) : Promise.resolve(new Set());
}
