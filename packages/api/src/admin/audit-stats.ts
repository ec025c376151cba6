/**
 * `GET /v1/audit/stats`: calls, errors and p50/p95 of one server (and tool) over the last hour or day,
 * computed from the audit trail's call events of the window (what the console's charts draw).
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AuditPage, Store } from "@mcpgw/aws";
import { type AuditEvent, auditStats, auditStatsRange } from "@mcpgw/core";
import type { AppEnv } from "../env";
import { json, route } from "../openapi-helpers";
import { AuditStatsView } from "../views";
import { auditFilterOf } from "./audit";

/** At most this many events are read for one answer (past it the answer is `partial`). */
export const STATS_MAX_EVENTS = 20_000;
/** And for at most this long. */
export const STATS_BUDGET_MS = 5_000;
/** Events asked for per page of the audit store. */
const PAGE = 500;

const StatsQuery = z.object({
  server: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: "A server's name or id", param: { name: "server", in: "query" } }),
  tool: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: "A tool's name or `<server>__<tool>`", param: { name: "tool", in: "query" } }),
  window: z
    .enum(["hour", "day"])
    .default("hour")
    .openapi({
      description: "`hour`: 60 one-minute buckets (the default); `day`: 48 half-hour buckets",
      param: { name: "window", in: "query" },
    }),
});

/** Registers `GET /v1/audit/stats` (admin only). */
export function registerAuditStatsRoute(app: OpenAPIHono<AppEnv>, deps: { store: Store }): void {
  app.openapi(
    route({
      method: "get",
      path: "/v1/audit/stats",
      tags: ["audit"],
      summary: "Calls per bucket, errors and p50/p95 of a server or tool over the last hour or day",
      request: { query: StatsQuery },
      responses: { 200: json(AuditStatsView, "The window's stats") },
    }),
    async (c) => {
      const { server, tool, window } = c.req.valid("query");
      const now = Date.now();
      const { since, until } = auditStatsRange(window, now);
      const filter = await auditFilterOf(deps.store, {
        server,
        tool,
        since: new Date(since).toISOString(),
        until: new Date(until).toISOString(),
      });
      const read = await readBounded((cursor) =>
        deps.store.audit.query(filter, { limit: PAGE, ...(cursor ? { cursor } : {}) }),
      );
      return c.json(auditStats(read.events, { window, now, partial: read.partial }), 200);
    },
  );
}

/**
 * Reads pages (`next(cursor)`) until the last one, {@link STATS_MAX_EVENTS} events or
 * {@link STATS_BUDGET_MS}; `partial` when a bound stopped it before the end.
 */
export async function readBounded(
  next: (cursor: string | undefined) => Promise<AuditPage>,
  bounds: { maxEvents: number; budgetMs: number } = {
    maxEvents: STATS_MAX_EVENTS,
    budgetMs: STATS_BUDGET_MS,
  },
  clock: () => number = Date.now,
): Promise<{ events: AuditEvent[]; partial: boolean }> {
  const deadline = clock() + bounds.budgetMs;
  const events: AuditEvent[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await next(cursor);
    const room = bounds.maxEvents - events.length;
    events.push(...page.events.slice(0, room));
    if (page.events.length > room) return { events, partial: true };
    if (!page.cursor) return { events, partial: false };
    if (events.length >= bounds.maxEvents || clock() >= deadline) return { events, partial: true };
    cursor = page.cursor;
  }
}
