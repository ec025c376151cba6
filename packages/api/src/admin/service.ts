import type { Store } from "@mcpgw/aws";
import {
  AppError,
  applyServerPatch,
  errorFields,
  ifMatchAllows,
  type Job,
  type Logger,
  parseIfMatch,
  parseMcpJson,
  parseServerSpec,
  type ServerPatch,
  type ServerRecord,
  type ServerSpec,
  type StoredStatus,
} from "@mcpgw/core";
import { checkUrl, createRunnerClient, type RunnerEndpoint } from "@mcpgw/upstream";
import { type ServerView, toServerView } from "../views";

/** What the admin operations need. */
export interface AdminDeps {
  store: Store;
  logger: Logger;
  /** Whether upstreams on loopback/private addresses are allowed (on for local runs). */
  allowPrivateUpstreams: boolean;
  /** The stdio runner, told to stop the children of servers that change. */
  runner?: RunnerEndpoint | undefined;
}

export type OnConflict = "fail" | "skip" | "replace";

/** Every server with its status, sorted by name. */
export async function listServers({ store }: AdminDeps): Promise<ServerView[]> {
  const [servers, statuses] = await Promise.all([store.servers.list(), store.statuses.list()]);
  return servers.map((server) => toServerView(server, statuses.get(server.id)));
}

/** What a GET may show in the clear: `env` is a stdio server's env values (for the edit form). */
export type Reveal = "env";

/**
 * One server (by id or name) with its status; 404 when missing. `reveal: "env"` shows a stdio
 * server's env values and logs that it did (key names only); headers stay masked.
 */
export async function getServer(
  { store, logger }: AdminDeps,
  idOrName: string,
  reveal?: Reveal,
): Promise<ServerView> {
  const server = await findServer({ store }, idOrName);
  const revealEnv = reveal === "env" && server.transport === "stdio";
  if (revealEnv) {
    logger.info("server env revealed", {
      serverId: server.id,
      server: server.name,
      keys: Object.keys(server.env),
    });
  }
  return toServerView(server, await store.statuses.get(server.id), { revealEnv });
}

/** Creates a server and enqueues its first connection attempt; never waits on the upstream. */
export async function createServer(deps: AdminDeps, input: unknown): Promise<ServerView> {
  const spec = parseServerSpec(input);
  assertUpstreamAllowed(deps, spec);
  const server = await deps.store.servers.create(spec);
  const status = await deps.store.statuses.get(server.id);
  if (spec.enabled)
    await enqueue(deps, { type: "connect", serverId: server.id, generation: status?.generation ?? 1 });
  deps.logger.info("server created", {
    serverId: server.id,
    server: server.name,
    transport: server.transport,
  });
  return toServerView(server, status);
}

/**
 * Applies a partial edit (If-Match checked against the version), supersedes earlier attempts and
 * either enqueues a new connection or settles `disabled`.
 */
export async function updateServer(
  deps: AdminDeps,
  idOrName: string,
  patch: ServerPatch,
  ifMatch: string | undefined,
): Promise<ServerView> {
  const existing = await findServer(deps, idOrName);
  if (ifMatch !== undefined && !ifMatchAllows(parseIfMatch(ifMatch), existing.version)) {
    throw new AppError(
      "request.precondition_failed",
      `If-Match ${ifMatch} does not match version ${existing.version}.`,
      {
        version: existing.version,
      },
    );
  }
  // Only the spec is patched: the record's identity/version fields are not spec fields (strict schema).
  const { id: _id, version: _version, createdAt: _createdAt, updatedAt: _updatedAt, ...stored } = existing;
  const spec = applyServerPatch(stored as ServerSpec, patch);
  assertUpstreamAllowed(deps, spec);
  const updated = await deps.store.servers.update(existing, spec);
  const status = await supersede(deps, updated);
  await stopChildren(deps, updated, status?.generation);
  deps.logger.info("server updated", {
    serverId: updated.id,
    server: updated.name,
    fields: Object.keys(patch),
  });
  return toServerView(updated, status);
}

/** Deletes a server and everything it owns; 404 when missing. */
export async function deleteServer(deps: AdminDeps, idOrName: string): Promise<void> {
  const server = await findServer(deps, idOrName);
  if (!(await deps.store.servers.remove(server.id))) throw notFound(idOrName);
  await stopChildren(deps, server);
  deps.logger.info("server deleted", { serverId: server.id, server: server.name });
}

/** Starts a fresh connection attempt now, superseding any pending one. */
export async function reconnectServer(deps: AdminDeps, idOrName: string): Promise<ServerView> {
  const server = await findServer(deps, idOrName);
  if (!server.enabled)
    throw new AppError("server.unavailable", `Server '${server.name}' is disabled; enable it first.`);
  const status = await supersede(deps, server);
  return toServerView(server, status);
}

