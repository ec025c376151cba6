/**
 * Structured JSON logs, one line per event on stderr (stdout belongs to protocols). Callers pass
 * only safe fields: ids, names, counts, durations, outcomes — never header/env values or bodies.
 * Lines are gathered and written together (one write per batch, at most {@link LOG_FLUSH_MS} later),
 * so a busy process does not pay a blocking write per line; {@link flushLogs} writes them at once, and
 * they are written before the process exits.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** How long a log line may wait in the buffer before it is written. */
export const LOG_FLUSH_MS = 10;
/** Buffered lines past this many characters are written at once. */
const MAX_PENDING_CHARS = 64 * 1024;

let pending = "";
let flushTimer: NodeJS.Timeout | undefined;
let exitHooked = false;

/**
 * Writes every buffered log line to stderr now. Call it before a Lambda invocation returns (the
 * environment may freeze right after); the process's exit does it by itself.
 */
export function flushLogs(): void {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = undefined;
  if (!pending) return;
  const text = pending;
  pending = "";
  process.stderr.write(text);
}

/** The default sink: stderr, a batch of lines per write. */
function bufferedStderr(line: string): void {
  pending += `${line}\n`;
  if (pending.length >= MAX_PENDING_CHARS) flushLogs();
  if (flushTimer || !pending) return;
  flushTimer = setTimeout(flushLogs, LOG_FLUSH_MS);
  flushTimer.unref();
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", flushLogs);
  }
}

/**
 * `handler` that flushes the log lines of each invocation before its answer goes back — after
 * `flushAlso` (e.g. the metrics, when due), if given.
 */
export function flushingLogs<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  flushAlso?: () => Promise<void>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } finally {
      await flushAlso?.();
      flushLogs();
    }
  };
}

/** A logger writing to `sink` (buffered stderr by default) at `level` and above. */
export function createLogger(
  options: { level?: LogLevel; sink?: (line: string) => void; base?: LogFields } = {},
): Logger {
  const base = options.base ?? {};
  return new JsonLogger(
    ORDER[options.level ?? "info"],
    options.sink ?? bufferedStderr,
    base,
    fieldsJson(base),
  );
}

/**
 * One logger: the level, the sink and the base fields, serialised once (a child's from its parent's
 * and its own). Methods live on the prototype: a child made per request or per call costs one object.
 */
class JsonLogger implements Logger {
  constructor(
    private readonly threshold: number,
    private readonly sink: (line: string) => void,
    private readonly base: LogFields,
    /** The base fields' JSON without its braces (`""` for none). */
    private readonly baseJson: string,
  ) {}

  debug(msg: string, fields?: LogFields): void {
    if (ORDER.debug >= this.threshold) this.write("debug", msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    if (ORDER.info >= this.threshold) this.write("info", msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    if (ORDER.warn >= this.threshold) this.write("warn", msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    if (ORDER.error >= this.threshold) this.write("error", msg, fields);
  }

  child(fields: LogFields): Logger {
    const base = { ...this.base, ...fields };
    // The parent's JSON and the child's own spliced (what stringifying the merged base would give),
    // unless the child replaces a base field: then the merged base is serialised whole.
    const json = overlapsBase(fields, this.base)
      ? fieldsJson(base)
      : joinJson(this.baseJson, fieldsJson(fields));
    return new JsonLogger(this.threshold, this.sink, base, json);
  }

  private write(at: LogLevel, msg: string, fields: LogFields | undefined): void {
    const time = isoNow();
    if (fields && overlaps(fields, this.base)) {
      this.sink(JSON.stringify({ time, level: at, msg, ...this.base, ...fields }));
      return;
    }
    const rest = fields ? joinJson(this.baseJson, fieldsJson(fields)) : this.baseJson;
    this.sink(`{"time":"${time}","level":"${at}","msg":${JSON.stringify(msg)}${rest ? `,${rest}` : ""}}`);
  }
}

/** An object's JSON without its braces. */
function fieldsJson(fields: LogFields): string {
  return JSON.stringify(fields).slice(1, -1);
}

function joinJson(a: string, b: string): string {
  return a && b ? `${a},${b}` : a || b;
}

/** Whether `fields` names a key `base` has already. */
function overlapsBase(fields: LogFields, base: LogFields): boolean {
  for (const key in fields) if (key in base) return true;
  return false;
}

const RESERVED = new Set(["time", "level", "msg"]);

/** Whether a line's fields name a key of the base (or a key of the line's own): then they replace it. */
function overlaps(fields: LogFields, base: LogFields): boolean {
  for (const key in fields) if (key in base || RESERVED.has(key)) return true;
  return false;
}

let lastMs = 0;
let lastIso = "";

/** The time now as ISO 8601, made once per millisecond. */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

/** An error's name and message, for a log line (never a stack with request data in it). */
export function errorFields(error: unknown): LogFields {
  return error instanceof Error
    ? { error: error.name, errorMessage: error.message }
    : { error: String(error) };
}

/** A byte count for people: `16 MiB`, `512 KiB`, `300 bytes`. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}
