/**
 * The cost model's pure parts (scripts/bench/cost.ts measures; prices are in scripts/bench/aws-prices.ts):
 *
 * - metering: what a DynamoDB request consumes in request units, judged from the request and its answer
 *   as they pass on the wire (item sizes by DynamoDB's rules, consistency, transactions, the indexes an
 *   item is in), and under which line it counts (`DynamoDB.Query`, `DynamoDB.Query (change feed)`…);
 * - usage: those lines summed over a window of time, less the background, per operation;
 * - money: usage × unit prices → dollars, Lambda's billed duration and capacity.
 */

import { inflateRawSync } from "node:zlib";
import type { AwsExchange } from "../lib/aws-counter";

// ─── Sizes and units ─────────────────────────────────────────────────────────────────────────────────

/** A DynamoDB attribute value as the wire carries it: `{ S: "…" }`, `{ N: "1" }`, `{ M: {…} }`… */
export type WireValue = Record<string, unknown>;
export type WireItem = Record<string, WireValue>;

/** A read request unit covers 4 KB (strongly consistent; an eventually consistent read is half one). */
export const READ_UNIT_BYTES = 4096;
/** A write request unit covers 1 KB. */
export const WRITE_UNIT_BYTES = 1024;

const utf8 = (text: string) => Buffer.byteLength(text, "utf8");

/** A number's size: one byte per two significant digits, and one. */
function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, "")
    .replace(/e.*$/i, "")
    .replace(".", "")
    .replace(/^0+/, "")
    .replace(/0+$/, "");
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** An attribute value's size by DynamoDB's rules (what capacity and storage are charged by). */
export function valueSize(value: WireValue): number {
  const [type, inner] = Object.entries(value)[0] ?? [];
  switch (type) {
    case "S":
      return utf8(String(inner));
    case "N":
      return numberSize(String(inner));
    case "B":
      return Buffer.from(String(inner), "base64").length;
    case "BOOL":
    case "NULL":
      return 1;
    case "SS":
      return (inner as string[]).reduce((sum, text) => sum + utf8(text), 0);
    case "NS":
      return (inner as string[]).reduce((sum, text) => sum + numberSize(text), 0);
    case "BS":
      return (inner as string[]).reduce((sum, text) => sum + Buffer.from(text, "base64").length, 0);
    case "L":
      return 3 + (inner as WireValue[]).reduce((sum, element) => sum + 1 + valueSize(element), 0);
    case "M":
      return (
        3 +
        Object.entries(inner as WireItem).reduce(
          (sum, [name, element]) => sum + 1 + utf8(name) + valueSize(element),
          0,
        )
      );
    default:
      return 0;
  }
}

/** An item's size: its attribute names and values. */
export function itemSize(item: WireItem): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0);
}

/** Read units of reading `bytes` (one request, or one item of a batch): at least one unit's worth. */
export function readUnits(bytes: number, consistent: boolean): number {
  return Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * (consistent ? 1 : 0.5);
}

/** Write units of writing one item of `bytes` (the larger of before and after). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));
}

// ─── Metering ────────────────────────────────────────────────────────────────────────────────────────

/** A global secondary index: its keys and what it projects (every write of an item in it is written again). */
export interface IndexShape {
  name: string;
  hashKey: string;
  rangeKey: string;
  projection: "all" | "keys";
}

/** The table as the meter needs it, and the lines it names apart. */
export interface TableShape {
  partitionKey: string;
  sortKey: string;
  indexes: IndexShape[];
  /**
   * Requests counted under a line of their own (`<operation> (<suffix>)`): by the index a query reads,
   * or by the keys of the items a write writes (`pkPrefix`, and `sk` when given).
   */
  lines: Array<{ suffix: string; index?: string; pkPrefix?: string; sk?: string }>;
  /** Audit items: their partition-key prefix and the attribute holding their events (a JSON array). */
  audit?: { pkPrefix: string; eventsAttribute: string };
}

/** What one request consumed, as the model counts it. */
export interface Metered {
  /** `DynamoDB.Query`, `DynamoDB.Query (change feed)`, `KMS.Decrypt`, `SQS.SendMessageBatch`… */
  line: string;
  readUnits: number;
  /** Table and index writes together. */
  writeUnits: number;
  /** Request and answer bodies. */
  wireBytes: number;
  /** Audit items written (packs), the events they hold and their bytes. */
  audit?: AuditWrites;
}

export interface AuditWrites {
  items: number;
  events: number;
  bytes: number;
  writeUnits: number;
  /** Packs holding one event: their count, bytes and write units (what a Lambda invocation writes). */
  singles: number;
  singleBytes: number;
  singleWriteUnits: number;
}

/** What the meter knows of an item it saw whole: its size, and each attribute's value as JSON. */
export interface KnownItem {
  size: number;
  attributes: Map<string, string>;
}
type Known = KnownItem;

/**
 * A ring item's size once all `slots` of it are filled (a latency history's: one attribute per slot,
 * named like `s12`), from one holding some: the rest of the item, and the mean slot's size times `slots`.
 * An update of a ring is charged the whole item's size, so a young ring understates what it will cost.
 */
export function filledRingSize(item: KnownItem, slots: number, slotName = /^s\d+$/): number {
  let rest = 0;
  const slotSizes: number[] = [];
  for (const [name, json] of item.attributes) {
    let value: WireValue;
    try {
      value = JSON.parse(json) as WireValue;
    } catch {
      continue; // set by an expression the meter could not read: left out
    }
    const size = utf8(name) + valueSize(value);
    if (slotName.test(name)) slotSizes.push(size);
    else rest += size;
  }
  if (slotSizes.length === 0) return item.size;
  return rest + (slotSizes.reduce((total, size) => total + size, 0) / slotSizes.length) * slots;
}

type Json = Record<string, unknown>;

