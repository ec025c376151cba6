import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The most of one child's replies the runner holds (read, not yet sent to their callers) by default: 64 MiB. */
export const DEFAULT_CHILD_REPLY_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * The bytes of one child's replies the runner holds: read from the child's stdout and not yet sent to
 * the caller they answer. A request forwarded for a caller names its owner (the call, or the face
 * request) when it is sent; its reply is charged to that owner when it is read, and the owner releases
 * it once its answer has gone out. A reply that would take the total past the budget is refused (its
 * caller gets an error naming the limit) — except when nothing is held, so one reply of any size the
 * child may write always gets through. Replies to the runner's own requests (initialize, ping, its
 * probes) have no owner and are not charged.
 */
export class ReplyBudget {
  private held = 0;
  /** Bytes held per owner. */
  private readonly charged = new Map<string, number>();
  /** The owner of each request sent and not answered yet. */
  private readonly awaited = new Map<RequestId, string>();

  constructor(readonly maxBytes: number) {}

  /** Request `id` was sent to the child for `owner`: its reply will be charged to it. */
  expect(id: RequestId, owner: string): void {
    this.awaited.set(id, owner);
  }

  /** Whether a reply of `bytes` would be admitted whoever it answers. */
  fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.maxBytes;
  }

  /**
   * A reply of `bytes` to request `id` was read: true when it may be held (charged to its owner, if
   * any), false when it would take the bytes held past the budget.
   */
  admit(id: RequestId, bytes: number): boolean {
    const owner = this.awaited.get(id);
    if (owner === undefined) return true;
    this.awaited.delete(id);
    if (!this.fits(bytes)) return false;
    this.held += bytes;
    this.charged.set(owner, (this.charged.get(owner) ?? 0) + bytes);
    return true;
  }

  /** `owner`'s replies were sent (or dropped): their bytes are free again, and its requests forgotten. */
  release(owner: string): void {
    this.held -= this.charged.get(owner) ?? 0;
    this.charged.delete(owner);
    for (const [id, awaitedBy] of this.awaited) if (awaitedBy === owner) this.awaited.delete(id);
  }

  /** The bytes of replies held now. */
  get heldBytes(): number {
    return this.held;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
/** The longest id (or top-level key) read from a reply not parsed whole. */
const MAX_TOKEN_BYTES = 256;

/**
 * The id of the JSON-RPC response `line` (one JSON object), read without parsing the rest: its last
 * top-level `"id"`, as JSON.parse would take it. Undefined when the line is not a response (it has a
 * `method`, or neither `result` nor `error`), when its id is not a short string or a number, or when
 * it is malformed. Strings are skipped by indexOf, so a large reply is scanned in a few milliseconds.
 */
export function replyId(line: Buffer): string | number | undefined {
  let depth = 0;
  let expectKey = false;
  let key: string | undefined;
  let id: string | number | undefined;
  let answers = false;
  for (let i = 0; i < line.length; i++) {
    const byte = line[i] as number;
    if (byte === QUOTE) {
      const end = stringEnd(line, i);
      if (end === -1) return undefined;
      if (depth === 1 && expectKey) {
        key = shortString(line, i, end) ?? "";
        expectKey = false;
        if (key === "method") return undefined;
        if (key === "result" || key === "error") answers = true;
      } else if (depth === 1 && key === "id") id = shortString(line, i, end);
      i = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth++;
      if (depth === 1) expectKey = byte === OPEN_OBJECT;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
    else if (byte === COMMA && depth === 1) expectKey = true;
    else if (depth === 1 && key === "id" && isNumberByte(byte)) {
      let end = i;
      while (end < line.length && isNumberByte(line[end] as number)) end++;
      const value = Number(line.toString("latin1", i, end));
      id = Number.isFinite(value) ? value : undefined;
      i = end - 1;
    }
  }
  return answers && depth === 0 ? id : undefined;
}

/** The string whose quotes are at `start` and `end`, decoded — undefined when long or malformed. */
function shortString(line: Buffer, start: number, end: number): string | undefined {
  if (end - start > MAX_TOKEN_BYTES) return undefined;
  try {
    return JSON.parse(line.toString("utf8", start, end + 1)) as string;
  } catch {
    return undefined;
  }
}

function isNumberByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2b ||
    byte === 0x2e ||
    byte === 0x65 ||
    byte === 0x45
  );
}

/** Where the string opened at `start` closes (the index of its unescaped quote), or -1. */
function stringEnd(line: Buffer, start: number): number {
  for (let end = line.indexOf(QUOTE, start + 1); end !== -1; end = line.indexOf(QUOTE, end + 1)) {
    let slashes = 0;
    while (line[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
  }
  return -1;
}
