/**
 * The names an admin types — servers and tool sets, secrets and their keys, a tool's name in a set,
 * the people and groups the sign-in names — one source for the API's schemas and the console's forms,
 * which check a name before sending it. No dependency, so the console bundles it alone.
 */

/** Server names: 1–32 of [A-Za-z0-9_-], alphanumeric at both ends, never containing `__`. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,30}[A-Za-z0-9])?$/;

/** The same rule in one pattern, `__` excluded by a lookahead (for the API document). */
export const SERVER_NAME_RULE = new RegExp(`^(?!.*__)${SERVER_NAME_PATTERN.source.slice(1)}`);

/** Secret-store entries (what `secretRef` points at). */
export const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Keys of a secret's values (what `{{secret_file}}` renders). */
export const SECRET_KEY = /^[A-Za-z0-9_.-]{1,128}$/;

/** The name a tool set shows for a tool in place of the server's. */
export const TOOL_ALIAS = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Names of people and groups as the authorization server records them: the `sub` of an OpenID
 * provider (Cognito and Entra ids, Google digits, `auth0|…`, pairwise base64url) or a group the
 * provider lists, and the names the development sign-in accepts. Never a `:` (access subjects are
 * `user:<name>` / `group:<name>`), `/`, `,` or control character; a space only inside (group names
 * such as Okta's "Engineering Team").
 */
export const IDENTITY_NAME = /^(?! )[A-Za-z0-9._@|+=~ -]{1,255}(?<! )$/;

/**
 * A thread as its caller names it: 1-128 characters for a key or user (scoped to it); the admin names
 * another's thread by its stored id, `key:<keyId>:<id>` or `user:<hash>:<id>`, hence 200 here.
 */
export const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** What each name is told when it breaks its rule: a sentence, beside the field it was typed in. */
export const NAME_SAYS = {
  server: "Must be 1-32 letters, digits, '_' or '-', starting and ending with a letter or digit.",
  separator: "Must not contain '__': it separates server and tool names.",
  toolset:
    "Must be 1-32 letters, digits, '_' or '-', starting and ending with a letter or digit, without '__'.",
  secret: "Must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit.",
  secretKey: "Must be 1-128 letters, digits, '_', '.' or '-'.",
  toolAlias: "Must be 1-64 letters, digits, '_' or '-'.",
  thread:
    "Must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit (up to 200 for the admin's refs to another's thread).",
  identity:
    "Must be a name the sign-in gives: letters, digits, spaces inside and . _ @ | + = ~ - (no ':', '/' or ','), up to 255.",
} as const;

/** What is wrong with server or tool-set name `name`, if anything. */
export function serverNameProblem(name: string): string | undefined {
  if (!SERVER_NAME_PATTERN.test(name)) return NAME_SAYS.server;
  return name.includes("__") ? NAME_SAYS.separator : undefined;
}
