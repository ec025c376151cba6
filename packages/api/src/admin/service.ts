import { setTimeout as delay } from "node:timers/promises";
import { assertImportFits, SealError, type ServingHandover, type Store } from "@mcpgw/aws";
import {
  AppError,
  type AuditLog,
  applyServerPatch,
  assertNever,
  authSecretReplaced,
  changedFields,
  editReachesUpstream,
  errorFields,
  ifMatchAllows,
  type Job,
  keepsAuthSecret,
  type Logger,
  maskedKeys,
  maskedSecrets,
  type Pinning,
  type PlainServer,
  parseIfMatch,
  parseMcpJson,
  parseServerSpec,
  type ServerPatch,
  type ServerRecord,
  type ServerSpec,
  type StoredStatus,
  secretMapOf,
  secretValues,
  servingOlder,
  UNREADABLE_SECRETS,
  upstreamAuthKey,
} from "@mcpgw/core";
import { checkUrl, createRunnerClient, type RunnerRoute } from "@mcpgw/upstream";
import { type LatencyPointView, type ServerView, toServerView } from "../views";
import type { ChangeNote } from "./change-audit";

/** What the admin operations need. */
export interface AdminDeps {
  store: Store;
  logger: Logger;
  /** Whether upstreams on loopback/private addresses are allowed (on for local runs). */
  allowPrivateUpstreams: boolean;
  /** The stdio runner, told to stop the children of servers that change. */
  runner?: RunnerRoute | undefined;
  /** The admin function's public URL (PUBLIC_ADMIN_URL): upstream OAuth's redirect URI is under it. */
  publicAdminUrl?: string | undefined;
  /** The upstream fetch (default: the outbound guard), for upstream OAuth discovery and tokens. */
  fetch?: typeof fetch | undefined;
  /** The pinning of servers that set none (PINNING_DEFAULT; default `approve`). */
  pinningDefault?: Pinning | undefined;
  /** The audit trail (admin changes are recorded by the admin routes' `auditChanges`). */
  audit?: AuditLog | undefined;
  /** Tells the request's audit event what a change did (see change-audit.ts); none outside a request. */
  noteChange?: ((note: ChangeNote) => void) | undefined;
}

/** How a server's view is shown to this deployment: its effective pinning. */
function shown(deps: AdminDeps): { pinningDefault?: Pinning | undefined } {
  return { pinningDefault: deps.pinningDefault };
}

export type OnConflict = "fail" | "skip" | "replace";

/**
 * One page of servers with their statuses, sorted by name: one index query, and no secret opened (masks
 * are stored with them). `cursor` is a previous page's `nextCursor` (absent on the last page).
 */
export async function listServers(
  deps: AdminDeps,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ servers: ServerView[]; nextCursor?: string }> {
  const { servers, nextCursor } = await deps.store.servers.listPage(page.limit, page.cursor);
  const views = await Promise.all(
    servers.map(async ({ server, status }) =>
      toServerView(await withMasks(deps, server), status, shown(deps)),
    ),
  );
  return nextCursor ? { servers: views, nextCursor } : { servers: views };
}

/** What a GET may show in the clear: `env` is a stdio server's env values (for the edit form). */
export type Reveal = "env";

/**
 * One server (by id or name) with its status; 404 when missing. `reveal: "env"` shows a stdio
 * server's env values and logs that it did (key names only); headers stay masked.
 */
export async function getServer(deps: AdminDeps, idOrName: string, reveal?: Reveal): Promise<ServerView> {
  const server = await withMasks(deps, await findServer(deps, idOrName, reveal !== "env"));
  const status = await deps.store.statuses.get(server.id);
  if (reveal !== "env" || server.transport !== "stdio") return toServerView(server, status, shown(deps));
  const record = await openSecrets(deps, server);
  const env = secretValues(record);
  deps.logger.info("server env revealed", {
    serverId: server.id,
    server: server.name,
    keys: Object.keys(env),
  });
  return toServerView(server, status, { ...shown(deps), revealedEnv: env });
}

