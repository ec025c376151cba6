/**
 * The audit trail's writer: a call records its event into a bounded buffer (as its stored entry, one
 * string) and goes on; a timer (unref'd) writes the buffer in batches off the request path, to the
 * table or as log lines.
 */
import {
  AUDIT_PACK,
  AUDIT_PACKS_PER_REQUEST,
  type AuditEntry,
  auditEntry,
  type CheckState,
  checkStateOf,
  type Store,
} from "@mcpgw/aws";
import { type AuditEvent, type AuditLog, errorFields, type Logger, runAfterAnswer } from "@mcpgw/core";

/** How long the end of a Lambda invocation waits for its audit events to be written. */
export const AUDIT_INVOCATION_FLUSH_MS = 300;

/** The most events one write hands the store: as many full packs as one batch request carries. */
export const AUDIT_WRITE_EVENTS = AUDIT_PACK.events * AUDIT_PACKS_PER_REQUEST;

/** Where events go: the table (`store.audit`), or one JSON line each on stdout (`{"audit":{…}}`). */
export const AUDIT_SINKS = ["table", "log"] as const;
export type AuditSinkName = (typeof AUDIT_SINKS)[number];

export interface AuditWriterOptions {
  /** AUDIT_SINK (default `table`). */
  sink?: AuditSinkName;
  /** AUDIT_RETENTION_DAYS: each item's TTL (default 30). */
  retentionDays?: number;
  /** How often buffered events are written (default 1 s). */
  flushMs?: number;
  /** The most events held unwritten; past it the oldest are dropped and counted (default 10,000). */
  maxBuffered?: number;
  /**
   * Events per write (default {@link AUDIT_WRITE_EVENTS}: one table request of full packs — a write
   * of fewer events is a request of its own, and its cost is per request, not per event).
   */
  batchSize?: number;
  /** Tries of one batch before its events are given up (default 3). */
  attempts?: number;
  /** Where the `log` sink writes (default stdout). */
  writeLine?: (text: string) => void;
}

/** What the writer reports to `/readyz`: `ok`, or the state its last write failed in. */
export interface AuditHealth {
  state: CheckState;
  /** Events dropped from a full buffer, since start. */
  dropped: number;
  /** Events given up after their write kept failing, since start. */
  failed: number;
  /** Events too large to store whole, written shortened (see `auditEntry`), since start. */
  shortened: number;
}

/**
 * Batches events and writes them off the request path. `record` never waits and never throws; a
 * failed write is tried `attempts` times, then its events are logged as lost (counts, no values) and
 * the writer reports itself degraded until a write succeeds. `flush` writes what is buffered (a Lambda
 * invocation awaits it before it returns); `close` stops the timer and flushes.
 */
export class AuditWriter implements AuditLog {
  private buffer: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly health: AuditHealth = { state: "ok", dropped: 0, failed: 0, shortened: 0 };
  /** Drops since the last flush (logged by it). */
  private droppedSinceFlush = 0;
  /** Events shortened since the last flush (logged by it). */
  private shortenedSinceFlush = 0;
  private readonly options: Required<Omit<AuditWriterOptions, "writeLine">> &
    Pick<AuditWriterOptions, "writeLine">;

  constructor(
    private readonly store: Pick<Store, "audit">,
    private readonly logger: Logger,
    options: AuditWriterOptions = {},
  ) {
    this.options = {
      sink: "table",
      retentionDays: 30,
      flushMs: 1_000,
      maxBuffered: 10_000,
      batchSize: AUDIT_WRITE_EVENTS,
      attempts: 3,
      ...options,
    };
  }

  record(event: AuditEvent): void {
    const entry = auditEntry(event);
    if (entry.shortened) {
      this.health.shortened++;
      this.shortenedSinceFlush++;
    }
    this.buffer.push(entry);
    this.keepBound();
  }

  /** Drops (and counts) the oldest events past `maxBuffered`; the timer writes the rest. */
  private keepBound(): void {
    const over = this.buffer.length - this.options.maxBuffered;
    if (over > 0) {
      this.buffer.splice(0, over);
      this.health.dropped += over;
      this.droppedSinceFlush += over;
    }
    this.startTimer();
  }

  /** The writer's state for `/readyz`: `ok` until a write fails for good, and again once one succeeds. */
  status(): AuditHealth {
    return { ...this.health };
  }