/**
 * Turns exchanges into {@link Metered} requests. It remembers the items it sees whole (written, or read
 * without a projection), so an update or delete is charged by the item's size, and an index write is
 * counted only for an item in that index. Judgements (stated by the bench): a write is charged by the
 * item's size after it (or before, if larger, when known); an index entry is one more write of the
 * projected item, two when the write changes its index key (delete and put); a transactional write or
 * condition check costs twice; a read of a projection costs the whole item when its size is known; a
 * filtered query costs what it scanned (its returned bytes × scanned / returned).
 */
export class Meter {
  private readonly known = new Map<string, Known>();

  constructor(private readonly shape: TableShape) {}

  meter(exchange: AwsExchange): Metered {
    const wireBytes = exchange.request.length + exchange.response.length;
    const [service, action = ""] = exchange.operation.split(".");
    const none: Metered = { line: exchange.operation, readUnits: 0, writeUnits: 0, wireBytes };
    if (service !== "DynamoDB") return none;
    let request: Json;
    let response: Json;
    try {
      request = JSON.parse(exchange.request.toString("utf8") || "{}") as Json;
      response = JSON.parse(exchange.response.toString("utf8") || "{}") as Json;
    } catch {
      return none;
    }
    // A refused condition still consumes its write; any other error consumes nothing.
    const refused =
      exchange.status === 400 &&
      /ConditionalCheckFailed|TransactionCanceled/.test(String(response.__type ?? ""));
    if (exchange.status >= 400 && !refused) return none;
    switch (action) {
      case "GetItem":
        return this.getItem(exchange.operation, request, response, wireBytes);
      case "BatchGetItem":
        return this.batchGet(exchange.operation, request, response, wireBytes);
      case "TransactGetItems":
        return this.transactGet(exchange.operation, request, response, wireBytes);
      case "Query":
      case "Scan":
        return this.query(exchange.operation, request, response, wireBytes);
      case "PutItem":
      case "UpdateItem":
      case "DeleteItem":
      case "TransactWriteItems":
      case "BatchWriteItem":
        return this.writes(exchange.operation, action, request, response, wireBytes, refused);
      default:
        return none; // DescribeTable, CreateTable…: the control plane, not charged per request
    }
  }

  /**
   * Stored bytes of the items known whose partition key starts with one of `prefixes`: the table's
   * (100 bytes of overhead an item) and their index entries' (the same overhead, and what they project).
   */
  storedBytes(prefixes: string[]): { items: number; tableBytes: number; indexBytes: number } {
    let items = 0;
    let tableBytes = 0;
    let indexBytes = 0;
    for (const [key, known] of this.known) {
      if (!prefixes.some((prefix) => key.startsWith(prefix))) continue;
      items++;
      tableBytes += known.size + 100;
      for (const index of this.shape.indexes)
        if (inIndex(known, index)) indexBytes += 100 + (index.projection === "all" ? known.size : 64);
    }
    return { items, tableBytes, indexBytes };
  }

  /** The items known whose partition key starts with `pkPrefix` (and whose sort key is `sk`). */
  itemsUnder(pkPrefix: string, sk?: string): KnownItem[] {
    const items: KnownItem[] = [];
    for (const [key, known] of this.known) {
      const [pk = "", itemSk = ""] = key.split("\u0000");
      if (pk.startsWith(pkPrefix) && (sk === undefined || itemSk === sk))
        items.push({ size: known.size, attributes: new Map(known.attributes) });
    }
    return items;
  }

  private keyOf(item: WireItem | undefined): string {
    const plain = (value: WireValue | undefined) => String(value?.S ?? value?.N ?? "");
    return `${plain(item?.[this.shape.partitionKey])}\u0000${plain(item?.[this.shape.sortKey])}`;
  }

  private remember(item: WireItem): Known {
    const known: Known = { size: itemSize(item), attributes: plainAttributes(item) };
    this.known.set(this.keyOf(item), known);
    return known;
  }

  private lineFor(operation: string, keys: { index?: string; key?: string }): string {
    const [pk = "", sk = ""] = (keys.key ?? "").split("\u0000");
    for (const line of this.shape.lines) {
      if (line.index !== undefined && line.index === keys.index) return `${operation} (${line.suffix})`;
      if (
        line.pkPrefix !== undefined &&
        keys.key !== undefined &&
        pk.startsWith(line.pkPrefix) &&
        (line.sk === undefined || sk === line.sk)
      )
        return `${operation} (${line.suffix})`;
    }
    return operation;
  }

  private getItem(operation: string, request: Json, response: Json, wireBytes: number): Metered {
    const item = response.Item as WireItem | undefined;
    const key = this.keyOf(request.Key as WireItem);
    let size = item ? itemSize(item) : 0;
    if (item && request.ProjectionExpression === undefined) this.remember(item);
    else size = this.known.get(key)?.size ?? size;
    return {
      line: this.lineFor(operation, { key }),
      readUnits: readUnits(size, request.ConsistentRead === true),
      writeUnits: 0,
      wireBytes,
    };
  }

  private batchGet(operation: string, request: Json, response: Json, wireBytes: number): Metered {
    let units = 0;
    const asked = (request.RequestItems ?? {}) as Record<string, Json>;
    const answered = (response.Responses ?? {}) as Record<string, WireItem[]>;
    const unprocessed = (response.UnprocessedKeys ?? {}) as Record<string, Json>;
    for (const [table, spec] of Object.entries(asked)) {
      const consistent = spec.ConsistentRead === true;
      const items = answered[table] ?? [];
      for (const item of items) {
        if (spec.ProjectionExpression === undefined) this.remember(item);
        units += readUnits(this.known.get(this.keyOf(item))?.size ?? itemSize(item), consistent);
      }
      const missing =
        ((spec.Keys as unknown[]) ?? []).length -
        items.length -
        ((unprocessed[table]?.Keys as unknown[]) ?? []).length;
      units += Math.max(0, missing) * readUnits(0, consistent);
    }
    return { line: operation, readUnits: units, writeUnits: 0, wireBytes };
  }