/** The tools of a connected server's last good probe; empty otherwise. */
export async function listServerTools(deps: AdminDeps, idOrName: string) {
  const server = await findServer(deps, idOrName);
  const [status, catalog] = await Promise.all([
    deps.store.statuses.get(server.id),
    deps.store.statuses.getCatalog(server.id),
  ]);
  if (status?.state !== "connected" || !catalog) return [];
  return catalog.tools.map(({ name, description, inputSchema }) => ({
    name,
    inputSchema,
    ...(description ? { description } : {}),
  }));
}

/**
 * Imports a `.mcp.json` document all-or-nothing. Name clashes fail with 409 listing them, unless
 * `skip` (keep the existing servers) or `replace` (overwrite their config, keeping their ids).
 */
export async function importServers(
  deps: AdminDeps,
  document: unknown,
  onConflict: OnConflict,
): Promise<{ servers: ServerView[]; skipped: string[] }> {
  const specs = parseMcpJson(document).map((spec) => parseServerSpec(spec));
  for (const spec of specs) assertUpstreamAllowed(deps, spec);
  // Names and versions are all an import needs of existing servers: no secret is opened.
  const existing = new Map((await deps.store.servers.listPlain()).map((server) => [server.name, server]));
  const clashes = specs.filter((spec) => existing.has(spec.name)).map((spec) => spec.name);
  if (clashes.length > 0 && onConflict === "fail") {
    throw new AppError("import.name_conflict", `Servers already exist: ${clashes.join(", ")}.`, {
      conflicts: clashes,
    });
  }
  const creates = specs.filter((spec) => !existing.has(spec.name));
  const replaces =
    onConflict === "replace"
      ? specs.flatMap((spec) => {
          const current = existing.get(spec.name);
          return current ? [{ existing: current, spec }] : [];
        })
      : [];
  // Nothing to write (every name skipped): DynamoDB refuses an empty transaction.
  const written =
    creates.length + replaces.length > 0 ? await deps.store.servers.importAll(creates, replaces) : [];
  const replacedIds = new Set(replaces.map((r) => r.existing.id));
  const views = await Promise.all(
    written.map(async (server) => {
      const replaced = replacedIds.has(server.id);
      const status = replaced ? await supersede(deps, server) : await deps.store.statuses.get(server.id);
      if (replaced) await stopChildren(deps, server, status?.generation);
      if (!replacedIds.has(server.id) && server.enabled) {
        await enqueue(deps, { type: "connect", serverId: server.id, generation: status?.generation ?? 1 });
      }
      return toServerView(server, status);
    }),
  );
  deps.logger.info("servers imported", {
    created: creates.length,
    replaced: replaces.length,
    skipped: clashes.length,
  });
  return { servers: views, skipped: onConflict === "skip" ? clashes : [] };
}

async function findServer({ store }: Pick<AdminDeps, "store">, idOrName: string): Promise<ServerRecord> {
  const server = await store.servers.resolve(idOrName);
  if (!server) throw notFound(idOrName);
  return server;
}

function notFound(idOrName: string): AppError {
  return new AppError("server.not_found", `No server with id or name '${idOrName}'.`);
}

/** Bumps the generation (cancelling pending work) and enqueues a connect when the server is enabled. */
async function supersede(deps: AdminDeps, server: ServerRecord): Promise<StoredStatus | undefined> {
  const status = await deps.store.statuses.bump(server.id, server.enabled ? "connecting" : "disabled");
  if (status && server.enabled)
    await enqueue(deps, { type: "connect", serverId: server.id, generation: status.generation });
  return status;
}

/**
 * Ends a stdio server's children that belong to its earlier config (all of them once it is deleted):
 * their processes, secret files and temp dirs are gone when this returns. The runner being away is
 * logged, not fatal — it would not serve an outdated generation anyway.
 */
async function stopChildren(
  deps: AdminDeps,
  server: Pick<ServerRecord, "id" | "transport">,
  belowGeneration?: number,
): Promise<void> {
  if (server.transport !== "stdio" || !deps.runner) return;
  try {
    const stopped = await createRunnerClient(deps.runner).stopServer(server.id, belowGeneration);
    if (stopped > 0) deps.logger.info("stdio children stopped", { serverId: server.id, stopped });
  } catch (error) {
    deps.logger.error("could not stop stdio children", { serverId: server.id, ...errorFields(error) });
  }
}

/** Enqueues a job; a queue outage is logged, not fatal: the health sweep picks the server up later. */
async function enqueue(deps: AdminDeps, job: Job): Promise<void> {
  try {
    await deps.store.jobs.send(job);
  } catch (error) {
    deps.logger.error("could not enqueue job", {
      serverId: job.serverId,
      type: job.type,
      ...errorFields(error),
    });
  }
}

function assertUpstreamAllowed(deps: AdminDeps, spec: ServerSpec): void {
  if (spec.transport !== "http") return;
  const check = checkUrl(spec.url, { allowPrivate: deps.allowPrivateUpstreams });
  if (!check.ok) {
    throw new AppError("server.url_forbidden", `Upstream URL refused: ${check.message}.`, {
      name: spec.name,
    });
  }
}