/** Creates a server and enqueues its first connection attempt; never waits on the upstream. */
export async function createServer(deps: AdminDeps, input: unknown): Promise<ServerView> {
  const spec = parseServerSpec(input);
  assertUpstreamAllowed(deps, spec);
  const server = await deps.store.servers.create(spec);
  deps.noteChange?.({ resource: serverResource(server), fields: changedFields(undefined, asFields(input)) });
  const status = await deps.store.statuses.get(server.id);
  if (spec.enabled)
    await enqueue(deps, { type: "connect", serverId: server.id, generation: status?.generation ?? 1 });
  deps.logger.info("server created", {
    serverId: server.id,
    server: server.name,
    transport: server.transport,
  });
  return viewOf(deps, server.id, status);
}

/** How often a PATCH without If-Match re-applies itself after losing a version race, and its waits. */
const RACE_ATTEMPTS = 10;
const RACE_RETRY_WAIT_MS = 25;

/**
 * Applies a partial edit. With If-Match, to that version only (412 otherwise, a race included); without,
 * to the current version: a version race re-reads the server and re-applies the patch (a few times,
 * after short jittered waits), never answering 409 for a race the caller did not ask to detect. An
 * edit that reaches the upstream (see `editReachesUpstream`) supersedes the status in the same
 * transaction (generation + 1: `connecting`, or `disabled`) and enqueues a connection (a lost enqueue
 * is repaired by the sweep); any other edit leaves status, connection and children as they are. The
 * answer is the config exactly as this edit wrote it. Secrets are opened only when the edit keeps some
 * by their masks; sending every value again repairs secrets that cannot be opened.
 */
export async function updateServer(
  deps: AdminDeps,
  idOrName: string,
  patch: ServerPatch,
  ifMatch: string | undefined,
): Promise<ServerView> {
  return retryingRaces(async () => {
    const existing = await findServer(deps, idOrName);
    await healStatus(deps, existing);
    // Under If-Match, a version no longer the one it named is 412 (checked again on each read); without,
    // the patch is applied to the current version.
    if (ifMatch !== undefined && !ifMatchAllows(parseIfMatch(ifMatch), existing.version))
      throw preconditionFailed(ifMatch, existing.version);
    return applyEdit(deps, existing, patch);
  });
}

/**
 * Runs `attempt` again — it re-reads what it needs — when it loses a version race the caller did not
 * ask to detect (a concurrent edit, a probe's status write), up to {@link RACE_ATTEMPTS} times with
 * jittered waits.
 */
async function retryingRaces<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      const race = error instanceof AppError && error.code === "server.version_conflict";
      if (!race || tried >= RACE_ATTEMPTS) throw error;
      await delay(RACE_RETRY_WAIT_MS * tried * Math.random());
    }
  }
}

function preconditionFailed(ifMatch: string, version: number): AppError {
  return new AppError(
    "request.precondition_failed",
    `The server changed elsewhere since version ${ifMatch.replaceAll('"', "")} was read (it is at version ${version} now): reload it, then make the change again.`,
    {
      version,
    },
  );
}

/** One attempt of an edit on `existing` as read: written under its version, or `server.version_conflict`. */
async function applyEdit(deps: AdminDeps, existing: PlainServer, patch: ServerPatch): Promise<ServerView> {
  const stored = await editableSpec(deps, existing, patch);
  const spec = applyServerPatch(stored.spec, patch);
  assertUpstreamAllowed(deps, spec);
  const reaches = editReachesUpstream(stored.spec, spec);
  // Tokens were issued for the old auth (type, mode, client, secret, URL): an edit that changes it drops
  // them — and gets no handover, since upstream tokens are kept per server, not per generation: the old
  // generation serving on would obtain or send a token meant for the other config.
  const authChanged = upstreamAuthKey(existing) !== upstreamAuthKey(spec) || authSecretReplaced(patch);
  const handover =
    reaches && !authChanged && existing.enabled && spec.enabled
      ? handoverOf(await deps.store.statuses.get(existing.id))
      : undefined;
  const updated = await deps.store.servers.update(existing, spec, {
    keepSealed: stored.keepSealed,
    status: reaches ? "supersede" : "keep",
    ...(handover ? { serving: handover } : {}),
  });
  if (authChanged) {
    const removed = await deps.store.upstreamCredentials.removeAll(updated.id);
    if (removed) deps.logger.info("upstream credentials dropped", { serverId: updated.id, removed });
  }
  const status = await deps.store.statuses.get(updated.id);
  if (reaches) {
    if (updated.enabled && status)
      await enqueue(deps, { type: "connect", serverId: updated.id, generation: status.generation });
    // Children of a generation that serves on are stopped once the new one is connected (the worker).
    if (!handover?.servesOn) await stopChildren(deps, updated, status?.generation);
  }
  deps.noteChange?.({ resource: serverResource(updated), fields: changedFields(stored.spec, spec) });
  deps.logger.info("server updated", {
    serverId: updated.id,
    server: updated.name,
    fields: Object.keys(patch),
    reconnect: reaches,
  });
  return toServerView(updated.written, status, shown(deps));
}

