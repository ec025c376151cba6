/**
 * Why a stdio server's child did not start, in words an admin can act on: a command that is not found
 * says so (and, when it holds spaces, that its arguments go in their own fields — the command is run as
 * one program's name, never through a shell), one that cannot be run says why, and the last lines the
 * child wrote to stderr follow on lines of their own (the caller scrubs secret values from all of it).
 */

/** The sentence for a child that did not start with `command`, then its stderr's tail, if any. */
export function startFailureDetail(command: string, error: unknown, stderrTail: string): string {
  const tail = stderrTail.trim();
  return `the child did not start: ${why(command, error)}${tail ? `\nstderr (last lines):\n${tail}` : ""}`;
}

function why(command: string, error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  if (code === "ENOENT" || /\bspawn\b.*\bENOENT\b/.test(text)) {
    return /\s/.test(command.trim())
      ? `command not found: “${command}” — it holds spaces, and a command is one program's name (it is not run by a shell): put the program in command and each argument in args`
      : `command not found: “${command}” — is it installed, and on the runner's PATH? (a script whose interpreter is missing says the same)`;
  }
  if (code === "EACCES" || /\bspawn\b.*\bEACCES\b/.test(text)) {
    return `“${command}” cannot be run: permission denied (is it executable?)`;
  }
  return text;
}