  /**
   * Writes what is buffered, waiting at most `ms` (the end of a Lambda invocation): batches not begun
   * by then stay buffered for the next flush, and a batch under way goes on (the next invocation thaws
   * it). Never rejects.
   */
  async flushWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([this.flush(Date.now() + ms), late]);
    clearTimeout(timer);
  }

  /**
   * Writes every buffered event (after any write under way); resolves when done, never rejects. With a
   * `deadline` (epoch ms), the batches not begun by then are buffered again.
   */
  flush(deadline?: number): Promise<void> {
    runAfterAnswer(); // the events of answers already written, not yet recorded
    const due = this.buffer;
    this.buffer = [];
    if (this.droppedSinceFlush > 0) {
      this.logger.warn("audit events dropped: the buffer was full", { events: this.droppedSinceFlush });
      this.droppedSinceFlush = 0;
    }
    if (this.shortenedSinceFlush > 0) {
      this.logger.warn("audit events shortened: too large to store whole", {
        events: this.shortenedSinceFlush,
      });
      this.shortenedSinceFlush = 0;
    }
    if (due.length === 0) {
      this.stopTimer();
      return this.writing;
    }
    this.writing = this.writing.then(() => this.write(due, deadline));
    return this.writing;
  }

  /** Stops the timer and writes what is left (the process or invocation is ending). */
  async close(): Promise<void> {
    runAfterAnswer(); // first: recording them would start the timer again
    this.stopTimer();
    await this.flush();
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.flushMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async write(events: AuditEntry[], deadline?: number): Promise<void> {
    const { batchSize } = this.options;
    for (let start = 0; start < events.length; start += batchSize) {
      if (deadline !== undefined && Date.now() >= deadline) {
        this.requeue(events.slice(start));
        return;
      }
      const batch = events.slice(start, start + batchSize);
      const { failed, error } = await this.deliver(batch);
      if (failed === 0) {
        if (this.health.state !== "ok") this.logger.info("audit events written again");
        this.health.state = "ok";
        continue;
      }
      this.health.failed += failed;
      this.health.state = checkStateOf(error);
      if (this.health.state === "ok") this.health.state = "error";
      this.logger.warn("audit events not written", {
        events: failed,
        state: this.health.state,
        ...errorFields(error),
      });
    }
  }

  /**
   * Writes a batch, tried `attempts` times; a batch the table refuses as invalid (one item too large,
   * say) is written again in halves, and so on down to the event at fault, which alone is lost (a few
   * requests more, not one per event). Returns how many were not written.
   */
  private async deliver(batch: AuditEntry[]): Promise<{ failed: number; error?: unknown }> {
    let lastError: unknown;
    for (let attempt = 0; attempt < this.options.attempts; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2_000)));
      try {
        await this.send(batch);
        return { failed: 0 };
      } catch (error) {
        lastError = error;
        if (refusedAsInvalid(error)) break;
      }
    }
    if (!refusedAsInvalid(lastError) || batch.length === 1) return { failed: batch.length, error: lastError };
    // A pack of the batch already stored (another request of it went through) may be overwritten by a
    // half's pack with the same newest event; each of its events is in a pack its own half writes, so
    // one is lost only when that half's write fails, and then it is counted among the failed.
    const middle = Math.ceil(batch.length / 2);
    const older = await this.deliver(batch.slice(0, middle));
    const newer = await this.deliver(batch.slice(middle));
    return { failed: older.failed + newer.failed, error: older.error ?? newer.error };
  }

  /** Puts events not yet written back before the buffered ones (the oldest dropped past the bound). */
  private requeue(events: AuditEntry[]): void {
    this.buffer = [...events, ...this.buffer];
    this.keepBound();
  }

  private async send(batch: AuditEntry[]): Promise<void> {
    if (this.options.sink === "table") {
      await this.store.audit.append(batch, { retentionDays: this.options.retentionDays });
      return;
    }
    const text = batch.map((entry) => `{"audit":${entry.json}}\n`).join("");
    (this.options.writeLine ?? ((line: string) => process.stdout.write(line)))(text);
  }
}

/** True when the table refused a request as invalid: trying it again as it is cannot succeed. */
function refusedAsInvalid(error: unknown): boolean {
  return error instanceof Error && error.name === "ValidationException";
}

/** The writer AUDIT_SINK and AUDIT_RETENTION_DAYS name; none for `off` (nothing audited). */
export function createAuditWriter(
  store: Pick<Store, "audit">,
  logger: Logger,
  settings: { sink: AuditSinkName | "off"; retentionDays: number },
): AuditWriter | undefined {
  if (settings.sink === "off") return undefined;
  return new AuditWriter(store, logger, { sink: settings.sink, retentionDays: settings.retentionDays });
}

/** The audit health of whatever `audit` is: a writer's, or `ok` (no writer, or one of a test's). */
export function auditHealthOf(audit: AuditLog | undefined): AuditHealth | undefined {
  return audit instanceof AuditWriter ? audit.status() : undefined;
}
