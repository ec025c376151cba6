import { randomUUID } from "node:crypto";
import {
  AppError,
  initialStatus,
  maskMap,
  type PlainServer,
  type ServerRecord,
  type ServerSpec,
  secretMapOf,
  type UpstreamAuth,
} from "@mcpgw/core";
import { openAuth, sealAuth, sealAuthKeeping } from "../auth-secret";
import { type Sealer, serverFieldContext } from "../sealing";
import { decodeListCursor, encodeListCursor, MAX_LIST_LIMIT, statusListSort } from "../server-list";
import {
  assertImportFits,
  type EditStatus,
  keepsConfig,
  type ListedServer,
  type ServerRepository,
  type ServingHandover,
  type StoredIdentity,
} from "../servers";
import { byKey, copy, type MemoryServer, type MemoryTables, removeOwned } from "./tables";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const versionConflict = () =>
  new AppError("server.version_conflict", "The server changed since it was read; fetch it and retry.");
const nameTaken = (name: string) =>
  new AppError("server.name_taken", `A server named '${name}' already exists.`, { name });

/**
 * Servers in memory with the DynamoDB repository's rules: unique names, sealed secrets, version
 * checks, and every change superseding the status (generation + 1) at once or not at all. Sealing
 * happens before anything is checked or written; checks and writes run with no await between them.
 */
