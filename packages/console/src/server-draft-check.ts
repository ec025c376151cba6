/**
 * A server form's checks before anything is sent: what the API would refuse, said beside its field in
 * words — header names and values by RFC 9110 and the gateway's own rules (@mcpgw/core/header-rules,
 * the API's source), environment names, the timeout's range — and nothing typed is dropped unsaid (a
 * row with a value and no name, a name given twice). A command line typed whole into Command gets a
 * hint and a way to split it (its arguments go in their own fields).
 */
import { headerNameProblem, headerValueProblem } from "@mcpgw/core/header-rules";

/** A name/value row of a headers or environment editor. */
export interface Row {
  key: string;
  value: string;
}

/** What the checks read of a draft. */
export interface CheckedDraft {
  transport: "http" | "stdio";
  timeoutSeconds: string;
  headers: Row[];
  env: Row[];
}

/** Problems by field (`timeoutSeconds`, `headers`, `env`), each a sentence; empty when none. */
export function draftProblems(draft: CheckedDraft): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  const add = (field: string, list: string[]) => {
    if (list.length > 0) problems[field] = list;
  };
  add("timeoutSeconds", timeoutProblems(draft.timeoutSeconds));
  if (draft.transport === "http") add("headers", headerProblems(draft.headers));
  else add("env", envProblems(draft.env));
  return problems;
}

/** The timeout: a whole number of seconds, 1 to 900. */
export function timeoutProblems(text: string): string[] {
  if (!text.trim()) return ["Enter a timeout: a whole number of seconds from 1 to 900."];
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) return [`“${text}” is not a number of seconds: use 1 to 900.`];
  if (!Number.isInteger(seconds)) return ["The timeout must be a whole number of seconds."];
  if (seconds < 1 || seconds > 900) return ["The timeout must be from 1 to 900 seconds (15 minutes)."];
  return [];
}

/** Header rows: named, each name once (any case), names and values an HTTP request can carry. */
export function headerProblems(rows: Row[]): string[] {
  return rowProblems(
    rows,
    "Header",
    (name) => name.toLowerCase(),
    (name, value) => {
      const nameProblem = headerNameProblem(name);
      if (nameProblem) return `Header “${name}”: the name ${nameProblem}.`;
      const valueProblem = headerValueProblem(value);
      return valueProblem ? `Header “${name}”: the value ${valueProblem}.` : undefined;
    },
  );
}

/** Environment rows: named, each name once, names a shell takes. */
export function envProblems(rows: Row[]): string[] {
  return rowProblems(
    rows,
    "Variable",
    (name) => name,
    (name) =>
      /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
        ? undefined
        : `“${name}” is not an environment variable name: letters, digits and _, not starting with a digit.`,
  );
}

function rowProblems(
  rows: Row[],
  what: string,
  identity: (name: string) => string,
  check: (name: string, value: string) => string | undefined,
): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const name = row.key.trim();
    if (!name) {
      if (row.value)
        problems.push(`${what} row ${index + 1} has a value but no name: name it, or remove the row.`);
      return;
    }
    if (seen.has(identity(name))) problems.push(`${what} “${name}” is given twice: keep one row.`);
    seen.add(identity(name));
    const problem = check(name, row.value);
    if (problem) problems.push(problem);
  });
  return problems;
}

/**
 * A command line typed whole into Command (`npx -y some-server`): its words, split as a shell would
 * split plain words and quotes (nothing is expanded), for Command and Arguments — or undefined when the
 * command has no space (or only spaces inside quotes: a path with spaces).
 */
export function splitCommandLine(command: string): { command: string; args: string[] } | undefined {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const char of command.trim()) {
    if (quote) {
      if (char === quote) quote = undefined;
      else word = (word ?? "") + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= "";
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  const [first, ...args] = words;
  if (first === undefined || args.length === 0 || quote) return undefined;
  return { command: first, args };
}
