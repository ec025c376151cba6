/**
 * What a refused tool-call body (`POST /v1/tools/{name}/call`) is told. The body's known fields are
 * `arguments`, `chat` and `thread`; a field of the tool's own at the top (`{"message": "hi"}`) is the
 * usual slip, so an unknown field's problem says where it belongs.
 */
import { describeIssues, type FieldProblem } from "@mcpgw/core";

/** A zod issue, as much of it as this reads. */
interface Issue {
  code?: string;
  keys?: readonly string[];
  path: PropertyKey[];
  message: string;
}

/** How many unknown fields the hint names, and how much of each name it shows. */
const SHOWN_KEYS = 5;
const SHOWN_KEY_CHARS = 64;

/** The problems of a tool-call body, as `describeIssues` gives them but with unknown top-level fields explained. */
export function describeCallBodyIssues(issues: readonly Issue[]): FieldProblem[] {
  return issues.flatMap((issue) =>
    issue.code === "unrecognized_keys" && issue.path.length === 0 && issue.keys?.length
      ? [{ field: "", message: unknownFieldsHint(issue.keys) }]
      : describeIssues([issue]),
  );
}

/** `Unknown field "message": put the tool's arguments under "arguments": {"arguments": {"message": …}}`. */
export function unknownFieldsHint(keys: readonly string[]): string {
  const names = keys.slice(0, SHOWN_KEYS).map((key) => JSON.stringify(key.slice(0, SHOWN_KEY_CHARS)));
  const more = keys.length > SHOWN_KEYS ? ", …" : "";
  const fields = `${keys.length === 1 ? "field" : "fields"} ${names.join(", ")}${more}`;
  const example = `{"arguments": {${names.map((name) => `${name}: …`).join(", ")}${more}}}`;
  return `Unknown ${fields}: put the tool's arguments under "arguments": ${example}`;
}
