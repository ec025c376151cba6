/**
 * The audit trail's event: one per tool call (every plane) and one per admin change. It names who,
 * from where, on what, how it ended and how long it took — and never a value: arguments by their key
 * names only, admin changes by the names of the fields they changed.
 */
import { randomBytes } from "node:crypto";

/** Where an audited call or change came in. */
export const AUDIT_PLANES = ["rest", "mcp", "mcp_server", "mcp_set", "console", "admin"] as const;
export type AuditPlane = (typeof AUDIT_PLANES)[number];

/** Who acted: the admin (by subject when signed in through a provider), a key, or an OAuth user. */
export type AuditPrincipal =
  | { kind: "admin"; sub?: string }
  | { kind: "key"; keyId: string; keyName?: string }
  | { kind: "user"; sub: string };

/** One audit event. `call` events carry the tool fields; `change` events the change fields. */
export interface AuditEvent {
  /** Unique and ordered by time: {@link auditEventId}. */
  id: string;
  /** When it ended (ISO 8601). */
  at: string;
  type: "call" | "change";
  principal: AuditPrincipal;
  /** The caller's address, when known. */
  source?: string;
  plane: AuditPlane;
  serverId?: string;
  serverName?: string;
  /** The tool's name on its server (calls). */
  tool?: string;
  /** The tool set the call came through (`/mcp/sets/{name}`). */
  toolset?: string;
  /** `ok`, `tool_error`, `input_required`, or the error code it ended with. */
  outcome: string;
  durationMs: number;
  requestBytes?: number;
  responseBytes?: number;
  /** The call's argument key names (top level), never their values. */
  argumentKeys?: string[];
  /** The W3C trace id of the call (32 hex). */
  traceId?: string;
  /** What an admin change did, e.g. `server.update`, `key.create`, `change.approve`. */
  action?: string;
  /** What an admin change acted on. */
  resource?: { type: string; id: string; name?: string };
  /** The names of the fields an admin change set or changed (never their values). */
  fields?: string[];
}

/** Where audit events go: recording never waits and never throws (the sink batches and writes later). */
export interface AuditLog {
  record(event: AuditEvent): void;
}

/** This process's part of every event id it makes: random, so two processes' ids never meet. */
const PROCESS_PART = randomBytes(5).toString("hex");
let sequence = 0;

/**
 * An event id that sorts by time: the end time in ms (12 hex digits, zero-padded), then 16 hex digits
 * that make it unique — this process's random part and a counter — so ids of one millisecond differ, a
 * page cursor can be an id, and making one costs no call into the system's random source.
 */
export function auditEventId(at: number): string {
  sequence = (sequence + 1) % 0x1000000;
  return `${Math.max(0, Math.floor(at)).toString(16).padStart(12, "0")}${PROCESS_PART}${sequence.toString(16).padStart(6, "0")}`;
}
