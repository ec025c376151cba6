/**
 * The audit trail's read routes (admin only): `GET /v1/audit` pages the events newest first,
 * `GET /v1/audit/export` streams them as JSON Lines. No route edits or deletes an event.
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { AUDIT_ID_PATTERN, type AuditFilter, type Store } from "@mcpgw/aws";
import { AUDIT_PLANES, errorFields } from "@mcpgw/core";
import { stream } from "hono/streaming";
import type { AppEnv } from "../env";
import { json, route } from "../openapi-helpers";

/** Events a page holds by default, and at most. */
export const AUDIT_PAGE = { default: 50, max: 500 } as const;
/** The most events one export streams (past it, the client pages on with `until`). */
export const AUDIT_EXPORT_MAX = 100_000;
/**
 * The most bytes of lines one export streams: the admin function's answer is buffered, within Lambda's
 * 6 MB, and JSON Lines go base64 there (×4/3).
 */
export const AUDIT_EXPORT_MAX_BYTES = 4 * 1024 * 1024;
/** How far back a query reads when it names no `since`: the default retention (AUDIT_RETENTION_DAYS). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 30;

const queryParam = (name: string, description: string) => ({
  description,
  param: { name, in: "query" as const },
});
const Text = z.string().trim().min(1).max(256);
const Instant = z.iso.datetime({ offset: true });

const AuditFilterQuery = z.object({
  principal: Text.optional().openapi(queryParam("principal", "A key id, key name, user subject, or `admin`")),
  server: Text.optional().openapi(queryParam("server", "A server name or id")),
  tool: Text.optional().openapi(queryParam("tool", "A tool name, or `<server>__<tool>`")),
  outcome: Text.optional().openapi(
    queryParam("outcome", "`ok`, `tool_error`, `input_required`, or an error code (e.g. `tool.not_found`)"),
  ),
  since: Instant.optional().openapi(
    queryParam("since", "ISO 8601, inclusive (default: the retention, AUDIT_RETENTION_DAYS, before `until`)"),
  ),
  until: Instant.optional().openapi(queryParam("until", "ISO 8601, inclusive (default: now)")),
});
const AuditQuery = AuditFilterQuery.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(AUDIT_PAGE.max)
    .default(AUDIT_PAGE.default)
    .openapi(
      queryParam(
        "limit",
        `Events per page, 1–${AUDIT_PAGE.max} (default ${AUDIT_PAGE.default}); a page may hold fewer`,
      ),
    ),
  cursor: z
    .string()
    .regex(AUDIT_ID_PATTERN)
    .optional()
    .openapi(queryParam("cursor", "The `cursor` of the previous page")),
});

const AuditPrincipalView = z
  .object({
    kind: z.enum(["admin", "key", "user"]),
    keyId: z.string().optional(),
    keyName: z.string().optional(),
    sub: z.string().optional(),
  })
  .openapi("AuditPrincipal");

export const AuditEventView = z
  .object({
    id: z.string().openapi({ description: "Unique; ids sort by time" }),
    at: z.string().openapi({ description: "When it ended (ISO 8601)" }),
    type: z.enum(["call", "change"]),
    principal: AuditPrincipalView,
    source: z.string().optional().openapi({ description: "The caller's address" }),
    plane: z.enum(AUDIT_PLANES),
    serverId: z.string().optional(),
    serverName: z.string().optional(),
    tool: z.string().optional(),
    toolset: z.string().optional(),
    outcome: z.string().openapi({ description: "`ok`, `tool_error`, `input_required`, or an error code" }),
    durationMs: z.number(),
    requestBytes: z.number().optional(),
    responseBytes: z.number().optional(),
    argumentKeys: z.array(z.string()).optional().openapi({ description: "Argument key names, never values" }),
    traceId: z.string().optional(),
    action: z.string().optional(),
    resource: z.object({ type: z.string(), id: z.string(), name: z.string().optional() }).optional(),
    fields: z.array(z.string()).optional(),
  })
  .openapi("AuditEvent");

const AuditPageView = z
  .object({
    events: z.array(AuditEventView),
    cursor: z.string().nullable().openapi({ description: "The next page's `cursor`; null at the end" }),
  })
  .openapi("AuditPage");

/** What the audit routes need. */
export interface AuditRouteDeps {
  store: Store;
  /** AUDIT_RETENTION_DAYS: how far back a query without `since` reads (default 30). */
  auditRetentionDays?: number | undefined;
  /** The most bytes one export streams (default {@link AUDIT_EXPORT_MAX_BYTES}). */
  auditExportMaxBytes?: number | undefined;
}