export function createMemoryServerRepository(tables: MemoryTables, sealer: Sealer): ServerRepository {
  async function stored(record: ServerRecord): Promise<MemoryServer> {
    const { headers, env, ...plain } = record as ServerRecord & {
      headers?: Record<string, string>;
      env?: Record<string, string>;
    };
    const { field, rule } = secretMapOf(record.transport);
    const secrets = (field === "headers" ? headers : env) ?? {};
    const sealed =
      Object.keys(secrets).length > 0
        ? await sealer.seal(secrets, serverFieldContext(record.id, field))
        : undefined;
    const { auth, sealedAuth } = await sealAuth(record, sealer);
    return {
      plain: copy({ ...plain, ...(auth ? { auth } : {}) }),
      masked: maskMap(secrets, rule),
      sealed,
      sealedAuth,
    };
  }

  function toPlain(server: MemoryServer): PlainServer {
    return copy({ ...server.plain, masked: server.masked, sealIntact: true }) as PlainServer;
  }

  async function toRecord(server: MemoryServer): Promise<ServerRecord> {
    const { field } = secretMapOf(server.plain.transport);
    const secrets = server.sealed
      ? await sealer.open<Record<string, string>>(server.sealed, serverFieldContext(server.plain.id, field))
      : {};
    const plain = copy(server.plain) as typeof server.plain & { auth?: UpstreamAuth };
    if (!plain.auth) return { ...plain, [field]: secrets } as ServerRecord;
    const auth = await openAuth(plain.id, plain.auth, server.sealedAuth, sealer);
    return { ...plain, [field]: secrets, auth } as ServerRecord;
  }

  const { serving } = tables;

  /** Whether the status is still as a handover was decided on (see {@link ServingHandover}). */
  function handoverHolds(id: string, handover: ServingHandover | undefined): boolean {
    const status = tables.statuses.get(id);
    return !handover || (status?.generation === handover.generation && status.state === handover.state);
  }

  /**
   * The status update that starts a new generation: earlier attempts' results are fenced off. A
   * `connected` handover keeps the current config for its generation to serve on meanwhile.
   */
  function supersede(id: string, enabled: boolean, now: string, handover?: ServingHandover): void {
    const status = tables.statuses.get(id);
    if (!status) return;
    const { servingGeneration: _g, servingSince: _s, ...rest } = status;
    const current = tables.servers.get(id);
    if (keepsConfig(handover) && current)
      serving.set(id, { server: current, generation: handover.generation });
    // Nothing serves on: the kept config (its sealed secrets) goes (see the DynamoDB store's dropKept).
    if (!handover?.servesOn) serving.delete(id);
    tables.statuses.set(id, {
      ...(handover?.servesOn ? status : rest),
      ...(keepsConfig(handover) ? { servingGeneration: handover.generation, servingSince: now } : {}),
      state: enabled ? "connecting" : "disabled",
      reason: null,
      error: null,
      supersededAt: now,
      generation: status.generation + 1,
    });
  }

  async function newServer(spec: ServerSpec, now: string) {
    const record = { ...spec, id: randomUUID(), version: 1, createdAt: now, updatedAt: now } as ServerRecord;
    return { record, server: await stored(record) };
  }

  function insert(record: ServerRecord, server: MemoryServer, now: string): void {
    tables.names.set(record.name, record.id);
    tables.servers.set(record.id, server);
    tables.statuses.set(record.id, { ...initialStatus(record.enabled), generation: 1, supersededAt: now });
  }

  async function replacement(existing: StoredIdentity, spec: ServerSpec, now: string, keepSealed = false) {
    const record = {
      ...spec,
      id: existing.id,
      version: existing.version + 1,
      createdAt: existing.createdAt,
      updatedAt: now,
    } as ServerRecord;
    if (!keepSealed) return { existing, record, server: await stored(record) };
    const current = tables.servers.get(existing.id);
    if (current?.plain.version !== record.version - 1) throw versionConflict();
    const { headers: _h, env: _e, ...plain } = record as ServerRecord & { headers?: unknown; env?: unknown };
    const { auth, sealedAuth } = await sealAuthKeeping(record, current.sealedAuth, sealer);
    const server: MemoryServer = {
      plain: copy({ ...plain, ...(auth ? { auth } : {}) }),
      masked: current.masked,
      sealed: current.sealed,
      sealedAuth,
    };
    return { existing, record, server };
  }

  /** What stops a replacement, as the DynamoDB transaction's conditions would. */
  function replaceConflict(
    existing: StoredIdentity,
    spec: ServerSpec,
  ): "version" | "name" | "deleted" | undefined {
    const current = tables.servers.get(existing.id);
    if (current?.plain.version !== existing.version) return "version";
    if (spec.name !== existing.name) {
      if (tables.names.get(existing.name) !== existing.id) return "version";
      if (tables.names.has(spec.name)) return "name";
    }
    if (!tables.statuses.has(existing.id)) return "deleted";
    return undefined;
  }

  function applyReplace(
    existing: StoredIdentity,
    record: ServerRecord,
    server: MemoryServer,
    now: string,
    status: EditStatus = "supersede",
    handover?: ServingHandover,
  ) {
    if (status === "supersede") supersede(record.id, record.enabled, now, handover);
    tables.servers.set(record.id, server);
    if (record.name !== existing.name) {
      tables.names.delete(existing.name);
      tables.names.set(record.name, record.id);
    }
  }

  function idByName(name: string): string | undefined {
    return tables.names.get(name);
  }

  const repository: ServerRepository = {
    async create(spec) {
      const now = new Date().toISOString();
      const { record, server } = await newServer(spec, now);
      if (tables.names.has(spec.name)) throw nameTaken(spec.name);
      insert(record, server, now);
      return copy(record);
    },

    async importAll(creates, replaces) {
      assertImportFits(creates, replaces);
      const now = new Date().toISOString();
      const built = await Promise.all(creates.map((spec) => newServer(spec, now)));
      const replaced = await Promise.all(
        replaces.map(({ existing, spec }) => replacement(existing, spec, now)),
      );
      const conflict =
        creates.some((spec) => tables.names.has(spec.name)) ||
        replaces.some(({ existing, spec }) => replaceConflict(existing, spec) !== undefined);
      if (conflict) {
        throw new AppError(
          "server.version_conflict",
          "Servers changed while importing; nothing was imported. Retry.",
        );
      }
      for (const { record, server } of built) insert(record, server, now);
      for (const { existing, record, server } of replaced) applyReplace(existing, record, server, now);
      return [...built, ...replaced].map(({ record }) => copy(record)).sort((a, b) => byKey(a.name, b.name));
    },

    async get(id) {
      const server = tables.servers.get(id);
      return server ? toRecord(server) : undefined;
    },

    async getByName(name) {
      const id = idByName(name);
      return id ? repository.get(id) : undefined;
    },

    async resolve(idOrName) {
      return UUID.test(idOrName) ? repository.get(idOrName.toLowerCase()) : repository.getByName(idOrName);
    },

    async getPlain(id) {
      const server = tables.servers.get(id);
      return server ? toPlain(server) : undefined;
    },

    async read(id) {
      const server = tables.servers.get(id);
      return server ? { plain: toPlain(server), open: () => toRecord(server) } : undefined;
    },

    async resolvePlain(idOrName) {
      if (UUID.test(idOrName)) return repository.getPlain(idOrName.toLowerCase());
      const id = idByName(idOrName);
      return id ? repository.getPlain(id) : undefined;
    },

    async listPlain() {
      return [...tables.servers.values()].map(toPlain).sort((a, b) => byKey(a.name, b.name));
    },

    async listPage(limit, cursor) {
      const size = Math.min(Math.max(1, Math.floor(limit)), MAX_LIST_LIMIT);
      // A position after a server's config or its status: either way, the page starts after that name.
      const after =
        cursor === undefined ? undefined : decodeListCursor(cursor).kindSort.replace(/#STATUS$/, "");
      const rest = (await repository.listAll()).filter(
        ({ server }) => after === undefined || byKey(server.name, after) > 0,
      );
      const servers = rest.slice(0, size);
      const last = servers.at(-1)?.server;
      return rest.length > size && last
        ? {
            servers,
            nextCursor: encodeListCursor({ kindSort: statusListSort(last.name), serverId: last.id }),
          }
        : { servers };
    },

    async listAll() {
      const servers = await repository.listPlain();
      return servers.map((server): ListedServer => {
        const status = tables.statuses.get(server.id);
        const stamps = tables.changed.of(server.id, "CONFIG", "STATUS");
        if (!status) return { server, status: undefined, stamps };
        const { lastJobId: _job, ...stored } = copy(status);
        return { server, status: stored, stamps };
      });
    },

    async placeStatus() {
      return false; // every status here is listed with its server
    },

    async update(existing, spec, options = {}) {
      const now = new Date().toISOString();
      const { record, server } = await replacement(existing, spec, now, options.keepSealed);
      const conflict = replaceConflict(existing, spec);
      if (conflict === "version") throw versionConflict();
      if (conflict === "name") throw nameTaken(spec.name);
      if (conflict === "deleted")
        throw new AppError("server.not_found", `Server '${existing.name}' was deleted meanwhile.`);
      if (!handoverHolds(existing.id, options.serving)) throw versionConflict();
      applyReplace(existing, record, server, now, options.status, options.serving);
      return { ...copy(record), written: toPlain(server) };
    },

    async reconnect(id, version, handover) {
      const current = tables.servers.get(id);
      if (
        current?.plain.version !== version ||
        !current.plain.enabled ||
        !tables.statuses.has(id) ||
        !handoverHolds(id, handover)
      ) {
        throw new AppError(
          "server.version_conflict",
          "The server changed (or was disabled) since it was read; fetch it and retry.",
        );
      }
      supersede(id, true, new Date().toISOString(), handover);
    },

    async getServing(id) {
      const kept = serving.get(id);
      return kept ? { ...(await toRecord(kept.server)), generation: kept.generation } : undefined;
    },

    async remove(id) {
      const current = tables.servers.get(id);
      if (!current) return false;
      tables.servers.delete(id);
      if (tables.names.get(current.plain.name) === id) tables.names.delete(current.plain.name);
      tables.statuses.delete(id);
      serving.delete(id);
      removeOwned(tables, id);
      return true;
    },
  };
  return repository;
}
