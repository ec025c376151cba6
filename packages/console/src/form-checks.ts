/**
 * The smaller forms' checks before anything is sent (the server form's are in server-draft-check.ts):
 * each name by the rule the API holds it to (@mcpgw/core/name-rules, the API's source), in the API's
 * words, beside the field it was typed in; a row left half filled is said, not dropped.
 */
import {
  IDENTITY_NAME,
  NAME_SAYS,
  SECRET_KEY,
  SECRET_NAME,
  serverNameProblem,
  THREAD_ID,
  TOOL_ALIAS,
} from "@mcpgw/core/name-rules";

/** Problems by field (the API's field names), each a sentence; empty when none. */
export type Problems = Record<string, string[]>;

/** A secret set from the form: its name and each row's key (every value is taken as typed). */
export function secretProblems(name: string, keys: string[]): Problems {
  const problems: Problems = {};
  const trimmed = name.trim();
  if (!trimmed) problems.name = ["Give the secret a name."];
  else if (!SECRET_NAME.test(trimmed)) problems.name = [NAME_SAYS.secret];
  const named = keys.map((key) => key.trim());
  const values = [
    ...(named.length === 0 ? ["Add at least one key."] : []),
    ...(named.some((key) => !key) ? ["Every row needs a key name (remove the empty ones)."] : []),
    ...named
      .filter((key) => key && !SECRET_KEY.test(key))
      .map((key) => `Key “${key}”: ${NAME_SAYS.secretKey}`),
    ...(new Set(named).size !== named.length ? ["Each key name may appear once."] : []),
  ];
  if (values.length > 0) problems.values = values;
  return problems;
}

/** A new key: its name, and its owner's name when an owner is chosen. */
export function keyProblems(name: string, owner: string | undefined): Problems {
  return {
    ...(name.trim() ? {} : { name: ["Give the key a name: who or what uses it."] }),
    ...(owner === undefined
      ? {}
      : identityProblems("owner", owner, "Give the owner's name, as the sign-in names them.")),
  };
}

/** An access mapping's user or group name. */
export function subjectProblems(name: string): Problems {
  return identityProblems("subject", name, "Give the name of the user or group, as the sign-in names them.");
}

/** A tool set: its name (a new set's) and the names its overrides give tools. */
export function toolsetProblems(
  name: string | undefined,
  overrideNames: Record<string, string | undefined>,
): Problems {
  const problems: Problems = {};
  if (name !== undefined) {
    const said = name.trim() ? serverNameProblem(name.trim()) : "Give the tool set a name.";
    if (said) problems.name = [said];
  }
  for (const [tool, alias] of Object.entries(overrideNames)) {
    const trimmed = alias?.trim();
    if (trimmed && !TOOL_ALIAS.test(trimmed)) problems[`overrides.${tool}.name`] = [NAME_SAYS.toolAlias];
  }
  return problems;
}

/**
 * A scope of servers and tool sets chosen from lists: "only those chosen" with none chosen would
 * reach nothing at all (`who` reaches them: "the key", "them").
 */
export function scopeProblems(scoped: boolean, chosen: number, who: string): Problems {
  return scoped && chosen === 0
    ? { servers: [`Choose at least one server or tool set, or let ${who} every server.`] }
    : {};
}

/** A thread instance's thread id: an empty one would name no thread (and no route). */
export function threadProblems(threadId: string): Problems {
  const trimmed = threadId.trim();
  if (!trimmed)
    return {
      threadId: [
        "Enter a thread id: letters, digits, '.', '_', ':' or '-', starting with a letter or digit.",
      ],
    };
  return THREAD_ID.test(trimmed) ? {} : { threadId: [NAME_SAYS.thread] };
}

function identityProblems(field: string, name: string, missing: string): Problems {
  const trimmed = name.trim();
  if (!trimmed) return { [field]: [missing] };
  return IDENTITY_NAME.test(trimmed) ? {} : { [field]: [NAME_SAYS.identity] };
}
