import type { AuditEvent } from "@mcpgw/core";
import { type AuditStore, auditDay, idTime, walkAudit } from "../audit";

/** The audit trail in memory: events by id, read through the same walk (and budget) as the table's. */
export function createMemoryAuditStore(): AuditStore {
  const events = new Map<string, AuditEvent>();
  return {
    async append(appended) {
      // As the table keeps them: JSON (an unset field is no field).
      for (const event of appended) events.set(event.id, JSON.parse(JSON.stringify(event)));
    },

    query(filter, page) {
      const serverId = filter.server?.name === undefined ? filter.server?.id : undefined;
      return walkAudit(filter, page, async (day, { lower, upper }, limit) => {
        const inRange = [...events.values()]
          .filter(
            (event) =>
              event.id >= lower &&
              event.id <= upper &&
              auditDay(idTime(event.id)) === day &&
              (serverId === undefined || event.serverId === serverId),
          )
          .sort((a, b) => (a.id < b.id ? 1 : -1));
        return {
          items: inRange.slice(0, limit).map((event) => ({ id: event.id, event: structuredClone(event) })),
          more: inRange.length > limit,
        };
      });
    },
  };
}
