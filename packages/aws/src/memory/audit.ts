import type { AuditEvent } from "@mcpgw/core";
import { type AuditStore, auditDay, fitAuditEvent, idTime, storedEvent, walkAudit } from "../audit";

/** The audit trail in memory: events as the table keeps them (JSON), read through the same walk and budget. */
export function createMemoryAuditStore(): AuditStore {
  const stored = new Map<string, { event: AuditEvent; json: string }>();
  return {
    async append(appended) {
      for (const event of appended) stored.set(event.id, fitAuditEvent(event));
    },

    query(filter, page) {
      const serverId = filter.server?.name === undefined ? filter.server?.id : undefined;
      return walkAudit(filter, page, async (day, { lower, upper }, limit) => {
        const inRange = [...stored.values()]
          .filter(
            ({ event }) =>
              event.id >= lower &&
              event.id <= upper &&
              auditDay(idTime(event.id)) === day &&
              (serverId === undefined || event.serverId === serverId),
          )
          .sort((a, b) => (a.event.id < b.event.id ? 1 : -1));
        return {
          items: inRange.slice(0, limit).map(({ event, json }) => ({ id: event.id, ...storedEvent(json) })),
          more: inRange.length > limit,
        };
      });
    },
  };
}
