/**
 * The gateway as an OAuth client of the upstreams it fronts (`auth: { type: "oauth", mode: "shared" }`):
 * an admin asks for an authorization URL, opens it, and the upstream's authorization server sends the
 * browser back to the admin function's callback, which exchanges the code (PKCE) and keeps the tokens
 * sealed. The callback is unauthenticated: it is bound to a stored, single-use, short-lived `state`.
 */
import { SealError } from "@mcpgw/aws";
import { AppError, errorFields, isPerUser, SHARED_SUBJECT } from "@mcpgw/core";
import {
  credentialSecrets,
  describeFailure,
  finishUpstreamAuthorization,
  gatewayClientMetadata,
  scrubSecrets,
} from "@mcpgw/upstream";
import { html } from "hono/html";
import type { Principal } from "../env";
import { messagePage } from "../oauth/page";
import {
  type AuthorizationLink,
  beginUpstreamAuthorization,
  CLIENT_METADATA_PATH,
  credentialSubject,
  publicAdminBase,
  UPSTREAM_CALLBACK_PATH,
  upstreamAuthFetch,
} from "../upstream-authorization";
import { type AdminDeps, assertConfigReadable, reconnectServer } from "./service";

export { CLIENT_METADATA_PATH, UPSTREAM_CALLBACK_PATH } from "../upstream-authorization";

/** What the upstream-OAuth routes need: the admin deps (`publicAdminUrl`, `fetch`). */
export type UpstreamAuthDeps = AdminDeps;

/** The gateway's CIMD document (its `client_id` is its own URL). */
export async function clientMetadataDocument(deps: UpstreamAuthDeps) {
  const base = publicAdminBase(deps);
  return gatewayClientMetadata(`${base}${UPSTREAM_CALLBACK_PATH}`, `${base}${CLIENT_METADATA_PATH}`);
}

/**
 * Starts an authorization of a server from the admin plane: in `shared` mode the one connection every
 * caller uses; in `per_user` mode the admin's own (which the worker's checks also use, so the tools are
 * catalogued before any user has authorized).
 */
export async function authorizeServer(
  deps: UpstreamAuthDeps,
  idOrName: string,
  principal: Principal | undefined,
): Promise<AuthorizationLink> {
  const server = await deps.store.servers.resolvePlain(idOrName);
  if (!server) throw new AppError("server.not_found", `No server with id or name '${idOrName}'.`);
  assertConfigReadable(server);
  if (server.transport !== "http" || !server.auth)
    throw new AppError(
      "server.not_oauth",
      `Server '${server.name}' has no \`auth\`: nothing to authorize (give it \`auth: { type: "oauth" }\` first).`,
    );
  if (server.auth.type === "client_credentials")
    throw new AppError(
      "server.no_authorize_step",
      `Server '${server.name}' uses the client_credentials grant: the gateway obtains its tokens itself, no one authorizes it. A refused grant is fixed by correcting \`auth\` (client id, secret).`,
    );
  const subject = isPerUser(server) ? credentialSubject(principal) : SHARED_SUBJECT;
  return beginUpstreamAuthorization(deps, server, subject);
}

/** What the callback answers: a small page (never the code or a token). */
export interface CallbackPage {
  status: 200 | 400;
  html: string;
}

/**
 * Finishes an authorization: the code exchanged, the tokens sealed, a reconnect enqueued. A caller's own
 * is finished only in the browser that opened its link (`holderHash`, the hash of its secret).
 */
export async function completeAuthorization(
  deps: UpstreamAuthDeps,
  query: Record<string, string | undefined>,
  holderHash?: string,
): Promise<CallbackPage> {
  const state = query.state;
  const pending = state
    ? await deps.store.upstreamCredentials.take(state, holderHash).catch(sealFailure)
    : undefined;
  if (!pending) return failed("This authorization link is unknown, used or expired. Start again.");
  const server = await deps.store.servers.getPlain(pending.serverId);
  if (server?.transport !== "http" || !server.auth)
    return failed("The server this authorization was for is gone or no longer uses OAuth.");
  if (isPerUser(server) === (pending.subject === SHARED_SUBJECT))
    return failed("The server's OAuth mode changed since this authorization began. Start again.");
  if (query.error) {
    deps.logger.warn("upstream authorization refused", { serverId: server.id, error: query.error });
    return failed(`The authorization server refused: ${query.error}.`);
  }
  if (!query.code) return failed("The authorization server sent no code.");
  let credential: Awaited<ReturnType<typeof finishUpstreamAuthorization>>;
  try {
    credential = await finishUpstreamAuthorization(
      pending,
      { code: query.code, iss: query.iss },
      upstreamAuthFetch(deps),
    );
  } catch (error) {
    const text = scrubSecrets(describeFailure(error), [
      query.code,
      pending.codeVerifier,
      pending.client.client_secret ?? "",
    ]);
    deps.logger.warn("upstream code exchange failed", { serverId: server.id, error: text });
    return failed(`The authorization server did not exchange the code: ${text}`);
  }
  await deps.store.upstreamCredentials.put(server.id, pending.subject, credential);
  deps.logger.info("upstream authorized", {
    serverId: server.id,
    subject: pending.subject,
    server: server.name,
    expiresAt: credential.expiresAt ?? null,
    refreshable: credentialSecrets(credential).length > 1,
  });
  // The shared connection is the server's: check it again now. A user's own connection is theirs
  // alone: the server is checked again only when no connection of anyone's worked before.
  const recheck =
    server.enabled &&
    (pending.subject === SHARED_SUBJECT || (await deps.store.statuses.get(server.id))?.state !== "connected");
  if (recheck) {
    await reconnectServer(deps, server.id).catch((error: unknown) =>
      deps.logger.warn("reconnect after authorization failed", {
        serverId: server.id,
        ...errorFields(error),
      }),
    );
  }
  return {
    status: 200,
    html: messagePage(
      "Authorized",
      html`The gateway is now authorized at <strong>${server.name}</strong>${
        pending.subject === SHARED_SUBJECT ? "" : html` for <strong>${pending.subject}</strong>`
      }. You can close this window.`,
    ),
  };
}

/** A sealed record that cannot be opened reads as absent; any other failure is thrown on. */
export function sealFailure(error: unknown): undefined {
  if (error instanceof SealError) return undefined;
  throw error;
}

function failed(message: string): CallbackPage {
  return { status: 400, html: messagePage("Authorization failed", message) };
}
