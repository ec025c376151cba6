/**
 * Reaching a server as a caller, for a purpose: the one entry point the worker's probes and the
 * gateway's calls share. It builds the target (a URL, or the runner's face of a stdio server), chooses
 * the credential (none, the shared one, the caller's own, or the machine client's), renews it when due
 * or refused — under the refresh lease — and answers either a ready target or a {@link Verdict}.
 */
import {
  assertNever,
  type Logger,
  placementKey,
  SHARED_SUBJECT,
  type UpstreamClientCredentials,
} from "@mcpgw/core";
import { describeFailure, scrubSecrets } from "../classify-failure";
import { needsNewGrant, requestClientCredentialsToken } from "../client-credentials";
import { refreshHeldCredential } from "../credential-refresh";
import { credentialSecrets, type HeldCredential, needsRefresh, withBearer } from "../oauth-client";
import { type RunnerRoute, runnerFor } from "../runner-fleet";
import type { UpstreamTarget } from "../session";
import { type TargetSource, targetOf } from "../target";
import { type CredentialPort, readCredential } from "./credential-port";
import {
  type CredentialMode,
  callerVerdict,
  noCredentialVerdict,
  noRunnerVerdict,
  serverVerdict,
  type Verdict,
} from "./verdict";

/** What reaching a server needs. */
export interface ReachDeps {
  credentials: CredentialPort;
  /** The outbound-guarded fetch (token requests go through it too). */
  fetch: typeof fetch;
  logger: Logger;
  /** The stdio runner, or the fleet's directory (the instance's owner is looked up here). */
  runner?: RunnerRoute | undefined;
}

/** The server to reach: what its target is made of, and its name (for messages). */
export type ReachServer = TargetSource & { name: string };

/**
 * Why the server is reached. `probe` (the worker's): the shared credential is refreshed, a machine
 * client's token obtained, here. `call` / `list` (the gateway's): the stored credential is read and
 * only a caller's own is refreshed here; a `list` (a fan-out) gives a caller with no connection of
 * their own no authorization to open.
 */
export type ReachPurpose = "probe" | "call" | "list";

/** Who reaches what, and why. */
export interface ReachRequest {
  server: ReachServer;
  purpose: ReachPurpose;
  /** A `per_user` server's caller (`user:<sub>`, `key:<id>`, `admin`): whose own credential. */
  subject?: string | undefined;
  /** One thread's instance of a thread-scoped stdio server. */
  thread?: string | undefined;
  /** Who calls a stdio server (`user:<sub>`, `key:<id>`, `admin`), named to the runner; none for a probe. */
  caller?: string | undefined;
  /** A probe whose credential the upstream refused (with its error): renew it, or the verdict. */
  refused?: (Reached & { error: string }) | undefined;
  /** A stdio instance asked for again after a runner of the fleet refused it (see `runnerFor`). */
  followed?: boolean;
}

/** A server ready to be reached. */
export interface Reached {
  target: UpstreamTarget;
  /** Every secret value sent (header values, tokens), to scrub from error text; grows as tokens renew. */
  secrets: string[];
  /** The credential the target carries (the first one, for a call's target that renews its own). */
  credential?: HeldCredential | undefined;
  /** Whether the credential was renewed (refreshed or granted) for this reach. */
  renewed: boolean;
}

/** True when reaching (or probing) gave a verdict, not a target (or a probe's result). */
export function isVerdict<T extends object>(outcome: T | Verdict): outcome is Verdict {
  return "retryable" in outcome && "scope" in outcome;
}