/**
 * The store's filter of a request's query: times as ms (since defaults to the retention back), a server
 * named by its current name or id resolved to its id (else matched as an id or a name of the past).
 */
export async function auditFilterOf(
  store: Store,
  query: z.infer<typeof AuditFilterQuery>,
  retentionDays = DEFAULT_AUDIT_RETENTION_DAYS,
  now = Date.now(),
): Promise<AuditFilter> {
  const until = query.until === undefined ? undefined : Date.parse(query.until);
  // The retention back from `until`, and never further back than the retention from now (older events
  // are expired); a `since` after `until` is an empty range (an empty page).
  const retention = retentionDays * 86_400_000;
  const since = Math.max(
    query.since === undefined ? (until ?? now) - retention : Date.parse(query.since),
    now - retention,
  );
  let server: AuditFilter["server"];
  if (query.server !== undefined) {
    const found = await store.servers.resolvePlain(query.server);
    server = found ? { id: found.id } : { id: query.server, name: query.server };
  }
  return {
    since,
    ...(until === undefined ? {} : { until }),
    ...(server ? { server } : {}),
    ...(query.principal === undefined ? {} : { principal: query.principal }),
    ...(query.tool === undefined ? {} : { tool: query.tool }),
    ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
  };
}

/** Registers `GET /v1/audit` and `GET /v1/audit/export` (admin only). */
export function registerAuditRoutes(app: OpenAPIHono<AppEnv>, deps: AuditRouteDeps): void {
  app.openapi(
    route({
      method: "get",
      path: "/v1/audit",
      tags: ["audit"],
      summary: "The audit trail: tool calls and admin changes, newest first, filtered and paged",
      description:
        "Each event names who (key id and name, user subject, or admin), from where, on what, how it ended " +
        "and how long it took — never a value (argument key names only). One page reads a bounded part " +
        "of the trail: it may hold fewer than `limit` events with a `cursor` to go on.",
      request: { query: AuditQuery },
      responses: { 200: json(AuditPageView, "A page of events") },
    }),
    async (c) => {
      const { limit, cursor, ...query } = c.req.valid("query");
      const filter = await auditFilterOf(deps.store, query, deps.auditRetentionDays);
      return c.json(await deps.store.audit.query(filter, { limit, cursor }), 200);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/audit/export",
      tags: ["audit"],
      summary: "The audit trail as JSON Lines, newest first, streamed page by page",
      description:
        `The events \`GET /v1/audit\` pages, one JSON object a line, at most ${AUDIT_EXPORT_MAX} events and ` +
        `${AUDIT_EXPORT_MAX_BYTES / 1024 / 1024} MiB of lines: to go on, ask again with \`until\` = the last line's \`at\` ` +
        "(that millisecond's events come again: skip the ids already had).",
      request: { query: AuditFilterQuery },
      responses: {
        200: {
          content: { "application/x-ndjson": { schema: AuditEventView } },
          description: "One event a line",
        },
      },
    }),
    async (c) => {
      const filter = await auditFilterOf(deps.store, c.req.valid("query"), deps.auditRetentionDays);
      c.header("content-type", "application/x-ndjson");
      c.header("cache-control", "no-store");
      const logger = c.get("logger");
      const maxBytes = deps.auditExportMaxBytes ?? AUDIT_EXPORT_MAX_BYTES;
      return stream(
        c,
        async (out) => {
          let sent = 0;
          let bytes = 0;
          let full = false;
          let cursor: string | undefined;
          while (!out.aborted && !full && sent < AUDIT_EXPORT_MAX) {
            const limit = Math.min(AUDIT_PAGE.max, AUDIT_EXPORT_MAX - sent);
            const page = await deps.store.audit.query(filter, { limit, cursor });
            const lines: string[] = [];
            for (const event of page.events) {
              const line = `${JSON.stringify(event)}\n`;
              bytes += Buffer.byteLength(line);
              full = bytes > maxBytes;
              if (full) break;
              lines.push(line);
            }
            if (lines.length > 0) await out.write(lines.join(""));
            sent += lines.length;
            if (page.cursor === null) break;
            cursor = page.cursor;
          }
        },
        // Headers are sent: the stream ends short, and the log says why (no value in it).
        async (error) => logger.warn("audit export ended early", errorFields(error)),
      ) as never;
    },
  );
}
