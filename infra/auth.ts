/**
 * Who signs in: the OpenID provider behind the functions' `Oidc` link (read by
 * packages/aws/src/config.ts), for MCP clients' sign-in at the gateway's authorization server and for
 * console admins. The stage's settings (infra/stages.ts, `signIn`) choose:
 * - `"cognito"` (default): a Cognito user pool of this stage: invitation only (admins create users),
 *   sign-in by email, Cognito's hosted sign-in pages, groups in the ID token's `cognito:groups` claim,
 *   and the group `gateway-admins` whose members may use the console. Map users and groups to servers
 *   with `PUT /v1/access/{user:<sub>|group:<name>}`.
 * - your own provider (Entra ID, Okta, Google…): its issuer and client id in the settings, the client
 *   secret by `npx sst secret set OidcClientSecret …`; no Cognito pool is made.
 * - `"off"`: nobody signs in (the admin token and keys only); the link is empty.
 * Callback URLs (`callbackUrls`): the stage's oauthIssuer and publicAdminUrl ones (a function's URL is
 * only known after it exists, and the functions need the client first), and, outside production,
 * `npm run dev`'s on http://127.0.0.1:8787. Production without both URLs fails before anything is built.
 */
import { callbackUrls, isProduction, type OwnProvider, stageSettings } from "./stages";

const settings = stageSettings($app.stage);
const production = isProduction($app.stage);
/** The console's admin group in the default pool. */
export const COGNITO_ADMIN_GROUP = "gateway-admins";

/** Where the provider may send the browser back (never empty with a Cognito pool: see stageSettings). */
const oidcCallbackUrls = callbackUrls($app.stage, settings);

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

function configured(provider: OwnProvider) {
  const secret = new sst.Secret("OidcClientSecret");
  return {
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecret: secret.value,
    // Empty: the config module's defaults (`groups`, the issuer's host).
    groupsClaim: provider.groupsClaim ?? "",
    providerName: provider.providerName ?? "",
  };
}

/** Nobody signs in: an empty issuer is no provider to the config module. */
const noProvider = { issuer: "", clientId: "", clientSecret: "", groupsClaim: "", providerName: "" };

/** `Resource.Oidc`: the provider and the gateway's client at it (the secret travels encrypted in the link). */
export const oidcLink = new sst.Linkable("Oidc", {
  properties:
    typeof settings.signIn === "object"
      ? configured(settings.signIn)
      : settings.signIn === "off"
        ? noProvider
        : cognito(),
});

/**
 * The console's admins (the admin function's env): the stage's consoleAdminGroup / consoleAdmins,
 * else with Cognito the default pool's `gateway-admins` group.
 */
export const consoleAdminEnvironment = () => {
  const cognitoPool = settings.signIn === undefined || settings.signIn === "cognito";
  const group = settings.consoleAdminGroup ?? (cognitoPool ? COGNITO_ADMIN_GROUP : undefined);
  return {
    ...(group ? { CONSOLE_ADMIN_GROUP: group } : {}),
    ...(settings.consoleAdmins ? { CONSOLE_ADMINS: settings.consoleAdmins } : {}),
  };
};
