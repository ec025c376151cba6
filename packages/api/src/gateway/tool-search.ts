/**
 * A local text index over a catalogue's tools, for search mode's `search_tools`: BM25 ranking
 * (minisearch) over each tool's name split into words (`__`, `_`, `-`, camelCase), title, description
 * and parameter names and descriptions, with light stemming so "files" finds "file" and "reading"
 * "read". Pure: built from the tools given, asked with a bounded query. minisearch is loaded by the
 * first search ({@link loadMiniSearch}), not by the gateway's cold start.
 */
import type MiniSearch from "minisearch";

let miniSearch: Promise<typeof MiniSearch> | undefined;
/** minisearch's index class, loaded once, when search mode is first used. */
export function loadMiniSearch(): Promise<typeof MiniSearch> {
  miniSearch ??= import("minisearch").then((module) => module.default);
  return miniSearch;
}

/** What the index reads of a tool: the name the endpoint lists it under, and its words. */
export interface SearchableTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: Record<string, unknown> | undefined;
}

/** A search's hit: the tool's listed name and its score (higher is better). */
export interface ToolHit {
  name: string;
  score: number;
}

/** The longest query read, in characters (the rest is ignored). */
export const MAX_QUERY_CHARS = 512;
/** The most query words looked up: a query is a request in words, not a document. */
const MAX_QUERY_TERMS = 32;
/** The most parameters of one tool indexed, and the characters of their text: a huge schema is cut. */
const MAX_PARAMS = 64;
const MAX_FIELD_CHARS = 4_000;
/**
 * The text one index holds besides tools' names, at most: each tool's title, description and
 * parameters share its part of it (at least {@link MIN_TOOL_CHARS}), so a hostile catalogue of long
 * unique descriptions builds a bounded index.
 */
export const MAX_INDEX_CHARS = 1_000_000;
const MIN_TOOL_CHARS = 48;

/** How much a word counts by where it stands: a name says most of what a tool does. */
const BOOST = { words: 3, title: 2, description: 1, params: 1 };

/** Words too common in tool descriptions and requests to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an the and or of to in on for with by from at as is are be it its this that these those i me my we " +
    "you your can could would should will do does please want need some any all into about via using use"
  ).split(" "),
);

/** The ranked index of one catalogue snapshot, made with minisearch's class (see {@link loadMiniSearch}). */
export class ToolIndex {
  private readonly index: MiniSearch<IndexedTool>;
  /** The characters of text indexed. */
  readonly chars: number;

  constructor(tools: readonly SearchableTool[], MiniSearchIndex: typeof MiniSearch) {
    this.index = new MiniSearchIndex<IndexedTool>({
      fields: ["words", "title", "description", "params"],
      idField: "name",
      tokenize: splitWords,
      processTerm: normalizeTerm,
      searchOptions: { boost: BOOST, prefix: false, fuzzy: false, combineWith: "OR" },
    });
    const share = Math.max(MIN_TOOL_CHARS, Math.floor(MAX_INDEX_CHARS / Math.max(1, tools.length)));
    const indexed = tools.map((tool) => indexedTool(tool, Math.min(3 * MAX_FIELD_CHARS, share)));
    this.chars = indexed.reduce(
      (sum, tool) =>
        sum + tool.words.length + tool.title.length + tool.description.length + tool.params.length,
      0,
    );
    this.index.addAll(indexed);
  }

  /** The `limit` best matches of `query` (cut to {@link MAX_QUERY_CHARS}), best first. */
  search(query: string, limit: number): ToolHit[] {
    const terms = splitWords(query.slice(0, MAX_QUERY_CHARS)).slice(0, MAX_QUERY_TERMS * 2);
    const words = terms.flatMap((term) => normalizeTerm(term) ?? []).slice(0, MAX_QUERY_TERMS);
    if (words.length === 0) return [];
    return this.index
      .search(words.join(" "), { tokenize: (text) => text.split(" "), processTerm: (term) => term })
      .slice(0, limit)
      .map((hit) => ({ name: String(hit.id), score: hit.score }));
  }
}

interface IndexedTool {
  name: string;
  words: string;
  title: string;
  description: string;
  params: string;
}

/**
 * A tool's text to index: its title, description and parameters within `chars` together (each within
 * {@link MAX_FIELD_CHARS}) — the title up to a fifth and the parameters up to a quarter, the
 * description the rest; its name whole (names are bounded by the catalogue).
 */
function indexedTool(tool: SearchableTool, chars: number): IndexedTool {
  const cut = (text: string, most: number) => text.slice(0, Math.max(0, Math.min(MAX_FIELD_CHARS, most)));
  const title = cut(tool.title ?? "", chars / 5);
  const params = cut(paramText(tool.inputSchema), chars / 4);
  return {
    name: tool.name,
    words: tool.name,
    title,
    description: cut(tool.description ?? "", chars - title.length - params.length),
    params,
  };
}

/** The names, titles and descriptions of a schema's top-level properties, as text. */
function paramText(schema: Record<string, unknown> | undefined): string {
  const properties = schema?.properties;
  if (!properties || typeof properties !== "object") return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(properties).slice(0, MAX_PARAMS)) {
    parts.push(name);
    const property = (value ?? {}) as { title?: unknown; description?: unknown };
    if (typeof property.title === "string") parts.push(property.title);
    if (typeof property.description === "string") parts.push(property.description);
  }
  return parts.join(" ");
}

/**
 * Text into words: split on anything not a letter or digit (so `__`, `_`, `-`, dots, spaces) and at
 * camelCase humps (`readFile` → read, File; `HTMLPage` → HTML, Page).
 */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** A word as the index keeps it: lower case and stemmed; a stop word or a lone letter is dropped. */
export function normalizeTerm(word: string): string | null {
  const lower = word.toLowerCase();
  if (lower.length < 2 || STOP_WORDS.has(lower)) return null;
  return stem(lower);
}

/**
 * A light English stemmer: plural and verb endings off (`directories` → directori → directory,
 * `files` → file, `reading` → read, `created` → creat(e)), so a word and its forms meet. Deliberately
 * small: it folds the forms requests and descriptions use, and never leaves fewer than three letters.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let stemmed = word;
  if (stemmed.endsWith("ies") && stemmed.length > 4) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (/(ss|us|is)$/.test(stemmed)) return stemmed;
  else if (/(xes|ches|shes|sses)$/.test(stemmed)) stemmed = stemmed.slice(0, -2);
  else if (stemmed.endsWith("s")) stemmed = stemmed.slice(0, -1);
  for (const suffix of ["ing", "ed"]) {
    if (stemmed.endsWith(suffix) && stemmed.length - suffix.length >= 3) {
      stemmed = stemmed.slice(0, -suffix.length);
      // running → run, stopped → stop
      if (/([bdgmnprt])\1$/.test(stemmed)) stemmed = stemmed.slice(0, -1);
      break;
    }
  }
  // A trailing e goes too, so "create", "creates", "creating" and "created" meet at "creat".
  if (stemmed.endsWith("e") && stemmed.length > 3) stemmed = stemmed.slice(0, -1);
  return stemmed;
}

/** A tool's description as search results show it: its first sentence, at most 200 characters. */
export function shortDescription(description: string | undefined): string {
  const text = (description ?? "").replace(/\s+/g, " ").trim();
  const end = text.search(/[.!?](\s|$)/);
  const sentence = end === -1 ? text : text.slice(0, end + 1);
  return sentence.length <= 200 ? sentence : `${sentence.slice(0, 199).trimEnd()}…`;
}