  private transactGet(operation: string, request: Json, response: Json, wireBytes: number): Metered {
    const gets = (request.TransactItems ?? []) as Json[];
    const answers = (response.Responses ?? []) as Json[];
    const units = gets.reduce<number>((sum, _get, i) => {
      const item = answers[i]?.Item as WireItem | undefined;
      return sum + 2 * readUnits(item ? itemSize(item) : 0, true);
    }, 0);
    return { line: operation, readUnits: units, writeUnits: 0, wireBytes };
  }

  private query(operation: string, request: Json, response: Json, wireBytes: number): Metered {
    const index = request.IndexName as string | undefined;
    const items = (response.Items ?? []) as WireItem[];
    const projected = request.ProjectionExpression !== undefined || request.Select === "COUNT";
    const whole =
      !projected &&
      (index === undefined || this.shape.indexes.find((i) => i.name === index)?.projection === "all");
    let bytes = 0;
    for (const item of items) {
      if (whole) this.remember(item);
      // A base-table read of a projection is charged for the whole item (when the meter knows it).
      bytes += (index === undefined ? this.known.get(this.keyOf(item))?.size : undefined) ?? itemSize(item);
    }
    const count = Number(response.Count ?? items.length);
    const scanned = Number(response.ScannedCount ?? count);
    if (count > 0 && scanned > count) bytes *= scanned / count;
    const consistent = index === undefined && request.ConsistentRead === true;
    const firstKey = items[0] && index === undefined ? this.keyOf(items[0]) : undefined;
    return {
      line: this.lineFor(operation, { ...(index ? { index } : {}), ...(firstKey ? { key: firstKey } : {}) }),
      readUnits: readUnits(bytes, consistent),
      writeUnits: 0,
      wireBytes,
    };
  }

  private writes(
    operation: string,
    action: string,
    request: Json,
    response: Json,
    wireBytes: number,
    refused: boolean,
  ): Metered {
    const writes: Array<{ kind: "put" | "update" | "delete" | "check"; body: Json; transactional: boolean }> =
      [];
    switch (action) {
      case "PutItem":
        writes.push({ kind: "put", body: request, transactional: false });
        break;
      case "UpdateItem":
        writes.push({ kind: "update", body: request, transactional: false });
        break;
      case "DeleteItem":
        writes.push({ kind: "delete", body: request, transactional: false });
        break;
      case "TransactWriteItems":
        for (const entry of (request.TransactItems ?? []) as Json[]) {
          const { Put, Update, Delete, ConditionCheck } = entry as Record<string, Json | undefined>;
          if (Put) writes.push({ kind: "put", body: Put, transactional: true });
          if (Update) writes.push({ kind: "update", body: Update, transactional: true });
          if (Delete) writes.push({ kind: "delete", body: Delete, transactional: true });
          if (ConditionCheck) writes.push({ kind: "check", body: ConditionCheck, transactional: true });
        }
        break;
      case "BatchWriteItem": {
        const unprocessed = new Set(
          Object.values((response.UnprocessedItems ?? {}) as Record<string, Json[]>)
            .flat()
            .map((entry) => JSON.stringify(entry)),
        );
        for (const entries of Object.values((request.RequestItems ?? {}) as Record<string, Json[]>)) {
          for (const entry of entries) {
            if (unprocessed.has(JSON.stringify(entry))) continue; // sent again, and counted then
            const { PutRequest, DeleteRequest } = entry as Record<string, Json | undefined>;
            if (PutRequest) writes.push({ kind: "put", body: PutRequest, transactional: false });
            if (DeleteRequest) writes.push({ kind: "delete", body: DeleteRequest, transactional: false });
          }
        }
        break;
      }
    }
    let units = 0;
    let audit: AuditWrites | undefined;
    let firstKey: string | undefined;
    for (const write of writes) {
      const item = write.kind === "put" ? (write.body.Item as WireItem) : undefined;
      const key = this.keyOf(item ?? (write.body.Key as WireItem));
      if (write.kind !== "check") firstKey ??= key; // a transaction's line: what it writes, not checks
      const written = this.write(write.kind, key, write.body, item, write.transactional, refused);
      units += written;
      if (item && this.shape.audit && key.startsWith(this.shape.audit.pkPrefix)) {
        audit ??= {
          items: 0,
          events: 0,
          bytes: 0,
          writeUnits: 0,
          singles: 0,
          singleBytes: 0,
          singleWriteUnits: 0,
        };
        const events = countEvents(item[this.shape.audit.eventsAttribute]);
        const bytes = itemSize(item);
        audit.items++;
        audit.events += events;
        audit.bytes += bytes;
        audit.writeUnits += written;
        if (events === 1) {
          audit.singles++;
          audit.singleBytes += bytes;
          audit.singleWriteUnits += written;
        }
      }
    }
    return {
      line: this.lineFor(operation, firstKey ? { key: firstKey } : {}),
      readUnits: 0,
      writeUnits: units,
      wireBytes,
      ...(audit ? { audit } : {}),
    };
  }

