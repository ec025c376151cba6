/**
 * Every admin change is one audit event (`type: "change"`). A middleware on the admin routes times each
 * request that may change state and records how it ended (`ok`, or the error code it was answered
 * with); what it changed is noted by the handler or service that did it ({@link noteChange}: the
 * resource and the names of the fields it set or changed — never a value). A request that noted
 * nothing records one event on the resource its path names; one that noted several (an import) one
 * each; one that noted it changed nothing ({@link noteNoChange}: a dry run) none.
 */
import { type AuditEvent, type AuditLog, auditEventId, currentTraceId } from "@mcpgw/core";
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { auditPrincipal } from "../audit-principal";
import type { AppEnv } from "../env";
import { clientAddress } from "../throttle";

/** What one change did, as the code that made it says. */
export interface ChangeNote {
  /** The action when it is not the route's own (an import's `server.create` for each server). */
  action?: string;
  /** What it acted on (unknown only when it failed before it knew: a refused create). */
  resource?: { type: string; id: string; name?: string | undefined } | undefined;
  /** The server it concerns, when the resource is not the server itself (a pin approval). */
  server?: { id: string; name: string };
  /** The names of the fields it set or changed (see `changedFields`); none for a delete. */
  fields?: string[];
}

/** What the code of one request noted; one list per request. */
const notes = new WeakMap<Context, ChangeNote[]>();
/** Requests that changed nothing by design (dry runs). */
const unchanged = new WeakSet<Context>();

/** Notes a change the request made (recorded once the request ends, with its outcome). */
export function noteChange(c: Context, note: ChangeNote): void {
  notes.set(c, [...(notes.get(c) ?? []), note]);
}

/** Notes that the request changes nothing whatever it answers (a dry run): no event is recorded for it. */
export function noteNoChange(c: Context): void {
  unchanged.add(c);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The most field names one event lists (a body may hold thousands of header names; an item 400 KB). */
export const MAX_EVENT_FIELDS = 100;

/** `fields` as an event lists them: the first {@link MAX_EVENT_FIELDS}, then `+<n> more` when there are more. */
export function boundedFields(fields: string[]): string[] {
  if (fields.length <= MAX_EVENT_FIELDS) return fields;
  return [...fields.slice(0, MAX_EVENT_FIELDS), `+${fields.length - MAX_EVENT_FIELDS} more`];
}

/** The admin routes that change state: each one's action, and its resource's type and path parameter. */
const ROUTES: Readonly<Record<string, { action: string; type: string; param?: string }>> = {
  "POST /v1/servers": { action: "server.create", type: "server" },
  "POST /v1/servers/import": { action: "server.import", type: "server" },
  "PATCH /v1/servers/:id": { action: "server.update", type: "server", param: "id" },
  "DELETE /v1/servers/:id": { action: "server.delete", type: "server", param: "id" },
  "POST /v1/servers/:id/reconnect": { action: "server.reconnect", type: "server", param: "id" },
  "POST /v1/servers/:id/authorize": { action: "server.authorize", type: "server", param: "id" },
  "POST /v1/servers/:id/changes/:changeId/approve": {
    action: "change.approve",
    type: "change",
    param: "changeId",
  },
  "POST /v1/servers/:id/changes/:changeId/reject": {
    action: "change.reject",
    type: "change",
    param: "changeId",
  },
  "PUT /v1/secrets/:name": { action: "secret.put", type: "secret", param: "name" },
  "DELETE /v1/secrets/:name": { action: "secret.delete", type: "secret", param: "name" },
  "POST /v1/keys": { action: "key.create", type: "key" },
  "DELETE /v1/keys/:id": { action: "key.delete", type: "key", param: "id" },
  "PUT /v1/access/:subject": { action: "access.put", type: "access", param: "subject" },
  "DELETE /v1/access/:subject": { action: "access.delete", type: "access", param: "subject" },
  "POST /v1/toolsets": { action: "toolset.create", type: "toolset" },
  "PUT /v1/toolsets/:name": { action: "toolset.update", type: "toolset", param: "name" },
  "DELETE /v1/toolsets/:name": { action: "toolset.delete", type: "toolset", param: "name" },
};

const VERBS: Readonly<Record<string, string>> = {
  POST: "create",
  PUT: "put",
  PATCH: "update",
  DELETE: "delete",
};

/**
 * A route's action and resource type: as listed, else from its path — the collection's name in the
 * singular and the method's verb (`POST /v1/widgets` → `widget.create`), so no admin change goes unrecorded.
 */
export function routeAction(method: string, path: string): { action: string; type: string; param?: string } {
  const listed = ROUTES[`${method} ${path}`];
  if (listed) return listed;
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== "v1");
  const type = (segments[0] ?? "admin").replace(/s$/, "");
  const param = segments.at(-1)?.startsWith(":") ? segments.at(-1)?.slice(1) : undefined;
  const action = `${type}.${VERBS[method] ?? method.toLowerCase()}`;
  return param ? { action, type, param } : { action, type };
}

/** Records one `change` event per change each state-changing request made (see the module's doc). */
export function auditChanges(audit: AuditLog | undefined): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async function auditChanges(c, next) {
    if (!audit || SAFE_METHODS.has(c.req.method)) return next();
    const started = performance.now();
    await next();
    if (unchanged.has(c)) return;
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    const route = routeAction(c.req.method, c.req.routePath);
    const param = route.param ? c.req.param(route.param) : undefined;
    const noted: ChangeNote[] = notes.get(c) ?? [
      { resource: param ? { type: route.type, id: param } : undefined },
    ];
    const outcome = await outcomeOf(c);
    const principal = c.get("principal");
    const source = clientAddress(c);
    const traceId = currentTraceId();
    for (const note of noted) {
      const server = note.server ?? (note.resource?.type === "server" ? note.resource : undefined);
      const at = Date.now();
      const event: AuditEvent = {
        id: auditEventId(at),
        at: new Date(at).toISOString(),
        type: "change",
        principal: auditPrincipal(principal),
        plane: principal?.kind === "admin" && principal.via === "console" ? "console" : "admin",
        outcome,
        durationMs,
        action: note.action ?? route.action,
        ...(source ? { source } : {}),
        ...(server?.id ? { serverId: server.id } : {}),
        ...(server?.name ? { serverName: server.name } : {}),
        ...(traceId ? { traceId } : {}),
        ...(note.resource ? { resource: resourceOf(note.resource) } : {}),
        ...(note.fields ? { fields: boundedFields(note.fields) } : {}),
      };
      audit.record(event);
    }
  });
}

function resourceOf(resource: NonNullable<ChangeNote["resource"]>): NonNullable<AuditEvent["resource"]> {
  const { type, id, name } = resource;
  return name ? { type, id, name } : { type, id };
}

/** `ok`, or the code of the problem the request was answered with (`internal` when it has none). */
async function outcomeOf(c: Context): Promise<string> {
  if (c.res.status < 400) return "ok";
  try {
    const body = (await c.res.clone().json()) as { code?: unknown };
    if (typeof body.code === "string") return body.code;
  } catch {
    // Not a problem document: the status is all there is.
  }
  return c.res.status >= 500 ? "internal" : "request.invalid";
}
