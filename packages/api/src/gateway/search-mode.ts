/**
 * Search mode: instead of every tool, an endpoint lists two — `search_tools` (the best-matching tools
 * for a request in words, from a local index) and `call_tool` (a call by name, through the same path
 * as a direct `tools/call`). Chosen by the client (`?mode=search`, `?mode=full`) or, on `/mcp` and a
 * tool set's endpoint, automatically past a threshold of tools; fixed for a 2025 session once chosen.
 */
import { createHash } from "node:crypto";
import { AppError } from "@mcpgw/core";
import {
  loadMiniSearch,
  MAX_INDEX_CHARS,
  MAX_QUERY_CHARS,
  type SearchableTool,
  shortDescription,
  ToolIndex,
} from "./tool-search";

/** How an endpoint lists tools: all of them, or the two search-mode tools. */
export type ToolMode = "search" | "full";

/** The values of the endpoints' `mode` query parameter. */
export const TOOL_MODES: readonly ToolMode[] = ["search", "full"];

/** Default of SEARCH_MODE_THRESHOLD: past this many tools `/mcp` lists in search mode. */
export const DEFAULT_SEARCH_MODE_THRESHOLD = 64;

/** The search-mode tools' names. */
export const SEARCH_TOOLS = "search_tools";
export const CALL_TOOL = "call_tool";

/** Results `search_tools` gives by default, and at most. */
const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;

/**
 * The `mode` query parameter: undefined when absent (the endpoint decides), else `search` or `full`;
 * anything else is a 400 `request.invalid`.
 */
export function parseToolMode(value: string | undefined): ToolMode | undefined {
  if (value === undefined) return undefined;
  if ((TOOL_MODES as readonly string[]).includes(value)) return value as ToolMode;
  throw new AppError(
    "request.invalid",
    `Query parameter 'mode' must be 'search' or 'full', not '${value.slice(0, 40)}'.`,
  );
}

/**
 * The mode a listing or call is in: a session's once fixed; else the client's ask; else, where the
 * endpoint switches by itself (`/mcp`, tool sets), search past `threshold` tools; else full.
 */
export function chooseToolMode(options: {
  fixed?: ToolMode | undefined;
  requested?: ToolMode | undefined;
  automatic: boolean;
  tools: number;
  threshold: number;
}): ToolMode {
  if (options.fixed) return options.fixed;
  if (options.requested) return options.requested;
  return options.automatic && options.tools > options.threshold ? "search" : "full";
}

const SEARCH_RESULT_SCHEMA = {
  type: "object",
  properties: {
    tools: {
      type: "array",
      items: {
        type: "object",
        properties: {
          name: { type: "string", description: "The name to give call_tool." },
          description: { type: "string", description: "The tool's description, its first sentence." },
          inputSchema: { type: "object", description: "The JSON Schema of the tool's arguments." },
        },
        required: ["name", "description", "inputSchema"],
      },
    },
  },
  required: ["tools"],
} as const;

/** The two tools an endpoint in search mode lists. */
export const SEARCH_MODE_TOOLS = [
  {
    name: SEARCH_TOOLS,
    title: "Search tools",
    description:
      "Find the tools that fit a task described in words: returns the best-matching tools' names, short descriptions and input schemas, best first. Call one with call_tool.",
    inputSchema: {
      type: "object",
      properties: {
        query: {
          type: "string",
          minLength: 1,
          maxLength: MAX_QUERY_CHARS,
          description: "What you want to do, in words (e.g. 'read a file's contents').",
        },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MAX_LIMIT,
          default: DEFAULT_LIMIT,
          description: "How many tools to return.",
        },
      },
      required: ["query"],
    },
    outputSchema: SEARCH_RESULT_SCHEMA,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: "Call a tool",
    description:
      "Call a tool found with search_tools by its name, with its arguments; answers exactly what the tool answers.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, description: "The tool's name as search_tools gave it." },
        arguments: { type: "object", description: "The tool's arguments, as its input schema asks." },
      },
      required: ["name"],
    },
  },
];

