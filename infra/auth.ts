/**
 * Who signs in: the OpenID provider behind the functions' `Oidc` link (read by
 * packages/aws/src/config.ts), for MCP clients' sign-in at the gateway's authorization server and for
 * console admins.
 * - By default, a Cognito user pool of this stage: invitation only (admins create users), sign-in by
 *   email, Cognito's hosted sign-in pages, groups in the ID token's `cognito:groups` claim, and the group
 *   `gateway-admins` whose members may use the console. Map users and groups to servers with
 *   `PUT /v1/access/{user:<sub>|group:<name>}`.
 * - Your own provider (Entra ID, Okta, Google…) by config at deploy time: OIDC_ISSUER, OIDC_CLIENT_ID
 *   (and optionally OIDC_GROUPS_CLAIM, OIDC_PROVIDER_NAME, OIDC_TOKEN_AUTH_METHOD) in the environment, the client secret by
 *   `npx sst secret set OidcClientSecret …`; no Cognito pool is made.
 * Callback URLs: `${OAUTH_ISSUER}/oauth/oidc/callback`, `${PUBLIC_ADMIN_URL}/console/oidc/callback` and
 * `${PUBLIC_ADMIN_URL}/oauth/upstream/signin` (per_user authorization links) when those are set (a function's URL is only known after it exists, and the functions need the
 * client first), and, outside production, `npm run dev`'s on http://localhost:8787.
 */

const production = $app.stage === "production";
/** The console's admin group in the default pool. */
export const COGNITO_ADMIN_GROUP = "gateway-admins";

const trim = (url: string | undefined) => url?.replace(/\/+$/, "");
const gatewayOrigin = trim(process.env.OAUTH_ISSUER);
const adminOrigin = trim(process.env.PUBLIC_ADMIN_URL);

/** Where the provider may send the browser back. */
export const oidcCallbackUrls = [
  ...(gatewayOrigin ? [`${gatewayOrigin}/oauth/oidc/callback`] : []),
  ...(adminOrigin ? [`${adminOrigin}/console/oidc/callback`, `${adminOrigin}/oauth/upstream/signin`] : []),
  ...(production
    ? []
    : [
        "http://localhost:8787/oauth/oidc/callback",
        "http://localhost:8787/console/oidc/callback",
        "http://localhost:8787/oauth/upstream/signin",
      ]),
];

/** Whether the deployer names their own provider (no Cognito pool then). */
export const ownProvider = Boolean(process.env.OIDC_ISSUER);

function cognito() {
  const pool = new aws.cognito.UserPool("Users", {
    name: `${$app.name}-${$app.stage}`,
    usernameAttributes: ["email"],
    autoVerifiedAttributes: ["email"],
    adminCreateUserConfig: { allowAdminCreateUserOnly: true },
    deletionProtection: production ? "ACTIVE" : "INACTIVE",
  });
  new aws.cognito.UserGroup("ConsoleAdmins", {
    userPoolId: pool.id,
    name: COGNITO_ADMIN_GROUP,
    description: "May sign in to the MCP Gateway admin console",
  });
  // The hosted sign-in pages; the prefix must be unique in the region, hence the account id.
  new aws.cognito.UserPoolDomain("UsersDomain", {
    userPoolId: pool.id,
    domain: $interpolate`${$app.name}-${$app.stage}-${aws.getCallerIdentityOutput().accountId}`,
  });
  const client = new aws.cognito.UserPoolClient("GatewayClient", {
    userPoolId: pool.id,
    generateSecret: true,
    allowedOauthFlowsUserPoolClient: true,
    allowedOauthFlows: ["code"],
    allowedOauthScopes: ["openid", "email", "profile"],
    supportedIdentityProviders: ["COGNITO"],
    callbackUrls: oidcCallbackUrls,
    preventUserExistenceErrors: "ENABLED",
  });
  return {
    issuer: $interpolate`https://${pool.endpoint}`,
    clientId: client.id,
    clientSecret: client.clientSecret,
    groupsClaim: "cognito:groups",
    providerName: "Cognito",
  };
}

function configured() {
  const secret = new sst.Secret("OidcClientSecret");
  return {
    issuer: process.env.OIDC_ISSUER ?? "",
    clientId: process.env.OIDC_CLIENT_ID ?? "",
    clientSecret: secret.value,
    // Empty: the config module's defaults (`groups`, the issuer's host).
    groupsClaim: process.env.OIDC_GROUPS_CLAIM ?? "",
    providerName: process.env.OIDC_PROVIDER_NAME ?? "",
  };
}

/** `Resource.Oidc`: the provider and the gateway's client at it (the secret travels encrypted in the link). */
export const oidcLink = new sst.Linkable("Oidc", { properties: ownProvider ? configured() : cognito() });

/**
 * The console's admins (the admin function's env): CONSOLE_ADMIN_GROUP / CONSOLE_ADMINS at deploy
 * time, else the default pool's `gateway-admins` group.
 */
export const consoleAdminEnvironment = () => ({
  ...(process.env.CONSOLE_ADMIN_GROUP || !ownProvider
    ? { CONSOLE_ADMIN_GROUP: process.env.CONSOLE_ADMIN_GROUP || COGNITO_ADMIN_GROUP }
    : {}),
  ...(process.env.CONSOLE_ADMINS ? { CONSOLE_ADMINS: process.env.CONSOLE_ADMINS } : {}),
});
