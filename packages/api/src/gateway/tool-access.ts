/**
 * Which tools a caller may use, decided per tool: a key or access mapping reaches the tools of its
 * servers and of its tool sets (neither: every tool), and its tool policy narrows that. A user may hold
 * several mappings (theirs and their groups'): a tool is theirs when any of them allows it.
 */
import { AppError, policyRefusal, type ToolInfo, type ToolPolicy } from "@mcpgw/core";
import type { Principal } from "../env";
import { type ResolvedSet, resolveSet, toolsetIndex } from "../toolsets";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";

/** One key's or access mapping's reach: servers (null: every one, unless it names sets), sets, policy. */
export interface ToolGrant {
  serverIds: string[] | null;
  toolsets: string[];
  toolPolicy?: ToolPolicy | undefined;
}

/** What the decision says of one tool. */
export type ToolDecision =
  | { ok: true }
  | { ok: false; code: "server.not_found" | "tool.forbidden"; rule: string; detail: string };

/** The decision for one catalogued tool. */
export type ToolGate = (entry: DirectoryEntry, qualified: string, tool: ToolInfo) => ToolDecision;

/** What a tool is, to the decision. */
export interface DecidedTool {
  serverId: string;
  server: string;
  name: string;
  annotations?: Record<string, unknown> | undefined;
}

/** The grants of a principal; null for the admin (every tool). */
export function grantsOf(principal: Principal | undefined): ToolGrant[] | null {
  if (!principal || principal.kind === "admin") return null;
  if (principal.kind === "user")
    return principal.grants ?? [{ serverIds: principal.serverIds, toolsets: [] }];
  return [
    { serverIds: principal.serverIds, toolsets: principal.toolsets ?? [], toolPolicy: principal.toolPolicy },
  ];
}

/** True when a grant scopes by nothing: every tool, before its policy. */
function unscoped(grant: ToolGrant): boolean {
  return grant.serverIds === null && grant.toolsets.length === 0;
}

/**
 * The decision on `tool` for `grants` (sets resolved in `sets`; a set not there grants nothing): allowed
 * when some grant reaches it and its policy lets it through; else `tool.forbidden` naming the rule when
 * some grant reaches it or its server (through a set), else `server.not_found` (as if the server were not
 * there). `whose` names the policy in the detail ("key's", "access mapping's").
 */
export function decideTool(
  grants: readonly ToolGrant[],
  sets: ReadonlyMap<string, ResolvedSet>,
  tool: DecidedTool,
  whose: string,
): ToolDecision {
  let refused: string | undefined;
  let visible = false;
  for (const grant of grants) {
    const inSets = grant.toolsets.map((name) => sets.get(name));
    const reached =
      unscoped(grant) ||
      (grant.serverIds?.includes(tool.serverId) ?? false) ||
      inSets.some((set) => set?.members.has(tool.name));
    if (!reached) {
      visible ||= inSets.some((set) => set?.servers.has(tool.serverId));
      continue;
    }
    const rule = policyRefusal(grant.toolPolicy, tool);
    if (rule === undefined) return { ok: true };
    refused ??= rule;
  }
  if (refused !== undefined) {
    const detail =
      refused === "allow"
        ? `Tool '${tool.name}' is refused by the ${whose} policy: not on its allow-list.`
        : `Tool '${tool.name}' is refused by the ${whose} policy: ${refused}.`;
    return { ok: false, code: "tool.forbidden", rule: refused, detail };
  }
  if (visible) {
    const detail = `Tool '${tool.name}' is not in the ${whose} tool sets.`;
    return { ok: false, code: "tool.forbidden", rule: "toolsets", detail };
  }
  return {
    ok: false,
    code: "server.not_found",
    rule: "servers",
    detail: `No server named '${tool.server}'.`,
  };
}

/**
 * The gate of `principal`'s tool calls and lists; undefined for a caller every tool is open to (the
 * admin, or a key with no scope and no policy). Reads the sets only when the caller has some: from
 * memory ({@link toolsetIndex}), resolved once per directory snapshot.
 */
export async function toolGate(
  deps: Pick<GatewayDeps, "store" | "directory">,
  principal: Principal | undefined,
): Promise<ToolGate | undefined> {
  const grants = grantsOf(principal);
  if (!grants || grants.every((grant) => unscoped(grant) && !grant.toolPolicy)) return undefined;
  const names = new Set(grants.flatMap((grant) => grant.toolsets));
  const sets = new Map<string, ResolvedSet>();
  if (names.size > 0) {
    const [snapshot, all] = await Promise.all([deps.directory.snapshot(), toolsetIndex(deps.store).all()]);
    for (const name of names) {
      const set = all.get(name);
      if (set) sets.set(name, resolveSet(set, snapshot));
    }
  }
  const whose = principal?.kind === "user" ? "access mapping's" : "key's";
  return (entry, qualified, tool) =>
    decideTool(
      grants,
      sets,
      {
        serverId: entry.server.id,
        server: entry.server.name,
        name: qualified,
        annotations: tool.annotations,
      },
      whose,
    );
}

/** Throws the decision's error when it refuses. */
export function enforce(decision: ToolDecision): void {
  if (decision.ok) return;
  throw new AppError(
    decision.code,
    decision.detail,
    decision.code === "tool.forbidden" ? { rule: decision.rule } : {},
  );
}