  /** The units of one item's write, table and indexes; what the meter knows of the item is updated. */
  private write(
    kind: "put" | "update" | "delete" | "check",
    key: string,
    body: Json,
    item: WireItem | undefined,
    transactional: boolean,
    refused: boolean,
  ): number {
    const factor = transactional ? 2 : 1;
    const before = this.known.get(key);
    if (kind === "check") return factor * writeUnits(before?.size ?? 0);
    let after: Known | undefined;
    const changed = new Set<string>();
    if (kind === "put" && item) {
      after = { size: itemSize(item), attributes: plainAttributes(item) };
      for (const [name, value] of after.attributes)
        if (before?.attributes.get(name) !== value) changed.add(name);
    } else if (kind === "update") {
      const { set, removed } = updatedNames(body);
      const values = (body.ExpressionAttributeValues ?? {}) as WireItem;
      const valuesSize = Object.values(values).reduce((sum, value) => sum + valueSize(value), 0);
      const attributes = new Map(before?.attributes ?? []);
      for (const name of removed) attributes.delete(name);
      for (const { name, value } of set) {
        const plain = value !== undefined && values[value] ? JSON.stringify(values[value]) : "?";
        if (plain === "?" || before?.attributes.get(name) !== plain) changed.add(name);
        attributes.set(name, plain);
      }
      for (const name of removed) changed.add(name);
      const keyItem = (body.Key ?? {}) as WireItem;
      after = { size: Math.max(before?.size ?? 0, itemSize(keyItem) + valuesSize), attributes };
    }
    const base = factor * writeUnits(Math.max(before?.size ?? 0, after?.size ?? 0));
    if (refused) return base; // nothing written: no index entry changes
    let indexUnits = 0;
    for (const index of this.shape.indexes) {
      const inBefore = before !== undefined && inIndex(before, index);
      const inAfter = after !== undefined && inIndex(after, index);
      if (!inBefore && !inAfter) continue;
      const entry =
        index.projection === "all"
          ? writeUnits(Math.max(after?.size ?? 0, before?.size ?? 0))
          : writeUnits(0);
      const keyChanged = changed.has(index.hashKey) || changed.has(index.rangeKey);
      // An entry whose key changes is deleted and put again; one that stays is written over when what
      // it projects changed (any attribute for ALL, only its keys otherwise); a new or gone one, once.
      if (inBefore && inAfter) {
        if (keyChanged) indexUnits += 2 * entry;
        else if (index.projection === "all" && changed.size > 0) indexUnits += entry;
      } else indexUnits += entry;
    }
    if (after) this.known.set(key, after);
    else this.known.delete(key);
    return base + indexUnits;
  }
}

function inIndex(known: Known, index: IndexShape): boolean {
  return known.attributes.has(index.hashKey) && known.attributes.has(index.rangeKey);
}

/** Each top-level attribute's value as a string (index keys are compared by it). */
function plainAttributes(item: WireItem): Map<string, string> {
  return new Map(Object.entries(item).map(([name, value]) => [name, JSON.stringify(value)]));
}

/** The events of an audit pack (a JSON array, deflated in a binary attribute, or in a string one). */
function countEvents(value: WireValue | undefined): number {
  try {
    const json =
      value?.B === undefined
        ? String(value?.S ?? "[]")
        : inflateRawSync(Buffer.from(String(value.B), "base64")).toString("utf8");
    const events = JSON.parse(json) as unknown;
    return Array.isArray(events) ? events.length : 1;
  } catch {
    return 1;
  }
}

/**
 * The top-level attributes an update expression sets (SET, ADD; with the value placeholder when one is
 * assigned as it is) and removes (REMOVE).
 */
