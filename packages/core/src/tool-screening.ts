/**
 * Screening of a tool's new definition (issue 27): what a reviewer of a pending change should look
 * at. It flags, never decides: approving stays a person's call. The definition comes from an upstream
 * and is hostile, so every walk is bounded (depth, nodes, characters scanned) and every quote is
 * short and shows invisible characters as `U+XXXX`.
 */
import type { ToolInfo } from "./tool";

/** One thing a reviewer should look at: a stable rule id and a short human detail. */
export interface ScreeningFlag {
  rule: string;
  detail: string;
}

/** How deep the walk of a definition goes, how many values it visits, and what it reads of each string. */
export const SCREENING_LIMITS = {
  depth: 32,
  nodes: 5_000,
  charsPerString: 64 * 1024,
  totalChars: 1024 * 1024,
  flagsPerRule: 10,
  quote: 60,
} as const;

/** Zero-width, bidi controls and every other format (Cf) character, plus the tag block (U+E0000–E007F). */
const INVISIBLE = /[\p{Cf}\u{E0000}-\u{E007F}]/gu;
/** What a quote spells as `U+XXXX`: the invisible characters, controls, line separators, lone surrogates. */
const UNPRINTABLE = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u{E0000}-\u{E007F}]/gu;

/** Text addressed to the model rather than describing the tool. Every gap is bounded (no backtracking blow-up). */
const MODEL_INSTRUCTIONS: ReadonlyArray<{ what: string; pattern: RegExp }> = [
  {
    what: "tells the model to ignore its instructions",
    pattern:
      /\b(?:ignore|disregard|forget)\b[^.\n]{0,40}?\b(?:instructions?|prompts?|guidelines|directions)\b/i,
  },
  {
    what: "tells the model what it must do",
    pattern:
      /\byou\s+(?:must|should|need\s+to|have\s+to|are\s+required\s+to)\s+(?:always\s+|first\s+|also\s+)?(?:call|use|invoke|run|read|send|pass|include)\b/i,
  },
  {
    what: "asks for something before the tool is used",
    pattern:
      /\bbefore\s+(?:using|calling|invoking|running)\s+(?:this|the|any)\b[^\n]{0,80}?\b(?:read|call|send)\b/i,
  },
  {
    what: "mentions a sensitive file",
    pattern:
      /~\/\.ssh|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?:^|[\s"'`(/])\.env\b|\/etc\/(?:passwd|shadow)|\.aws\/credentials/i,
  },
  { what: "asks to read a file", pattern: /\bread\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:the\s+)?file\b/i },
  {
    what: "tells the model to call another tool",
    pattern:
      /\b(?:call|invoke|use|run)\s+(?:another|other|all\s+other|every\s+other)\s+tools?\b|\b(?:call|invoke)\s+(?:the\s+)?[`'"]?(?!this\b|the\b|a\b|that\b)[a-z][\w.-]{0,63}[`'"]?\s+tool\b|\b(?:call|invoke)\s+(?:the\s+)?(?:`[\w.-]{1,64}`|[a-z][a-z0-9]*_[\w.-]{1,63})/i,
  },
  {
    what: "asks to hide something from the user",
    pattern:
      /\b(?:do\s+not|don[’']?t|never)\s+(?:tell|mention|inform|notify|alert|reveal|show)\b[^.\n]{0,40}?\buser\b|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\b/i,
  },
  {
    what: "holds a prompt-style tag",
    pattern:
      /<\/?\s*(?:important|system|instructions?|admin|secret|hidden|assistant)\b[^<>]{0,40}>|<\|(?:im_start|im_end|system|endoftext)\|>/i,
  },
];

/** One string of a definition (a value or a key) and where it is, e.g. `inputSchema.properties.path.description`. */
interface Found {
  where: string;
  text: string;
}

/** What a reviewer should look at in a tool's new definition: flags, never a verdict. */
export function screenToolChange(before: ToolInfo | undefined, after: ToolInfo): ScreeningFlag[] {
  const { texts, whole } = stringsOf(after);
  const flags = [...invisibleUnicode(texts), ...modelInstructions(texts)];
  if (before) flags.push(...descriptionGrew(before, after, texts), ...schemaWidened(before, after));
  if (!whole) flags.push({ rule: "screening_incomplete", detail: INCOMPLETE });
  return flags;
}

const INCOMPLETE =
  `the definition is larger than screening reads (${SCREENING_LIMITS.depth} levels, ${SCREENING_LIMITS.nodes} values, ` +
  `${SCREENING_LIMITS.charsPerString / 1024} KiB a string, ${SCREENING_LIMITS.totalChars / 1024 / 1024} MiB in all): the rest was not screened`;

/** Every string and key in `value`, breadth-first, within the bounds; `whole` when nothing was left out. */
function stringsOf(value: unknown): { texts: Found[]; whole: boolean } {
  const texts: Found[] = [];
  let budget = SCREENING_LIMITS.totalChars;
  let whole = true;
  const keep = (where: string, text: string) => {
    const kept = text.slice(0, Math.min(SCREENING_LIMITS.charsPerString, budget));
    if (kept.length < text.length) whole = false;
    budget -= kept.length;
    if (kept.length > 0 || text.length === 0) texts.push({ where, text: kept });
  };
  const walked = walk(value, (node, path, isKey) => {
    if (isKey) keep(`${pathText(path)} (key)`, path.at(-1) ?? "");
    if (typeof node === "string") keep(pathText(path), node);
  });
  return { texts, whole: whole && walked };
}

/**
 * Visits `value` and what it holds, breadth-first, at most `SCREENING_LIMITS.nodes` values and
 * `SCREENING_LIMITS.depth` levels, each with its path of keys (`isKey` when an object names it).
 * False when a bound left something out.
 */
function walk(value: unknown, visit: (node: unknown, path: string[], isKey: boolean) => void): boolean {
  visit(value, [], false);
  const queue: Array<{ node: object; path: string[] }> = [];
  if (typeof value === "object" && value !== null) queue.push({ node: value, path: [] });
  let visited = 1;
  let whole = true;
  for (const { node, path } of queue) {
    const isArray = Array.isArray(node);
    const keys = isArray ? node.keys() : Object.keys(node).values();
    if (path.length >= SCREENING_LIMITS.depth) {
      whole &&= keys.next().done === true;
      continue;
    }
    for (const key of keys) {
      if (visited++ >= SCREENING_LIMITS.nodes) return false;
      const child: unknown = (node as Record<string, unknown>)[key];
      const childPath = [...path, String(key)];
      visit(child, childPath, !isArray);
      if (typeof child === "object" && child !== null) queue.push({ node: child, path: childPath });
    }
  }
  return whole;
}

/** A path as a reviewer reads it (`inputSchema.properties.path.description`), each key quoted short. */
const pathText = (path: string[]) =>
  path.map((key) => screeningQuote(key, 0, 0, 40)).join(".") || "definition";

function invisibleUnicode(texts: Found[]): ScreeningFlag[] {
  const details: string[] = [];
  for (const { where, text } of texts) {
    const hits = text.match(INVISIBLE);
    if (!hits) continue;
    const codes = [...new Set(hits)].map(codePoint);
    const listed = codes.slice(0, 5).join(", ") + (codes.length > 5 ? ", …" : "");
    const count = `${hits.length} invisible character${hits.length === 1 ? "" : "s"}`;
    details.push(`${where} has ${count} (${listed}): "${screeningQuote(text, text.search(INVISIBLE), 1)}"`);
  }
  return capped("invisible_unicode", details);
}

function modelInstructions(texts: Found[]): ScreeningFlag[] {
  const details: string[] = [];
  for (const { where, text } of texts) {
    for (const { what, pattern } of MODEL_INSTRUCTIONS) {
      const hit = pattern.exec(text);
      if (hit) details.push(`${where} ${what}: "${screeningQuote(text, hit.index, hit[0].length)}"`);
    }
  }
  return capped("model_instructions", details);
}

/** How many characters of text a definition holds, as scanned. */
const textLength = (texts: Found[]) => texts.reduce((sum, { text }) => sum + text.length, 0);

/** Grew at least 3× and by at least 200 characters. */
const grewMuch = (was: number, now: number) => now >= 3 * was && now - was >= 200;

function descriptionGrew(before: ToolInfo, after: ToolInfo, afterTexts: Found[]): ScreeningFlag[] {
  const was = (before.description ?? "").length;
  const now = (after.description ?? "").length;
  if (grewMuch(was, now)) {
    return [{ rule: "description_grew", detail: `description grew from ${was} to ${now} characters` }];
  }
  const wasAll = textLength(stringsOf(before).texts);
  const nowAll = textLength(afterTexts);
  if (grewMuch(wasAll, nowAll)) {
    const detail = `the definition's text grew from ${wasAll} to ${nowAll} characters`;
    return [{ rule: "description_grew", detail }];
  }
  return [];
}

/** An object schema's `additionalProperties`: false closes it, absent is JSON Schema's default (open), true or a schema opens it explicitly. */
function openness(schema: Record<string, unknown>): 0 | 1 | 2 {
  const extra = schema.additionalProperties;
  if (extra === false) return 0;
  return extra === undefined ? 1 : 2;
}

const OPENNESS = ["false", "absent", "true"] as const;

/** The schemas in an input schema by path (through `properties`, `items`, `anyOf`/`oneOf`/`allOf`, `$defs`…), bounded. */
function schemasOf(schema: unknown): Map<string, { path: string[]; schema: Record<string, unknown> }> {
  const schemas = new Map<string, { path: string[]; schema: Record<string, unknown> }>();
  walk(schema, (node, path) => {
    if (isSchema(node) && isSchemaPath(path)) schemas.set(JSON.stringify(path), { path, schema: node });
  });
  return schemas;
}

const isSchema = (node: unknown): node is Record<string, unknown> =>
  typeof node === "object" && node !== null && !Array.isArray(node);

/** Keywords whose value is a schema, and those whose value names (or numbers) schemas. */
const SCHEMA_KEYWORDS = new Set(["items", "additionalProperties", "not", "contains", "propertyNames"]);
const NAMED_SCHEMAS = new Set(["properties", "patternProperties", "$defs", "definitions"]);
const LISTED_SCHEMAS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);

/** A path that names a schema: the root, or one reached through schema-holding keywords only. */
function isSchemaPath(path: string[]): boolean {
  for (let i = 0; i < path.length; i++) {
    const keyword = path[i] ?? "";
    if (SCHEMA_KEYWORDS.has(keyword)) continue;
    if (NAMED_SCHEMAS.has(keyword) && i + 1 < path.length) i++;
    else if (LISTED_SCHEMAS.has(keyword) && /^\d+$/.test(path[i + 1] ?? "")) i++;
    else return false;
  }
  return true;
}

/** A schema that widens what a caller may send when it is new: a property or an alternative. */
const widens = (path: string[]) =>
  path.length >= 2 && ["properties", "patternProperties", "anyOf", "oneOf"].includes(path.at(-2) ?? "");

function schemaWidened(before: ToolInfo, after: ToolInfo): ScreeningFlag[] {
  const was = schemasOf(before.inputSchema);
  const now = schemasOf(after.inputSchema);
  const added = new Set([...now.keys()].filter((key) => !was.has(key) && widens(now.get(key)?.path ?? [])));
  const details: string[] = [];
  for (const [key, { path, schema }] of now) {
    const at = pathText(["inputSchema", ...path]);
    const old = was.get(key)?.schema;
    if (added.has(key)) {
      const within = path.some((_, n) => n > 0 && added.has(JSON.stringify(path.slice(0, n))));
      if (!within) details.push(`new ${describeNew(path, schema)} at ${at}`);
    } else if (old && openness(schema) > openness(old)) {
      const to = typeof schema.additionalProperties === "object" ? "a schema" : OPENNESS[openness(schema)];
      details.push(`${at} accepts other properties: additionalProperties ${OPENNESS[openness(old)]} → ${to}`);
    }
  }
  return capped("schema_widened", details);
}

/** `property (free-form string)`, `property` or `alternative`: what a new schema adds. */
function describeNew(path: string[], schema: Record<string, unknown>): string {
  if (!path.at(-2)?.endsWith("roperties")) return "alternative";
  return freeForm(schema) ? "property (free-form string)" : "property";
}

/** A string property with nothing that bounds what it holds. */
function freeForm(schema: Record<string, unknown>): boolean {
  const bounded = ["enum", "const", "format", "maxLength", "pattern"].some((k) => k in schema);
  return schema.type === "string" && !bounded;
}

/** At most `flagsPerRule` flags of a rule; past that, one more saying how many were left out. */
function capped(rule: string, details: string[]): ScreeningFlag[] {
  const cap = SCREENING_LIMITS.flagsPerRule;
  const flags = details.slice(0, cap).map((detail) => ({ rule, detail }));
  if (details.length > cap) flags.push({ rule, detail: `…and ${details.length - cap} more` });
  return flags;
}

/** `U+200B`: a character's code point as a reviewer reads it. */
function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * At most `length` characters of `text` around the `size` characters at `index` (some context before),
 * never splitting a surrogate pair, unprintable characters spelled as `U+XXXX`, `…` where cut.
 */
export function screeningQuote(
  text: string,
  index: number,
  size: number,
  length: number = SCREENING_LIMITS.quote,
): string {
  let start = Math.max(0, Math.min(index, Math.max(index - 15, index + size - length)));
  let end = Math.min(text.length, start + length);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start++;
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end--;
  const shown = text.slice(start, end).replace(UNPRINTABLE, codePoint);
  return `${start > 0 ? "…" : ""}${shown}${end < text.length ? "…" : ""}`;
}

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