/** `call_tool`'s arguments checked: the tool's name and its arguments (none: `{}`). */
export function callToolArguments(args: Record<string, unknown>): {
  name: string;
  arguments: Record<string, unknown>;
} {
  const { name, arguments: given } = args;
  if (typeof name !== "string" || name.length === 0)
    throw new AppError("request.invalid", "call_tool needs 'name', the tool's name as search_tools gave it.");
  if (given !== undefined && (typeof given !== "object" || given === null || Array.isArray(given)))
    throw new AppError("request.invalid", "call_tool's 'arguments' must be an object.");
  return { name, arguments: (given ?? {}) as Record<string, unknown> };
}

/** A tool as `search_tools` returns it. */
export interface FoundTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** `search_tools` over `tools` (the endpoint's, as it names them), with the index from `indexes`. */
export async function searchTools(
  indexes: ToolIndexCache,
  tools: readonly IndexableTool[],
  args: Record<string, unknown>,
) {
  const { query, limit = DEFAULT_LIMIT } = args;
  if (typeof query !== "string" || query.trim().length === 0)
    throw new AppError("request.invalid", "search_tools needs 'query', what you want to do in words.");
  if (query.length > MAX_QUERY_CHARS)
    throw new AppError(
      "request.invalid",
      `search_tools' query is longer than ${MAX_QUERY_CHARS} characters.`,
    );
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new AppError("request.invalid", `search_tools' limit must be an integer from 1 to ${MAX_LIMIT}.`);
  const { index, found: byName } = await indexes.get(tools);
  const found = index.search(query, limit).flatMap((hit) => byName.get(hit.name) ?? []);
  const structuredContent = { tools: found };
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
}

/** Indexes kept, at most this many (the most recently used): callers' scopes, endpoints. */
const MAX_INDEXES = 16;
/** The text all kept indexes hold together, at most (an index's own is bounded by the index). */
const MAX_INDEXED_CHARS = 4 * MAX_INDEX_CHARS;

type IndexableTool = SearchableTool & { inputSchema: Record<string, unknown> };

/**
 * Indexes built once per catalogue and looked up by what they index: each tool's listed name, title,
 * description and input schema (a schema's digest is taken once per schema object). So an index is
 * built again only when what it indexes changed, and never serves another text: a tool set whose
 * edit gave a name another tool, or an override another description, is indexed again (the directory's
 * snapshot does not change with a set). Kept: the most recently used, within {@link MAX_INDEXES} and
 * {@link MAX_INDEXED_CHARS} of text.
 */
export class ToolIndexCache {
  private readonly byContent = new Map<string, IndexedCatalogue>();
  private readonly schemaDigests = new WeakMap<object, string>();
  private indexedChars = 0;
  /** Indexes built so far (for tests). */
  built = 0;

  /** The index of `tools`, as an endpoint lists them to one caller. */
  async get(tools: readonly IndexableTool[]): Promise<IndexedCatalogue> {
    // Loaded first (once): the rest runs without a pause, so two searches never build one index twice.
    const MiniSearchIndex = await loadMiniSearch();
    const content = createHash("sha256");
    for (const { name, title, description, inputSchema } of tools)
      content
        .update(JSON.stringify([name, title ?? null, description ?? null, this.schemaDigest(inputSchema)]))
        .update("\0");
    const key = content.digest("base64url");
    let indexed = this.byContent.get(key);
    if (indexed) this.byContent.delete(key);
    else {
      indexed = {
        index: new ToolIndex(tools, MiniSearchIndex),
        found: new Map(
          tools.map((tool) => [
            tool.name,
            {
              name: tool.name,
              description: shortDescription(tool.description),
              inputSchema: tool.inputSchema,
            },
          ]),
        ),
      };
      this.built++;
      this.indexedChars += indexed.index.chars;
      for (const [oldest, old] of this.byContent) {
        if (this.byContent.size < MAX_INDEXES && this.indexedChars <= MAX_INDEXED_CHARS) break;
        this.byContent.delete(oldest);
        this.indexedChars -= old.index.chars;
      }
    }
    this.byContent.set(key, indexed);
    return indexed;
  }

  private schemaDigest(schema: Record<string, unknown>): string {
    let digest = this.schemaDigests.get(schema);
    if (digest === undefined) {
      digest = createHash("sha256").update(JSON.stringify(schema)).digest("base64url");
      this.schemaDigests.set(schema, digest);
    }
    return digest;
  }
}

/** A catalogue's index and each tool as search results show it. */
interface IndexedCatalogue {
  index: ToolIndex;
  found: Map<string, FoundTool>;
}
