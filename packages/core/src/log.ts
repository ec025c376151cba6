/**
 * Structured JSON logs, one line per event on stderr (stdout belongs to protocols). Callers pass
 * only safe fields: ids, names, counts, durations, outcomes — never header/env values or bodies.
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

/** A logger writing to `sink` (stderr by default) at `level` and above. */
export function createLogger(
  options: { level?: LogLevel; sink?: (line: string) => void; base?: LogFields } = {},
): Logger {
  const level = options.level ?? "info";
  const sink = options.sink ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = options.base ?? {};
  const write = (at: LogLevel, msg: string, fields: LogFields = {}) => {
    if (ORDER[at] < ORDER[level]) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...base, ...fields }));
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger({ level, sink, base: { ...base, ...fields } }),
  };
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