export function updatedNames(body: Json): {
  set: Array<{ name: string; value?: string }>;
  removed: string[];
} {
  const expression = String(body.UpdateExpression ?? "");
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const set: Array<{ name: string; value?: string }> = [];
  const removed: string[] = [];
  const clauses = expression.split(/\b(SET|REMOVE|ADD|DELETE)\b/i);
  for (let i = 1; i < clauses.length; i += 2) {
    const verb = String(clauses[i]).toUpperCase();
    for (const part of splitTopLevel(String(clauses[i + 1] ?? ""))) {
      const [path = "", rest = ""] = part.trim().split(/\s*=\s*|\s+(?=:)/);
      const first = path.trim().split(/[.[]/)[0] ?? "";
      if (!first) continue;
      const name = first.startsWith("#") ? (names[first] ?? first) : first;
      const value = verb === "SET" && /^:[\w]+$/.test(rest.trim()) ? rest.trim() : undefined;
      if (verb === "REMOVE") removed.push(name);
      else if (verb !== "DELETE") set.push(value === undefined ? { name } : { name, value });
    }
  }
  return { set, removed };
}

/** Splits on commas outside parentheses (`a = if_not_exists(a, :z), b = :b`). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((part) => part.trim());
}

// ─── Usage ───────────────────────────────────────────────────────────────────────────────────────────

/** One line's requests and what they consumed. */
export interface LineUsage {
  requests: number;
  readUnits: number;
  writeUnits: number;
  wireBytes: number;
}

/** Requests by line, and the audit packs among them. */
export interface Usage {
  lines: Record<string, LineUsage>;
  audit: AuditWrites;
}

export function emptyUsage(): Usage {
  return {
    lines: {},
    audit: { items: 0, events: 0, bytes: 0, writeUnits: 0, singles: 0, singleBytes: 0, singleWriteUnits: 0 },
  };
}

/** Adds one metered request to `usage` (in place). */
export function addMetered(usage: Usage, metered: Metered): void {
  const line = usage.lines[metered.line] ?? { requests: 0, readUnits: 0, writeUnits: 0, wireBytes: 0 };
  usage.lines[metered.line] = line;
  line.requests++;
  line.readUnits += metered.readUnits;
  line.writeUnits += metered.writeUnits;
  line.wireBytes += metered.wireBytes;
  if (metered.audit)
    for (const field of Object.keys(usage.audit) as Array<keyof AuditWrites>)
      usage.audit[field] += metered.audit[field];
}

function combine(a: Usage, b: Usage, op: (x: number, y: number) => number): Usage {
  const out = emptyUsage();
  for (const name of new Set([...Object.keys(a.lines), ...Object.keys(b.lines)])) {
    const x = a.lines[name] ?? { requests: 0, readUnits: 0, writeUnits: 0, wireBytes: 0 };
    const y = b.lines[name] ?? { requests: 0, readUnits: 0, writeUnits: 0, wireBytes: 0 };
    out.lines[name] = {
      requests: op(x.requests, y.requests),
      readUnits: op(x.readUnits, y.readUnits),
      writeUnits: op(x.writeUnits, y.writeUnits),
      wireBytes: op(x.wireBytes, y.wireBytes),
    };
  }
  for (const field of Object.keys(out.audit) as Array<keyof AuditWrites>)
    out.audit[field] = op(a.audit[field], b.audit[field]);
  return out;
}

/** `a` − `b`, each figure at least 0 (a background estimate larger than what a window saw leaves 0). */
export function minus(a: Usage, b: Usage): Usage {
  return combine(a, b, (x, y) => Math.max(0, x - y));
}

export function plus(a: Usage, b: Usage): Usage {
  return combine(a, b, (x, y) => x + y);
}

/** Every figure × `k`. */
export function scaled(usage: Usage, k: number): Usage {
  return combine(usage, emptyUsage(), (x) => x * k);
}

/** Whether line `name` is what `pattern` names: the line, its `(suffix)`, or its service (`SQS`). */
function names(name: string, pattern: string): boolean {
  return name === pattern || name.endsWith(`(${pattern})`) || name.startsWith(`${pattern}.`);
}

/** `usage` without the lines `drop` names (see {@link names}); its audit figures are kept. */
export function without(usage: Usage, ...drop: string[]): Usage {
  const out = emptyUsage();
  out.audit = { ...usage.audit };
  for (const [name, line] of Object.entries(usage.lines))
    if (!drop.some((pattern) => names(name, pattern))) out.lines[name] = { ...line };
  return out;
}

/** `usage`'s lines that `keep` names (see {@link names}), no audit figures. */
export function only(usage: Usage, ...keep: string[]): Usage {
  const out = emptyUsage();
  for (const [name, line] of Object.entries(usage.lines))
    if (keep.some((pattern) => names(name, pattern))) out.lines[name] = { ...line };
  return out;
}

/** Read and write units per request of `usage` (0 when it holds none). */
export function perRequest(usage: Usage): { readUnits: number; writeUnits: number } {
  const requests = requestCount(usage);
  const { read, write } = unitsOf(usage);
  return requests > 0
    ? { readUnits: read / requests, writeUnits: write / requests }
    : { readUnits: 0, writeUnits: 0 };
}

/** All requests of `usage`. */
export function requestCount(usage: Usage): number {
  return Object.values(usage.lines).reduce((sum, line) => sum + line.requests, 0);
}

/** `usage` with the lines `pattern` names (see {@link names}) charged `writeUnits` a request. */
export function repriced(usage: Usage, pattern: string, writeUnits: number): Usage {
  const out = without(usage);
  for (const [name, line] of Object.entries(out.lines))
    if (names(name, pattern)) out.lines[name] = { ...line, writeUnits: line.requests * writeUnits };
  return out;
}

/** Requests of one service (`DynamoDB`, `KMS`, `SQS`), or of the lines matching `filter`. */
export function requestsOf(
  usage: Usage,
  service: string,
  filter: (line: string) => boolean = () => true,
): number {
  return Object.entries(usage.lines)
    .filter(([name]) => name.startsWith(`${service}.`) && filter(name))
    .reduce((sum, [, line]) => sum + line.requests, 0);
}

export function unitsOf(usage: Usage): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const line of Object.values(usage.lines)) {
    read += line.readUnits;
    write += line.writeUnits;
  }
  return { read, write };
}

export function wireBytesOf(usage: Usage): number {
  return Object.values(usage.lines).reduce((sum, line) => sum + line.wireBytes, 0);
}

/** KMS operations priced as asymmetric (the ECC token-signing key's). */
const ASYMMETRIC_KMS = new Set(["KMS.Sign", "KMS.Verify", "KMS.GetPublicKey"]);

// ─── Money ───────────────────────────────────────────────────────────────────────────────────────────

/** The unit prices the model uses (aws-prices.ts's shape, narrowed to what is read here). */
export interface UnitPrices {
  dynamodb: {
    perMillionWriteUnits: number;
    perMillionReadUnits: number;
    storagePerGbMonth: number;
    pitrPerGbMonth: number;
    perWcuHour: number;
    perRcuHour: number;
  };
  lambda: { perRequest: number; perGbSecond: { x86_64: number; arm64: number } };
  kms: { perSymmetricRequest: number; perAsymmetricRequest: number; perKeyMonth: number };
  sqs: { perRequest: number };
  cloudwatch: { logsIngestPerGb: number; perMetricMonth: number; perMetricMonthNext: number };
  fargate: { perVcpuHour: { x86_64: number; arm64: number }; perGbHour: { x86_64: number; arm64: number } };
  vpc: { natGatewayPerHour: number; natPerGbProcessed: number };
}

export type Architecture = "arm64" | "x86_64";

/** A function as deployed: its memory and architecture. */
export interface FunctionShape {
  memoryMb: number;
  arch: Architecture;
}

/** The model's assumptions: what is not measured here (each printed with the results). */
export interface Assumptions {
  /** Lambda gives a whole vCPU at this memory, a share below it (CPU-bound time stretches by its inverse). */
  fullVcpuMemoryMb: number;
  /** One awaited DynamoDB / KMS / SQS request's round trip from a function, ms. */
  awsLatencyMs: number;
  /** The upstream's answer to a tool call, ms (Lambda bills the wait). */
  upstreamMs: number;
  /** Round trips to the upstream of a liveness check and of a full probe. */
  upstreamRoundTrips: { check: number; probe: number };
  /** HTTP headers (SigV4 and the rest) of one AWS request and its answer, bytes (NAT processes them). */
  headerBytesPerAwsRequest: number;
  /** Log bytes one invocation writes: Lambda's START/END/REPORT lines and the EMF metric lines. */
  logBytesPerInvocation: number;
  /** Days the audit events are kept (AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /** Servers registered when pricing the gateway's directory reads. */
  directoryServers: number;
  /** A busy gateway environment reads everything this often, s. */
  directoryFullReadSeconds: number;
  /** The worker's jobs per invocation (the queue's batch is up to 10; spread jobs arrive a few at a time). */
  workerJobsPerInvocation: number;
  /** SQS requests of the worker's event-source mapping per invocation (a receive and a batch delete). */
  sqsRequestsPerWorkerInvocation: number;
  /** SQS batches the sweep sends at once (SEND_CONCURRENCY, packages/aws/src/jobs.ts). */
  sweepSendConcurrency: number;
  hoursPerMonth: number;
}