/**
 * The stored spec an edit applies to. Its secret map is the masked one (nothing opened; the sealed
 * value is kept as it is when the edit leaves the map alone) unless the edit keeps stored values by
 * their masks — header or env values, or (with new headers) `auth.clientSecret`: then they are opened.
 */
async function editableSpec(
  deps: AdminDeps,
  existing: PlainServer,
  patch: ServerPatch,
): Promise<{ spec: ServerSpec; keepSealed: boolean }> {
  const { field } = secretMapOf(existing.transport);
  const submitted = patch[field];
  const keepsByMask = submitted !== undefined && maskedKeys(submitted).length > 0;
  if (!keepsByMask) {
    const spec = maskedSpecOf(await withMasks(deps, existing));
    // Sealed values kept as they are keep the client secret too; new headers keeping it must open it.
    const keepSealed = submitted === undefined;
    if (keepSealed || !keepsAuthSecret(spec, patch)) return { spec, keepSealed };
  }
  const { id: _i, version: _v, createdAt: _c, updatedAt: _u, ...spec } = await openSecrets(deps, existing);
  return { spec: spec as ServerSpec, keepSealed: false };
}

/** A server's config as the API shows it: its secret map masked (nothing opened), no id or version. */
function maskedSpecOf(server: PlainServer): ServerSpec {
  const { id: _i, version: _v, createdAt: _c, updatedAt: _u, masked, sealIntact: _s, ...plain } = server;
  return { ...plain, [secretMapOf(server.transport).field]: masked ?? {} } as ServerSpec;
}

/** A server as an audit event names what a change acted on. */
function serverResource(server: { id: string; name: string }): NonNullable<ChangeNote["resource"]> {
  return { type: "server", id: server.id, name: server.name };
}

/** A request body already validated as an object, as `changedFields` reads it. */
function asFields(input: unknown): Record<string, unknown> | undefined {
  return typeof input === "object" && input !== null ? (input as Record<string, unknown>) : undefined;
}

/**
 * Deletes a server and everything it owns; 404 when missing. No secret is opened. A server whose
 * stored config is unreadable is deleted too (the one thing it can be).
 */
export async function deleteServer(deps: AdminDeps, idOrName: string): Promise<void> {
  const server = await findServer(deps, idOrName, true);
  if (!(await deps.store.servers.remove(server.id))) throw notFound(idOrName);
  await stopChildren(deps, server);
  deps.noteChange?.({ resource: serverResource(server) });
  deps.logger.info("server deleted", { serverId: server.id, server: server.name });
}

/**
 * Starts a fresh connection attempt now, superseding any pending one — only while the server is
 * enabled and unchanged since it was read (a reconnect never revives a server disabled meanwhile).
 */
export async function reconnectServer(deps: AdminDeps, idOrName: string): Promise<ServerView> {
  return retryingRaces(async () => {
    const server = await findServer(deps, idOrName);
    if (!server.enabled)
      throw new AppError("server.unavailable", `Server '${server.name}' is disabled; enable it first.`);
    await healStatus(deps, server);
    const handover = handoverOf(await deps.store.statuses.get(server.id));
    await deps.store.servers.reconnect(server.id, server.version, handover);
    deps.noteChange?.({ resource: serverResource(server) });
    const status = await deps.store.statuses.get(server.id);
    if (status) await enqueue(deps, { type: "connect", serverId: server.id, generation: status.generation });
    return toServerView(await withMasks(deps, server), status, shown(deps));
  });
}

