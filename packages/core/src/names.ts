import { createHash } from "node:crypto";
import { z } from "zod";
import { AppError } from "./errors";

import { NAME_SAYS, SERVER_NAME_PATTERN, SERVER_NAME_RULE } from "./name-rules";

/** A server's name (see `SERVER_NAME_PATTERN`); tool sets are named by the same rule. */
export const ServerName = z
  .string()
  .regex(SERVER_NAME_PATTERN, NAME_SAYS.server)
  .refine((name) => !name.includes("__"), NAME_SAYS.separator)
  .meta({ pattern: SERVER_NAME_RULE.source });

/** The separator between server and tool in a qualified tool name. */
export const TOOL_SEPARATOR = "__";
/** The longest tool name MCP clients and LLM APIs accept. */
export const MAX_QUALIFIED_LENGTH = 64;
const SAFE_TOOL_NAME = /^[A-Za-z0-9_-]+$/;
/**
 * What `parseQualifiedName` accepts, in one pattern (its 64-character bound is a `maxLength`): a server
 * name (which never contains `__`), `__`, then a non-empty tool part.
 */
export const QUALIFIED_NAME_PATTERN = /^[A-Za-z0-9](?:(?:[A-Za-z0-9-]|_(?!_)){0,30}[A-Za-z0-9])?__[\s\S]/;
const HASH_LENGTH = 8;

/**
 * `<server>__<tool>`, or — when that would exceed 64 characters or the tool name has characters LLM
 * APIs refuse — a deterministic shortened form `<server>__<sanitised prefix>_<hash>`. The catalogue
 * keeps the mapping back to the original tool name.
 */
export function qualifyToolName(server: string, tool: string): string {
  const plain = `${server}${TOOL_SEPARATOR}${tool}`;
  if (plain.length <= MAX_QUALIFIED_LENGTH && SAFE_TOOL_NAME.test(tool)) return plain;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, HASH_LENGTH);
  const room = MAX_QUALIFIED_LENGTH - server.length - TOOL_SEPARATOR.length - HASH_LENGTH - 1;
  const prefix = tool.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, Math.max(room, 0));
  return `${server}${TOOL_SEPARATOR}${prefix}_${hash}`;
}

/** The parts of a qualified tool name; `tool` is the (possibly shortened) part after `__`. */
export interface QualifiedName {
  server: string;
  tool: string;
}

/** Splits `<server>__<tool>`; throws `tool.invalid_name` when it is not of that form. */
export function parseQualifiedName(qualified: string): QualifiedName {
  if (qualified.length > MAX_QUALIFIED_LENGTH || !QUALIFIED_NAME_PATTERN.test(qualified)) {
    throw new AppError("tool.invalid_name", `'${truncate(qualified)}' is not of the form <server>__<tool>`);
  }
  const at = qualified.indexOf(TOOL_SEPARATOR);
  return { server: qualified.slice(0, at), tool: qualified.slice(at + TOOL_SEPARATOR.length) };
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
