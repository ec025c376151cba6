import { z } from "zod";
import { AppError, describeIssues } from "./errors";
import { ServerSpec } from "./server";
import { submittedMasks } from "./server-edit";

/** One problem with one entry of an imported document. */
export interface ImportProblem {
  entry: string;
  message: string;
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
});
type Entry = z.infer<typeof Entry>;

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
    if (Array.isArray(result)) problems.push(...result.map((message) => ({ entry: name, message })));
    else specs.push(result);
  }
  if (problems.length > 0) {
    const detail = problems.map((p) => `${p.entry}: ${p.message}`).join("; ");
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

function toSpec(name: string, raw: unknown): ServerSpec | string[] {
  const entry = Entry.safeParse(raw);
  if (!entry.success) return describeIssues(entry.error.issues);
  const transport = transportOf(entry.data);
  if (!transport) return ["needs either `command` (stdio) or `url` (HTTP)"];
  const { command, args, env, url, headers, disabled } = entry.data;
  const candidate =
    transport === "stdio" ? { transport, name, command, args, env } : { transport, name, url, headers };
  const spec = ServerSpec.safeParse({ ...candidate, enabled: disabled !== true });
  if (!spec.success) return describeIssues(spec.error.issues);
  // As on create: a pasted mask (e.g. from this gateway's own output) must never be stored as a credential.
  const masks = submittedMasks(spec.data);
  return masks.length > 0 ? masks : spec.data;
}

function transportOf(entry: Entry): "stdio" | "http" | undefined {
  if (entry.type === "stdio") return "stdio";
  if (entry.type) return "http";
  if (entry.command !== undefined) return "stdio";
  if (entry.url !== undefined) return "http";
  return undefined;
}