/** One line of a bill. */
export interface CostLine {
  id: string;
  what: string;
  dollars: number;
}

/** Billed ms of an invocation: CPU (stretched below a whole vCPU), awaited AWS requests, other waits. */
export function billedMs(
  cpuMs: number,
  fn: FunctionShape,
  awaitedAwsRequests: number,
  waitMs: number,
  a: Pick<Assumptions, "fullVcpuMemoryMb" | "awsLatencyMs">,
): number {
  return cpuMs * Math.max(1, a.fullVcpuMemoryMb / fn.memoryMb) + awaitedAwsRequests * a.awsLatencyMs + waitMs;
}

/** Lambda's charge for `invocations` of `ms` each: requests and GB-seconds. */
export function lambdaDollars(
  invocations: number,
  ms: number,
  fn: FunctionShape,
  p: UnitPrices,
): { requests: number; duration: number } {
  return {
    requests: invocations * p.lambda.perRequest,
    duration: invocations * (Math.ceil(ms) / 1000) * (fn.memoryMb / 1024) * p.lambda.perGbSecond[fn.arch],
  };
}

/** What `usage` costs in DynamoDB units, KMS and SQS requests, and NAT processing of its bytes. */
export function usageDollars(
  usage: Usage,
  p: UnitPrices,
  a: Pick<Assumptions, "headerBytesPerAwsRequest">,
): { reads: number; writes: number; kms: number; sqs: number; nat: number } {
  const { read, write } = unitsOf(usage);
  const asymmetric = requestsOf(usage, "KMS", (line) => ASYMMETRIC_KMS.has(line));
  const symmetric = requestsOf(usage, "KMS") - asymmetric;
  const requests = Object.values(usage.lines).reduce((sum, line) => sum + line.requests, 0);
  const bytes = wireBytesOf(usage) + requests * a.headerBytesPerAwsRequest;
  return {
    reads: (read / 1e6) * p.dynamodb.perMillionReadUnits,
    writes: (write / 1e6) * p.dynamodb.perMillionWriteUnits,
    kms: symmetric * p.kms.perSymmetricRequest + asymmetric * p.kms.perAsymmetricRequest,
    sqs: requestsOf(usage, "SQS") * p.sqs.perRequest,
    nat: (bytes / 1e9) * p.vpc.natPerGbProcessed,
  };
}

/** CloudWatch's monthly charge for `metrics` custom metrics (the first 10,000 at one price, then another). */
export function metricsDollars(metrics: number, p: UnitPrices): number {
  const first = Math.min(metrics, 10_000);
  return first * p.cloudwatch.perMetricMonth + Math.max(0, metrics - first) * p.cloudwatch.perMetricMonthNext;
}

/** A month's storage of table and index bytes; continuous backups (PITR) are charged on the table's. */
export function storageDollars(tableBytes: number, indexBytes: number, p: UnitPrices): number {
  const gb = 1024 ** 3;
  return (
    ((tableBytes + indexBytes) / gb) * p.dynamodb.storagePerGbMonth +
    (tableBytes / gb) * p.dynamodb.pitrPerGbMonth
  );
}

/** The bill's largest line. */
export function largest(lines: CostLine[]): CostLine {
  return lines.reduce((max, line) => (line.dollars > max.dollars ? line : max));
}

export function sum(lines: CostLine[]): number {
  return lines.reduce((total, line) => total + line.dollars, 0);
}

/** A measured operation: per operation, its usage (background taken out) and the stack's CPU. */
export interface OpFigure {
  count: number;
  usage: Usage;
  cpuMs: number;
}

/** What a warm call on one path costs deployed: per call, the gateway function's and its requests'. */
export interface WarmCallInputs {
  call: OpFigure;
  /** One audit event's pack (a Lambda invocation writes its event alone): write units and bytes. */
  auditPack: { writeUnits: number; bytes: number };
  /** A busy gateway process's looks at the change feed: how many a second, and the read units of one. */
  feed: { looksPerSecond: number; readUnits: number };
  /** A full read of the directory, per server registered: read units. */
  fullReadUnitsPerServer: number;
  /** One write of a server's calls history (a busy environment's, once per server and 10 s). */
  callsHistoryWriteUnits: number;
  gateway: FunctionShape;
}

