import { z } from "zod";
import { AppError, describeIssues, type FieldProblem, problemLine } from "./errors";
import { assertNever } from "./exhaustive";
import { SERVER_NAME_RULE } from "./name-rules";
import { ServerName } from "./names";
import { recordOf } from "./patterns";
import { Pinning } from "./pinning";
import {
  Args,
  Command,
  HttpUrl,
  Isolation,
  RealEnvMap,
  RealHeaderMap,
  ServerSpec,
  type Transport,
} from "./server";
import { submittedMasks } from "./server-edit";

/** One problem with one entry of an imported document. */
export interface ImportProblem extends FieldProblem {
  /** The entry's name in the document. */
  entry: string;
}

const StringMap = z.record(z.string(), z.string());
/** The keys of an entry the gateway reads; clients' other keys (autoApprove, timeout, …) are ignored. */
const Entry = z.object({
  type: z.enum(["stdio", "http", "streamable-http", "streamableHttp", "sse"]).optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
  url: z.string().optional(),
  headers: StringMap.optional(),
  disabled: z.boolean().optional(),
  /** The gateway's own key: a stdio entry's isolation (`shared`, the default, or `per_caller`). */
  isolation: Isolation.optional(),
  /** The gateway's own key: an HTTP entry's `relaySessionLogs` (default false). */
  relaySessionLogs: z.boolean().optional(),
  /** The gateway's own key: the server's `pinning` (default: PINNING_DEFAULT). */
  pinning: Pinning.optional(),
});
type Entry = z.infer<typeof Entry>;

/** The most servers one import may hold (each takes three items of one 100-item transaction). */
export const MAX_IMPORTED_SERVERS = 33;
const HTTP_TYPES = ["http", "streamable-http", "streamableHttp", "sse"] as const;
/** The keys an entry may carry whatever its transport, typed as `parseMcpJson` reads them. */
const entryKeys = Entry.omit({ type: true }).shape;

const StdioEntry = z.looseObject({
  ...entryKeys,
  type: z.literal("stdio").optional(),
  command: Command,
  args: Args.optional(),
  env: RealEnvMap.optional(),
});
const HttpEntry = z.looseObject({
  ...entryKeys,
  type: z.enum(HTTP_TYPES),
  url: HttpUrl,
  headers: RealHeaderMap.optional(),
});
/** An entry with a `url` and neither `type` nor `command` (either would make it another kind). */
const UrlEntry = z
  .looseObject({ ...entryKeys, url: HttpUrl, headers: RealHeaderMap.optional() })
  .refine((entry) => entry.command === undefined && !("type" in entry), "has a `type` or a `command`")
  .meta({ not: { anyOf: [{ required: ["type"] }, { required: ["command"] }] } });

const ServerEntries = recordOf(ServerName, SERVER_NAME_RULE, z.union([StdioEntry, HttpEntry, UrlEntry]))
  .refine((entries) => Object.keys(entries).length > 0, "lists no servers")
  .meta({ minProperties: 1, maxProperties: MAX_IMPORTED_SERVERS });

/**
 * The `.mcp.json` documents an import accepts, for the API document: `mcpServers` (or, without it,
 * `servers`) maps 1–33 server names to entries that each make a valid server — stdio when `type` is
 * `stdio` or a `command` comes without a type, HTTP otherwise. `parseMcpJson` is the rule and names
 * each problem; this schema accepts nothing it refuses, save masked values (documented, refused there).
 */
export const McpJsonDocument = z.union([
  z.looseObject({ mcpServers: ServerEntries }),
  z
    .looseObject({ servers: ServerEntries })
    .refine((document) => !("mcpServers" in document), "`mcpServers` is read first")
    .meta({ not: { required: ["mcpServers"] } }),
]);

/**
 * Parses a pasted client config — Claude Desktop / Claude Code / Cursor (`mcpServers`) or VS Code
 * (`servers`) — into server specs sorted by name. `command` means stdio (also when `url` is present,
 * unless `type` says otherwise), `url` means HTTP. Throws `import.*` errors naming every bad entry.
 */
export function parseMcpJson(document: unknown): ServerSpec[] {
  const entries = serverMap(document);
  const names = Object.keys(entries);
  if (names.length === 0) throw new AppError("import.no_servers", "The document lists no servers.");
  const problems: ImportProblem[] = [];
  const specs: ServerSpec[] = [];
  for (const name of names.sort()) {
    const result = toSpec(name, entries[name]);
    if (Array.isArray(result)) problems.push(...result.map((problem) => ({ entry: name, ...problem })));
    else specs.push(result);
  }
  if (problems.length > 0) {
    const detail = problems.map((problem) => `${problem.entry}: ${problemLine(problem)}`).join(" ");
    throw new AppError("import.invalid_entry", detail, { errors: problems });
  }
  return specs;
}

function serverMap(document: unknown): Record<string, unknown> {
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw new AppError("import.invalid_document", "Expected a JSON object with `mcpServers` (or `servers`).");
  }
  const map =
    "mcpServers" in document ? document.mcpServers : "servers" in document ? document.servers : undefined;
  if (map === undefined) {
    throw new AppError("import.invalid_document", "Expected a JSON object with `mcpServers` (or `servers`).");
  }
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    throw new AppError("import.invalid_document", "`mcpServers` must be an object mapping names to servers.");
  }
  return map as Record<string, unknown>;
}

function toSpec(name: string, raw: unknown): ServerSpec | FieldProblem[] {
  const entry = Entry.safeParse(raw);
  if (!entry.success) return describeIssues(entry.error.issues);
  const transport = transportOf(entry.data);
  if (!transport) return [{ field: "", message: "Needs either `command` (stdio) or `url` (HTTP)." }];
  const enabled = entry.data.disabled !== true;
  const { pinning } = entry.data;
  const spec = ServerSpec.safeParse({
    transport,
    name,
    ...kindFields(transport, entry.data),
    enabled,
    ...(pinning ? { pinning } : {}),
  });
  if (!spec.success) return describeIssues(spec.error.issues);
  // As on create: a pasted mask (e.g. from this gateway's own output) must never be stored as a credential.
  const masks = submittedMasks(spec.data);
  return masks.length > 0 ? masks : spec.data;
}

/** The fields of an entry its kind takes: the other kind's are not carried over. */
function kindFields(transport: Transport, entry: Entry): Record<string, unknown> {
  const { command, args, env, url, headers, isolation, relaySessionLogs } = entry;
  switch (transport) {
    case "stdio":
      return { command, args, env, isolation };
    case "http":
      return { url, headers, ...(relaySessionLogs === undefined ? {} : { relaySessionLogs }) };
    default:
      return assertNever(transport);
  }
}

function transportOf(entry: Entry): Transport | undefined {
  if (entry.type === "stdio") return "stdio";
  if (entry.type) return "http";
  if (entry.command !== undefined) return "stdio";
  if (entry.url !== undefined) return "http";
  return undefined;
}
