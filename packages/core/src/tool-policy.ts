/**
 * Which tools a caller may use, as pure rules: tool-set rules (a server, annotation hints, a name
 * glob), and a key's or access mapping's tool policy (an allow-list, refused hints, exemptions).
 * Annotations are read with the MCP spec's defaults.
 */

/** The MCP tool annotations a rule or policy may test. */
export const TOOL_HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
export type ToolHint = (typeof TOOL_HINTS)[number];

/** Hints to test, each against the tool's effective value. */
export type HintFilter = Partial<Record<ToolHint, boolean>>;

/** What a rule or policy sees of a tool. */
export interface PolicyTool {
  /** The qualified name, `<server>__<tool>`. */
  name: string;
  /** The server's current name. */
  server: string;
  annotations?: Record<string, unknown> | undefined;
}

/** A tool-set rule: every given field must hold (server name, hints, glob over the qualified name). */
export interface ToolRule {
  server?: string;
  annotations?: HintFilter;
  glob?: string;
}

/** A key's or access mapping's tool policy. */
export interface ToolPolicy {
  /** Qualified names or globs the caller may use; absent = every tool. */
  allow?: string[];
  /** Hints refused (a tool whose effective hint equals the given value is refused). */
  refuse?: HintFilter;
  /** Qualified names or globs exempt from `refuse`. */
  except?: string[];
}

/**
 * A hint's effective value under the spec's defaults: destructiveHint and openWorldHint default true,
 * readOnlyHint and idempotentHint false; a read-only tool is never destructive (nor, so, idempotent-
 * relevant: destructiveHint only matters when readOnlyHint is false).
 */
export function effectiveHint(annotations: Record<string, unknown> | undefined, hint: ToolHint): boolean {
  const given = annotations?.[hint];
  const readOnly = annotations?.readOnlyHint === true;
  switch (hint) {
    case "readOnlyHint":
      return readOnly;
    case "destructiveHint":
      return !readOnly && given !== false;
    case "idempotentHint":
      return given === true;
    case "openWorldHint":
      return given !== false;
  }
}

/** The hints of `filter` whose value equals the tool's effective one. */
export function matchingHints(
  annotations: Record<string, unknown> | undefined,
  filter: HintFilter,
): ToolHint[] {
  return TOOL_HINTS.filter(
    (hint) => filter[hint] !== undefined && filter[hint] === effectiveHint(annotations, hint),
  );
}

/**
 * True when `name` matches `glob` whole: `*` any run of characters, `?` one; the rest literal. Linear-ish
 * time (greedy two pointers, backtracking only to the last `*`), so a hostile glob or tool name cannot
 * stall the event loop as a backtracking regex would.
 */
export function globMatches(glob: string, name: string): boolean {
  const pattern = Array.from(glob);
  const text = Array.from(name);
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === "?" || (pattern[p] !== "*" && pattern[p] === text[t]))) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** True when a name or glob of `patterns` matches the tool's qualified name. */
export function namedBy(patterns: readonly string[], name: string): boolean {
  return patterns.some((pattern) => globMatches(pattern, name));
}

/** True when every field the rule gives holds for the tool (a rule with none matches nothing). */
export function ruleMatches(rule: ToolRule, tool: PolicyTool): boolean {
  const filter = rule.annotations ?? {};
  const hints = TOOL_HINTS.filter((hint) => filter[hint] !== undefined);
  if (rule.server === undefined && rule.glob === undefined && hints.length === 0) return false;
  if (rule.server !== undefined && rule.server !== tool.server) return false;
  if (rule.glob !== undefined && !globMatches(rule.glob, tool.name)) return false;
  return hints.every((hint) => filter[hint] === effectiveHint(tool.annotations, hint));
}

/**
 * Why the policy refuses the tool: `allow` (not on the allow-list) or the refused hint's name; undefined
 * when the policy lets it through.
 */
export function policyRefusal(policy: ToolPolicy | null | undefined, tool: PolicyTool): string | undefined {
  if (!policy) return undefined;
  if (policy.allow && !namedBy(policy.allow, tool.name)) return "allow";
  if (!policy.refuse || (policy.except && namedBy(policy.except, tool.name))) return undefined;
  return matchingHints(tool.annotations, policy.refuse)[0];
}