/** Reaches `request.server` as its caller (see {@link ReachRequest}): a ready target, or why not. */
export async function reach(deps: ReachDeps, request: ReachRequest): Promise<Reached | Verdict> {
  const { server } = request;
  const runner =
    server.transport === "stdio"
      ? await runnerFor(deps.runner, placementKey(server.id, request.thread), request.followed)
      : undefined;
  const target = targetOf(server, runner, request.thread, request.caller);
  if (!target) return noRunnerVerdict();
  const plain = (): Reached | Verdict =>
    request.refused
      ? serverVerdict("access_denied", request.refused.error)
      : { target, secrets: Object.values(target.headers), renewed: false };
  switch (server.transport) {
    case "stdio":
      return plain();
    case "http": {
      const { auth } = server;
      if (!auth) return plain();
      switch (auth.type) {
        case "oauth": {
          const mode = auth.mode === "per_user" ? "per_user" : "shared";
          return request.purpose === "probe"
            ? probeWithOAuth(deps, request, target)
            : callWithStored(deps, request, target, mode);
        }
        case "client_credentials":
          return request.purpose === "probe"
            ? probeWithGrant(deps, request, target, { id: server.id, url: server.url, auth })
            : callWithStored(deps, request, target, "client_credentials");
        default:
          return assertNever(auth);
      }
    }
    default:
      return assertNever(server);
  }
}

/** A target carrying `credential`'s bearer. */
function bearing(target: UpstreamTarget, credential: HeldCredential, renewed: boolean): Reached {
  const withToken = withBearer(target, credential.accessToken);
  return {
    target: withToken,
    secrets: [...Object.values(withToken.headers), ...credentialSecrets(credential)],
    credential,
    renewed,
  };
}

/**
 * A probe as an OAuth client (authorization code): the subject's credential, refreshed first when it
 * expires within the margin, or when the upstream refused it (once, with a refresh token). No
 * credential, one that cannot be opened, a refresh refused, or a refusal a refresh does not cure →
 * access_denied, `authorization: "required"` (never a silent expiry).
 */
async function probeWithOAuth(
  deps: ReachDeps,
  request: ReachRequest,
  target: UpstreamTarget,
): Promise<Reached | Verdict> {
  const { server, refused } = request;
  const subject = request.subject ?? SHARED_SUBJECT;
  const required = (error: string, credential?: HeldCredential): Verdict =>
    serverVerdict("access_denied", error, {
      authorization: "required",
      credentialExpiresAt: credential?.expiresAt ?? null,
    });
  const refresh = (held: HeldCredential) =>
    refreshHeldCredential(
      { credentials: deps.credentials, fetch: deps.fetch, logger: deps.logger },
      server.id,
      subject,
      held,
    );
  if (refused?.credential) {
    const held = refused.credential;
    if (refused.renewed || !held.refreshToken)
      return required(`the upstream refused the gateway's token (${refused.error})`, held);
    const fresh = await refresh(held);
    return typeof fresh === "string" ? required(fresh, held) : bearing(target, fresh, true);
  }
  const held = await readCredential(deps.credentials, server.id, subject);
  if (held === "unreadable") return required("the stored upstream credential cannot be opened");
  if (!held) return required("the gateway holds no credential for this upstream");
  if (!needsRefresh(held)) return bearing(target, held, false);
  const fresh = await refresh(held);
  return typeof fresh === "string" ? required(fresh, held) : bearing(target, fresh, true);
}

/**
 * A probe as a machine client (client_credentials): the held token (under SHARED_SUBJECT), or a new
 * one by the grant when there is none, it cannot be opened, it expires within the margin, or the
 * upstream refused it — stored sealed. A refused grant → access_denied, `authorization: "refused"`:
 * no authorize step exists here, the fix is the client's id or secret.
 */
