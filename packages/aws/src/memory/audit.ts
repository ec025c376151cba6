import { type AuditPack, type AuditStore, auditPacks, storedEvents, walkAudit } from "../audit";

/** The audit trail in memory: packs as the table keeps them, read through the same walk and budget. */
export function createMemoryAuditStore(): AuditStore {
  const stored = new Map<string, AuditPack>();
  return {
    async append(appended) {
      for (const pack of auditPacks(appended)) stored.set(pack.sk, pack);
    },

    query(filter, page) {
      const serverId = filter.server?.name === undefined ? filter.server?.id : undefined;
      return walkAudit(filter, page, async (day, { lower, upper }, limit) => {
        const inRange = [...stored.values()]
          .filter(
            (pack) =>
              pack.sk >= lower &&
              pack.sk <= upper &&
              pack.day === day &&
              (serverId === undefined || pack.serverId === serverId),
          )
          .sort((a, b) => (a.sk < b.sk ? 1 : -1));
        return {
          items: inRange
            .slice(0, limit)
            .map((pack) => ({ id: pack.sk, ...storedEvents({ events: pack.json }) })),
          more: inRange.length > limit,
        };
      });
    },
  };
}
