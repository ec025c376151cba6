/**
 * A key's or mapping's tool policy as the console edits and shows it: an allow-list of tool names or
 * globs (empty: every tool its scope reaches), annotation hints refused (destructive, open world), and
 * names exempt from the refusal. The draft is what the form edits; `policyOf` is what the API is sent.
 */
import type { ToolPolicy, ToolScope } from "./types";

/** The policy as the form edits it: lists as text, one name or glob a line (or comma-separated). */
export interface PolicyDraft {
  allow: string;
  refuseDestructive: boolean;
  refuseOpenWorld: boolean;
  except: string;
}

export const NO_POLICY: PolicyDraft = {
  allow: "",
  refuseDestructive: false,
  refuseOpenWorld: false,
  except: "",
};

function names(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((name) => name.trim())
    .filter(Boolean);
}

/** The policy a draft stands for; undefined when it limits nothing. */
export function policyOf(draft: PolicyDraft): ToolPolicy | undefined {
  const allow = names(draft.allow);
  const except = names(draft.except);
  const refuse = {
    ...(draft.refuseDestructive ? { destructiveHint: true } : {}),
    ...(draft.refuseOpenWorld ? { openWorldHint: true } : {}),
  };
  const refusing = Object.keys(refuse).length > 0;
  if (!allow.length && !refusing) return undefined;
  return {
    ...(allow.length ? { allow } : {}),
    ...(refusing ? { refuse } : {}),
    ...(refusing && except.length ? { except } : {}),
  };
}

/** A scope's tool sets and policy in words, for a list's cell ("" when it has neither). */
export function toolScopeText(scope: ToolScope): string {
  const parts: string[] = [];
  if (scope.toolsets?.length) parts.push(`tool sets ${scope.toolsets.join(", ")}`);
  const policy = scope.toolPolicy;
  if (policy?.allow?.length) parts.push(`only ${policy.allow.join(", ")}`);
  const refused = [
    ...(policy?.refuse?.destructiveHint ? ["destructive"] : []),
    ...(policy?.refuse?.openWorldHint ? ["open-world"] : []),
    ...(policy?.refuse?.readOnlyHint ? ["read-only"] : []),
    ...(policy?.refuse?.idempotentHint ? ["idempotent"] : []),
  ];
  if (refused.length) {
    const except = policy?.except?.length ? ` except ${policy.except.join(", ")}` : "";
    parts.push(`refuses ${refused.join(" and ")} tools${except}`);
  }
  return parts.join("; ");
}
