import { gzipSync } from "node:zlib";
import {
  attemptChanges,
  freshGeneration,
  initialStatus,
  listingChanges,
  type StoredStatus,
} from "@mcpgw/core";
import {
  CATALOG_PART_BYTES,
  type Catalog,
  CatalogMovedError,
  CatalogTooLargeError,
  catalogBody,
  type Findings,
  MAX_CATALOG_PARTS,
  type RecordOptions,
  type StatusRepository,
} from "../statuses";
import { copy, type MemoryTables } from "./tables";

/**
 * Statuses in memory under the same generation fence as the DynamoDB repository: an attempt's outcome
 * is written only while its generation is current and the server is not disabled, once per job id;
 * its catalogue goes with it, bounded as the table bounds it.
 */
export function createMemoryStatusRepository(tables: MemoryTables): StatusRepository {
  const view = ({ lastJobId: _job, ...status }: StoredStatus & { lastJobId?: string }): StoredStatus =>
    copy(status);

  /**
   * The catalogue to write — none when its tools and profile are unchanged; throws when it is too large
   * to store.
   */
  function catalogWrite(serverId: string, found: Findings, at: string, expected?: string | null) {
    const { json, hash } = catalogBody(found);
    const stored = tables.catalogs.get(serverId)?.hash ?? null;
    if (expected !== undefined && stored !== expected) throw new CatalogMovedError();
    if (stored === hash) return undefined;
    const gzipped = gzipSync(json);
    if (Math.ceil(gzipped.length / CATALOG_PART_BYTES) > MAX_CATALOG_PARTS)
      throw new CatalogTooLargeError(found.tools.length, gzipped.length);
    const { tools, profile, pins } = copy(found);
    return {
      serverId,
      tools,
      ...(profile ? { profile } : {}),
      ...(pins ? { pins } : {}),
      updatedAt: at,
      hash,
    };
  }

  /** Each server's attempt claim (kept apart from the status, as the table keeps it out of the view). */
  const claims = new Map<string, { generation: number; until: string }>();

  const catalogView = (catalog: Catalog): Catalog => copy(catalog);

  return {
    async get(serverId) {
      const status = tables.statuses.get(serverId);
      return status ? view(status) : undefined;
    },

    async list() {
      return new Map([...tables.statuses].map(([id, status]) => [id, view(status)]));
    },

    async bump(serverId, state, expected) {
      const status = tables.statuses.get(serverId);
      if (!status || (expected !== undefined && status.generation !== expected)) return undefined;
      const bumped = {
        ...status,
        state,
        reason: null,
        error: null,
        supersededAt: new Date().toISOString(),
        generation: status.generation + 1,
      };
      tables.statuses.set(serverId, bumped);
      return view(bumped);
    },

    async recordAttempt(serverId, generation, outcome, found, options: RecordOptions = {}) {
      const catalog =
        outcome.ok && found ? catalogWrite(serverId, found, outcome.at, options.catalogHash) : undefined;
      const status = tables.statuses.get(serverId);
      if (!status || status.generation !== generation || status.state === "disabled") return false;
      if (options.jobId && status.lastJobId === options.jobId) return false;
      // The attempt settles its generation: an older one that served meanwhile serves no more.
      const { servingGeneration: _g, servingSince: _s, ...rest } = status;
      if (options.endsServing) tables.serving.delete(serverId);
      tables.statuses.set(serverId, {
        ...rest,
        ...attemptChanges(outcome, found?.profile),
        ...(outcome.ok && found ? listingChanges(outcome.at, found.profile) : {}),
        ...(outcome.ok && found ? { pendingChanges: found.pins?.changes?.length ?? 0 } : {}),
        ...(options.jobId ? { lastJobId: options.jobId } : {}),
        ...(outcome.ok ? {} : options.backoff),
      });
      if (options.endsClaim) claims.delete(serverId);
      if (catalog) tables.catalogs.set(serverId, catalog);
      return true;
    },

    async repin(serverId, found, expected) {
      const status = tables.statuses.get(serverId);
      if (!status) return false;
      let catalog: ReturnType<typeof catalogWrite>;
      try {
        catalog = catalogWrite(serverId, found, new Date().toISOString(), expected);
      } catch (error) {
        if (error instanceof CatalogMovedError) return false;
        throw error;
      }
      tables.statuses.set(serverId, {
        ...status,
        pendingChanges: found.pins?.changes?.length ?? 0,
        ...(status.state === "connected" ? { toolCount: found.tools.length } : {}),
      });
      if (catalog) tables.catalogs.set(serverId, catalog);
      return true;
    },

    async claimAttempt(serverId, generation, until) {
      const status = tables.statuses.get(serverId);
      if (!status || status.generation !== generation) return false;
      const held = claims.get(serverId);
      if (held && held.generation === generation && held.until >= new Date().toISOString()) return false;
      claims.set(serverId, { generation, until });
      return true;
    },

    async getCatalog(serverId) {
      const catalog = tables.catalogs.get(serverId);
      return catalog ? catalogView(catalog) : undefined;
    },

    async listCatalogs() {
      return [...tables.catalogs.values()].map((catalog) => ({
        ...catalogView(catalog),
        stamps: tables.changed.of(catalog.serverId, "CATALOG"),
      }));
    },

    // Nothing in memory is unreadable: only a missing status (of a server that exists) is rewritten.
    async heal(serverId, _name, enabled) {
      if (tables.statuses.has(serverId) || !tables.servers.has(serverId)) return undefined;
      const status = {
        ...initialStatus(enabled),
        generation: freshGeneration(undefined),
        supersededAt: new Date().toISOString(),
      };
      tables.statuses.set(serverId, status);
      return view(status);
    },
  };
}