/** The lines of a million warm calls on one path, and the call's billed ms. */
export function millionWarmCalls(
  input: WarmCallInputs,
  p: UnitPrices,
  a: Assumptions,
): { lines: CostLine[]; billedMs: number } {
  const N = 1_000_000;
  const { call } = input;
  // The call's own requests and the audit flush the invocation awaits.
  const awaited = requestCount(call.usage) + 1;
  const ms = billedMs(call.cpuMs, input.gateway, awaited, a.upstreamMs, a);
  const lambda = lambdaDollars(N, ms, input.gateway, p);
  const own = usageDollars(scaled(call.usage, N), p, a);
  // A busy environment: one look at the feed per second, a full read every 5 min, a history write per
  // server every 10 s — per call, that is the call's share of the environment's time.
  const busySeconds = (N * ms) / 1000;
  const feeds = busySeconds * input.feed.looksPerSecond;
  const fullReads = busySeconds / a.directoryFullReadSeconds;
  const historyWrites = busySeconds / 10;
  const wru = p.dynamodb.perMillionWriteUnits / 1e6;
  const rru = p.dynamodb.perMillionReadUnits / 1e6;
  const auditBytes = N * (input.auditPack.bytes + 100); // the item, and its byKind entry as large
  const auditRequestBytes = N * (input.auditPack.bytes * 1.3 + a.headerBytesPerAwsRequest);
  const lines: CostLine[] = [
    {
      id: "lambda-duration",
      what: `gateway Lambda duration (${ms.toFixed(1)} ms billed each)`,
      dollars: lambda.duration,
    },
    { id: "lambda-requests", what: "gateway Lambda requests", dollars: lambda.requests },
    {
      id: "audit-write",
      what: "audit event writes (one pack per invocation, and its index entry)",
      dollars: N * input.auditPack.writeUnits * wru,
    },
    {
      id: "audit-storage",
      what: `audit event storage (${a.auditRetentionDays} days, with PITR)`,
      dollars: storageDollars(auditBytes, auditBytes, p) * (a.auditRetentionDays / 30),
    },
    { id: "call-reads", what: "DynamoDB reads of the call", dollars: own.reads },
    { id: "call-writes", what: "DynamoDB writes of the call (rate-limit leases…)", dollars: own.writes },
    {
      id: "directory-feed",
      what: `directory: change-feed looks (${input.feed.looksPerSecond.toFixed(1)} a second per busy environment)`,
      dollars: feeds * input.feed.readUnits * rru,
    },
    {
      id: "directory-full",
      what: `directory: full reads (every ${a.directoryFullReadSeconds / 60} min per environment, ${a.directoryServers} servers)`,
      dollars: fullReads * input.fullReadUnitsPerServer * a.directoryServers * rru,
    },
    {
      id: "calls-history",
      what: "calls history writes (per environment, server and 10 s)",
      dollars: historyWrites * input.callsHistoryWriteUnits * wru,
    },
    { id: "kms", what: "KMS requests", dollars: own.kms },
    { id: "sqs", what: "SQS requests", dollars: own.sqs },
    {
      id: "nat",
      what: "NAT processing of the AWS requests' bytes",
      dollars: own.nat + (auditRequestBytes / 1e9) * p.vpc.natPerGbProcessed,
    },
    {
      id: "logs",
      what: `CloudWatch Logs (${a.logBytesPerInvocation} bytes per invocation)`,
      dollars: ((N * a.logBytesPerInvocation) / 1e9) * p.cloudwatch.logsIngestPerGb,
    },
  ];
  return { lines, billedMs: ms };
}

/** What keeping servers swept costs: the measured parts. */
export interface SweepInputs {
  /** The sweep function's run, as a function of the servers: fixed + per server (usage and CPU). */
  sweepFixed: OpFigure;
  sweepPerServer: OpFigure;
  /** One job of each kind in the worker (SQS as the dev poller does it: replaced by the model's). */
  check: OpFigure;
  probe: OpFigure;
  /** CloudWatch metrics per server that its probes report (names × label sets), and the label cap. */
  metricsPerServer: number;
  metricServerCap: number;
  /** Stored bytes per server (config, status, catalogue, histories, name claim): table, index entries. */
  storedPerServer: { tableBytes: number; indexBytes: number };
  sweep: FunctionShape & { everySeconds: number };
  worker: FunctionShape;
  /** A connected server gets a full probe once its tools were listed this long ago, ms. */
  maxListingAgeMs: number;
}

/** A month of sweeping `servers`, line by line. */
export function sweptMonth(servers: number, input: SweepInputs, p: UnitPrices, a: Assumptions): CostLine[] {
  const runs = (a.hoursPerMonth * 3600) / input.sweep.everySeconds;
  const probeShare = Math.min(1, (input.sweep.everySeconds * 1000) / input.maxListingAgeMs);
  const jobs = runs * servers;
  // The sweep function: fixed part and per-server part, its SQS sends (10 jobs a request) measured.
  const sweepUsage = plus(input.sweepFixed.usage, scaled(input.sweepPerServer.usage, servers));
  const sweepCpu = input.sweepFixed.cpuMs + input.sweepPerServer.cpuMs * servers;
  // Its per-server requests (job batches, list pages) go out a few at a time.
  const sweepAwaited =
    requestCount(input.sweepFixed.usage) +
    (requestCount(input.sweepPerServer.usage) * servers) / a.sweepSendConcurrency;
  const sweepMs = billedMs(sweepCpu, input.sweep, sweepAwaited, 0, a);
  const sweepLambda = lambdaDollars(runs, sweepMs, input.sweep, p);
  const sweepAws = usageDollars(scaled(sweepUsage, runs), p, a);
  // The worker: a job's own requests (its SQS ones replaced by the event-source mapping's), CPU, waits.
  const jobUsage = plus(
    scaled(without(input.check.usage, "SQS"), 1 - probeShare),
    scaled(without(input.probe.usage, "SQS"), probeShare),
  );
  const jobCpu = input.check.cpuMs * (1 - probeShare) + input.probe.cpuMs * probeShare;
  const jobAwaited = requestCount(jobUsage);
  const roundTrips = a.upstreamRoundTrips.check * (1 - probeShare) + a.upstreamRoundTrips.probe * probeShare;
  const perInvocation = a.workerJobsPerInvocation;
  // Jobs of one batch run side by side: CPU adds up, waits overlap.
  const workerMs = billedMs(jobCpu * perInvocation, input.worker, jobAwaited, roundTrips * a.upstreamMs, a);
  const invocations = jobs / perInvocation;
  const workerLambda = lambdaDollars(invocations, workerMs, input.worker, p);
  const workerAws = usageDollars(scaled(jobUsage, jobs), p, a);
  const workerSqs = invocations * a.sqsRequestsPerWorkerInvocation * p.sqs.perRequest;
  const metrics = Math.min(servers, input.metricServerCap + 1) * input.metricsPerServer;
  return [
    {
      id: "sweep-lambda",
      what: `sweep function (${runs.toFixed(0)} runs, ${sweepMs.toFixed(0)} ms billed each)`,
      dollars: sweepLambda.requests + sweepLambda.duration,
    },
    {
      id: "sweep-reads",
      what: "sweep function's DynamoDB (the server list, its run record)",
      dollars: sweepAws.reads + sweepAws.writes,
    },
    {
      id: "sweep-sqs",
      what: "sweep function's SQS (queue depth, jobs sent 10 a request)",
      dollars: sweepAws.sqs,
    },
    {
      id: "worker-requests",
      what: `worker Lambda requests (${(invocations / 1e6).toFixed(1)} M, ${perInvocation} job each)`,
      dollars: workerLambda.requests,
    },
    {
      id: "worker-duration",
      what: `worker Lambda duration (${workerMs.toFixed(0)} ms billed each)`,
      dollars: workerLambda.duration,
    },
    {
      id: "job-writes",
      what: `jobs' DynamoDB writes (${(1 - probeShare) * 100}% checks, ${probeShare * 100}% full probes)`,
      dollars: workerAws.writes,
    },
    { id: "job-reads", what: "jobs' DynamoDB reads", dollars: workerAws.reads },
    { id: "job-kms", what: "jobs' KMS requests (opening sealed headers)", dollars: workerAws.kms },
    {
      id: "job-sqs",
      what: `jobs' SQS receives and deletes (${a.sqsRequestsPerWorkerInvocation} per invocation)`,
      dollars: workerSqs,
    },
    {
      id: "metrics",
      what: `CloudWatch custom metrics (${metrics.toFixed(0)}: ${input.metricsPerServer} per server, up to ${input.metricServerCap} servers)`,
      dollars: metricsDollars(metrics, p),
    },
    {
      id: "logs",
      what: `CloudWatch Logs (${a.logBytesPerInvocation} bytes per invocation)`,
      dollars: (((runs + invocations) * a.logBytesPerInvocation) / 1e9) * p.cloudwatch.logsIngestPerGb,
    },
    { id: "nat", what: "NAT processing of the AWS requests' bytes", dollars: sweepAws.nat + workerAws.nat },
    {
      id: "storage",
      what: "DynamoDB storage of the servers (with PITR)",
      dollars: storageDollars(
        servers * input.storedPerServer.tableBytes,
        servers * input.storedPerServer.indexBytes,
        p,
      ),
    },
  ];
}