/**
 * What a change reaching the upstream does with the generation serving calls, from the status as read
 * (the write holds only while the status is still so): a `connected` one serves on while the new one
 * connects, as does one already serving on (an edit during an edit); otherwise (failed, connecting with
 * nothing serving) nothing serves meanwhile. A probe that settles between the read and the write — the
 * server connected after all — makes the change read again and hand over: decided on the stale read,
 * the server would stop serving until the new generation connected.
 */
function handoverOf(status: StoredStatus | undefined): ServingHandover | undefined {
  if (!status) return undefined;
  const servesOn =
    status.state === "connected" || (status.state === "connecting" && servingOlder(status) !== undefined);
  return { state: status.state, generation: status.generation, servesOn };
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

/** What an import does: the servers it creates, those it overwrites, and the names it skips. */
interface ImportPlan {
  creates: ServerSpec[];
  replaces: Array<{ existing: PlainServer; spec: ServerSpec }>;
  skipped: string[];
}

/**
 * A server's latency history: its probes (2 h) and its calls per 10 s slot (20 min), oldest first —
 * one read of its bounded rings; 404 when the server is missing.
 */
export async function getLatencyHistory(
  deps: AdminDeps,
  idOrName: string,
): Promise<{ points: LatencyPointView[] }> {
  const server = await findServer(deps, idOrName);
  const points = await deps.store.latency.read(server.id);
  return { points: points.map((point) => ({ ...point, at: new Date(point.at).toISOString() })) };
}

/**
 * Checks a `.mcp.json` import as a real one would — the document, each upstream URL, name clashes
 * (409 under `fail`) and the one-transaction bound — and answers what it would do. Writes nothing.
 */
async function planImport(deps: AdminDeps, document: unknown, onConflict: OnConflict): Promise<ImportPlan> {
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
  assertImportFits(creates, replaces);
  return { creates, replaces, skipped: onConflict === "skip" ? clashes : [] };
}

/**
 * An import's dry run: the names it would create, replace and skip, after every check a real import
 * makes (its problems are the same), without writing anything or enqueueing any job.
 */
export async function previewImport(
  deps: AdminDeps,
  document: unknown,
  onConflict: OnConflict,
): Promise<{ created: string[]; replaced: string[]; skipped: string[] }> {
  const { creates, replaces, skipped } = await planImport(deps, document, onConflict);
  return {
    created: creates.map((spec) => spec.name),
    replaced: replaces.map(({ spec }) => spec.name),
    skipped,
  };
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
  const { creates, replaces, skipped } = await planImport(deps, document, onConflict);
  for (const { existing } of replaces) await healStatus(deps, existing);
  const specs = new Map([...creates, ...replaces.map((r) => r.spec)].map((spec) => [spec.name, spec]));
  // Nothing to write (every name skipped): DynamoDB refuses an empty transaction.
  const written =
    creates.length + replaces.length > 0 ? await deps.store.servers.importAll(creates, replaces) : [];
  const replaced = new Map(
    await Promise.all(
      replaces.map(async (r) => [r.existing.id, maskedSpecOf(await withMasks(deps, r.existing))] as const),
    ),
  );
  const views = await Promise.all(
    written.map(async (server) => {
      // Replaced servers' statuses were superseded in the import's own transaction.
      const status = await deps.store.statuses.get(server.id);
      const before = replaced.get(server.id);
      if (before) await stopChildren(deps, server, status?.generation);
      deps.noteChange?.({
        action: before ? "server.update" : "server.create",
        resource: serverResource(server),
        fields: changedFields(before, specs.get(server.name)),
      });
      if (server.enabled && status)
        await enqueue(deps, { type: "connect", serverId: server.id, generation: status.generation });
      return viewOf(deps, server.id, status);
    }),
  );
  deps.logger.info("servers imported", {
    created: creates.length,
    replaced: replaces.length,
    skipped: skipped.length,
  });
  return { servers: views, skipped };
}

/**
 * A server by id or name; 404 when missing, 409 `server.config_unreadable` when its stored config is
 * unreadable (unless `unreadableToo`: it is shown and deleted, nothing else).
 */
export async function findServer(
  { store }: Pick<AdminDeps, "store">,
  idOrName: string,
  unreadableToo = false,
): Promise<PlainServer> {
  const server = await store.servers.resolvePlain(idOrName);
  if (!server) throw notFound(idOrName);
  if (!unreadableToo) assertConfigReadable(server);
  return server;
}

/** 409 `server.config_unreadable` for a server whose stored config is unreadable (it can only be deleted). */
export function assertConfigReadable(server: PlainServer): void {
  if (server.unreadable)
    throw new AppError("server.config_unreadable", `Server '${server.name}': ${server.unreadable}.`);
}

/**
 * Rewrites the server's status first when it is missing or unreadable (a fresh generation above any an
 * in-flight job holds), so the edit or reconnect that follows supersedes a valid one.
 */
async function healStatus(deps: AdminDeps, server: PlainServer): Promise<void> {
  const healed = await deps.store.statuses.heal(server.id, server.name, server.enabled);
  if (!healed) return;
  deps.logger.warn("unreadable status rewritten", { serverId: server.id, generation: healed.generation });
  // A rewritten status is a new generation: it is connected whatever the request goes on to do (an
  // edit that reaches nothing upstream sends no job of its own).
  if (healed.state === "connecting")
    await enqueue(deps, { type: "connect", serverId: server.id, generation: healed.generation });
}

function notFound(idOrName: string): AppError {
  return new AppError("server.not_found", `No server with id or name '${idOrName}'.`);
}

/** The view of a server just written (read back plain: the masks as stored). */
async function viewOf(deps: AdminDeps, id: string, status: StoredStatus | undefined): Promise<ServerView> {
  const server = await deps.store.servers.getPlain(id);
  if (!server) throw notFound(id);
  return toServerView(await withMasks(deps, server), status, shown(deps));
}

/**
 * A server with its masked view: as stored, or — for a record written before masks were stored —
 * computed by opening its secrets once. Secrets that cannot be opened mark it unreadable.
 */
async function withMasks(deps: AdminDeps, server: PlainServer): Promise<PlainServer> {
  if (server.masked || !server.sealIntact) return server;
  try {
    const record = await deps.store.servers.get(server.id);
    if (!record) return { ...server, masked: {} };
    return { ...server, masked: maskedSecrets(record) };
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return { ...server, masked: {}, sealIntact: false };
  }
}

/** The server with its secrets opened; 409 `server.secrets_unreadable` when they cannot be. */
async function openSecrets(deps: AdminDeps, server: PlainServer): Promise<ServerRecord> {
  const what = secretMapOf(server.transport).noun;
  const unreadable = () =>
    new AppError(
      "server.secrets_unreadable",
      `Server '${server.name}': ${UNREADABLE_SECRETS}. Send every ${what} value again (no masks) to repair it, or delete it.`,
    );
  if (!server.sealIntact) throw unreadable();
  try {
    const record = await deps.store.servers.get(server.id);
    if (!record) throw notFound(server.id);
    return record;
  } catch (error) {
    if (error instanceof SealError) throw unreadable();
    throw error;
  }
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
    if (deps.store.outages.report(deps.logger, error)) return;
    deps.logger.error("could not enqueue job", {
      serverId: job.serverId,
      type: job.type,
      ...errorFields(error),
    });
  }
}

/** A server's upstream URL through the outbound guard; a stdio server has none (the runner is ours). */
function assertUpstreamAllowed(deps: AdminDeps, spec: ServerSpec): void {
  switch (spec.transport) {
    case "http": {
      const check = checkUrl(spec.url, { allowPrivate: deps.allowPrivateUpstreams });
      if (!check.ok) {
        throw new AppError("server.url_forbidden", `Upstream URL refused: ${check.message}.`, {
          name: spec.name,
        });
      }
      return;
    }
    case "stdio":
      return;
    default:
      assertNever(spec);
  }
}
