/**
 * Names of people and groups as the authorization server records them: the `sub` of an OpenID
 * provider (Cognito and Entra ids, Google digits, `auth0|…`, pairwise base64url) or a group the
 * provider lists, and the names the development sign-in accepts. Never a `:` (access subjects are
 * `user:<name>` / `group:<name>`), `/`, `,` or control character; a space only inside (group names
 * such as Okta's "Engineering Team").
 */
export const IDENTITY_NAME = /^(?! )[A-Za-z0-9._@|+=~ -]{1,255}(?<! )$/;

/** Whether `name` may name a user or group. */
export function isIdentityName(name: string): boolean {
  return IDENTITY_NAME.test(name);
}