/** What `rate` warm calls a second need: functions and table capacity. */
export interface Capacity {
  concurrency: number;
  gbSecondsPerSecond: number;
  readUnitsPerSecond: number;
  writeUnitsPerSecond: number;
  /** Write units a second into the audit's one day partition (DynamoDB allows 1,000 per partition). */
  auditPartitionWriteUnits: number;
  kmsPerSecond: number;
  /** A month at this rate: on-demand table, or the same capacity provisioned. */
  onDemandMonthly: number;
  provisionedMonthly: number;
}

export function capacityAt(
  rate: number,
  input: WarmCallInputs,
  callBilledMs: number,
  p: UnitPrices,
  a: Assumptions,
): Capacity {
  const concurrency = (rate * callBilledMs) / 1000;
  const { read, write } = unitsOf(input.call.usage);
  const readUnitsPerSecond =
    rate * read +
    concurrency * input.feed.looksPerSecond * input.feed.readUnits +
    (concurrency * input.fullReadUnitsPerServer * a.directoryServers) / a.directoryFullReadSeconds;
  const auditTable = input.auditPack.writeUnits / 2; // the item; its index entry is the other half
  const writeUnitsPerSecond =
    rate * (write + input.auditPack.writeUnits) + (concurrency * input.callsHistoryWriteUnits) / 10;
  const seconds = a.hoursPerMonth * 3600;
  return {
    concurrency,
    gbSecondsPerSecond: concurrency * (input.gateway.memoryMb / 1024),
    readUnitsPerSecond,
    writeUnitsPerSecond,
    auditPartitionWriteUnits: rate * auditTable,
    kmsPerSecond: rate * requestsOf(input.call.usage, "KMS"),
    onDemandMonthly:
      ((readUnitsPerSecond * seconds) / 1e6) * p.dynamodb.perMillionReadUnits +
      ((writeUnitsPerSecond * seconds) / 1e6) * p.dynamodb.perMillionWriteUnits,
    provisionedMonthly:
      a.hoursPerMonth *
      (readUnitsPerSecond * p.dynamodb.perRcuHour + writeUnitsPerSecond * p.dynamodb.perWcuHour),
  };
}

/** The month's charges that do not depend on calls or servers. */
export function fixedMonth(
  deployment: {
    runner: { vcpu: number; memoryGb: number; arch: Architecture; minTasks: number };
    natGateways: number;
    kmsKeys: number;
  },
  p: UnitPrices,
  a: Pick<Assumptions, "hoursPerMonth">,
): CostLine[] {
  const { runner } = deployment;
  const task =
    runner.vcpu * p.fargate.perVcpuHour[runner.arch] + runner.memoryGb * p.fargate.perGbHour[runner.arch];
  return [
    {
      id: "runner",
      what: `stdio runner fleet at its minimum (${runner.minTasks} Fargate tasks of ${runner.vcpu} vCPU, ${runner.memoryGb} GB, ${runner.arch})`,
      dollars: runner.minTasks * task * a.hoursPerMonth,
    },
    {
      id: "nat-gateways",
      what: `NAT gateways (production: ${deployment.natGateways}, one per AZ; other stages run EC2 NAT instances)`,
      dollars: deployment.natGateways * p.vpc.natGatewayPerHour * a.hoursPerMonth,
    },
    {
      id: "kms-keys",
      what: `KMS keys (${deployment.kmsKeys}: sealing, token signing)`,
      dollars: deployment.kmsKeys * p.kms.perKeyMonth,
    },
  ];
}