async function probeWithGrant(
  deps: ReachDeps,
  request: ReachRequest,
  target: UpstreamTarget,
  server: { id: string; url: string; auth: UpstreamClientCredentials },
): Promise<Reached | Verdict> {
  const { refused } = request;
  const { auth } = server;
  const refusal = (error: string, credential?: HeldCredential): Verdict =>
    serverVerdict("access_denied", error, {
      authorization: "refused",
      credentialExpiresAt: credential?.expiresAt ?? null,
    });
  const grant = async (previous?: HeldCredential): Promise<Reached | Verdict> => {
    const fresh = await requestGrant(deps, server, auth);
    return typeof fresh === "string" ? refusal(fresh, previous) : bearing(target, fresh, true);
  };
  if (refused?.credential) {
    if (refused.renewed)
      return refusal(
        `the upstream refused the token the client_credentials grant gave (${refused.error})`,
        refused.credential,
      );
    return grant(refused.credential);
  }
  const held = await readCredential(deps.credentials, server.id, SHARED_SUBJECT);
  const credential = held === "unreadable" ? undefined : held; // a new grant replaces one unreadable
  if (credential && !needsNewGrant(credential)) return bearing(target, credential, false);
  return grant(credential);
}

/** A new token by the client_credentials grant, stored sealed; or why there is none (scrubbed). */
async function requestGrant(
  deps: ReachDeps,
  server: { id: string; url: string },
  auth: UpstreamClientCredentials,
): Promise<HeldCredential | string> {
  try {
    const fresh = await requestClientCredentialsToken({ url: server.url, auth, fetch: deps.fetch });
    await deps.credentials.put(server.id, SHARED_SUBJECT, fresh);
    deps.logger.info("upstream token obtained (client_credentials)", {
      serverId: server.id,
      expiresAt: fresh.expiresAt ?? null,
    });
    return fresh;
  } catch (error) {
    const text = scrubSecrets(describeFailure(error), [auth.clientSecret]);
    deps.logger.warn("upstream client_credentials grant failed", { serverId: server.id, error: text });
    return `the upstream's authorization server refused the client_credentials grant for client '${auth.clientId}' (${text}); correct auth.clientId / auth.clientSecret`;
  }
}

/**
 * A call's target at a server the gateway is an OAuth client of: the stored credential's bearer (the
 * shared one, or in `per_user` mode the caller's own — none is the caller's verdict), asked before
 * every request. When its token has expired or the upstream answers 401, the target reads the store
 * again (the worker refreshes shared credentials) and the transport retries once with what it found;
 * a caller's own credential it refreshes itself, under the refresh lease (a rotated refresh token spent
 * twice would revoke its family).
 */
async function callWithStored(
  deps: ReachDeps,
  request: ReachRequest,
  target: UpstreamTarget,
  mode: Exclude<CredentialMode, "none">,
): Promise<Reached | Verdict> {
  const { server } = request;
  const own = mode === "per_user" ? request.subject : undefined;
  const read = async () => {
    const found = await readCredential(deps.credentials, server.id, own ?? SHARED_SUBJECT);
    return found === "unreadable" ? undefined : found;
  };
  let held = await read();
  if (!held && own) return callerVerdict(`No credential of ${own} at '${server.name}'.`, "required");
  if (!held) return noCredentialVerdict(server, mode === "client_credentials" ? mode : "shared");
  const first = held;
  const secrets = [...credentialSecrets(held), ...Object.values(target.headers)];
  const reload = async () => {
    const stale = held;
    let fresh = await read();
    // A caller's own token: refreshed here when the store has nothing newer (under the refresh lease).
    if (own && stale && fresh?.accessToken === stale.accessToken && stale.refreshToken) {
      const refreshed = await refreshHeldCredential(
        { credentials: deps.credentials, fetch: deps.fetch, logger: deps.logger },
        server.id,
        own,
        stale,
      );
      fresh = typeof refreshed === "string" ? undefined : refreshed;
    }
    if (!fresh) {
      // A caller's own credential deleted (key revoked, access removed): not used a moment longer.
      if (own) held = undefined;
      return;
    }
    held = fresh;
    secrets.push(...credentialSecrets(fresh));
  };
  return {
    target: {
      ...target,
      auth: {
        token: async () => {
          if (held?.expiresAt && Date.parse(held.expiresAt) <= Date.now()) await reload();
          return held?.accessToken;
        },
        onUnauthorized: reload,
      },
    },
    secrets,
    credential: first,
    renewed: false,
  };
}
