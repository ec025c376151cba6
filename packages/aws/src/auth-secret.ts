/**
 * A server's `auth.clientSecret` at rest: sealed on its own (context: the server, field `auth`) beside
 * the config, whose `auth` keeps only the mask — so lists and reads show it masked without a KMS call,
 * and the secret is opened only with the server's other secrets.
 */
import { looksMasked, maskAuth, type ServerRecord, type UpstreamAuth, upstreamAuthOf } from "@mcpgw/core";
import { type SealedValue, type Sealer, serverFieldContext } from "./sealing";

/** The stored form of a record's `auth`: masked in the config, the secret sealed apart. */
export interface SealedAuth {
  auth?: UpstreamAuth;
  sealedAuth?: SealedValue;
}

/** The record's `auth` as stored: the secret sealed (fail closed: a seal failure writes nothing). */
export async function sealAuth(record: ServerRecord, sealer: Sealer): Promise<SealedAuth> {
  const auth = upstreamAuthOf(record);
  if (!auth) return {};
  if (auth.clientSecret === undefined) return { auth };
  if (looksMasked(auth.clientSecret)) throw new Error("a masked client secret cannot be sealed");
  const sealedAuth = await sealer.seal(
    { clientSecret: auth.clientSecret },
    serverFieldContext(record.id, "auth"),
  );
  return { auth: maskAuth(auth), sealedAuth };
}

/**
 * The stored form of `auth` for an edit that keeps sealed values as they are: the mask keeps the
 * current sealed secret, a real value is sealed anew, no secret drops it.
 */
export async function sealAuthKeeping(
  record: ServerRecord,
  current: SealedValue | undefined,
  sealer: Sealer,
): Promise<SealedAuth> {
  const auth = upstreamAuthOf(record);
  if (auth?.clientSecret !== undefined && looksMasked(auth.clientSecret) && current) {
    return { auth, sealedAuth: current };
  }
  return sealAuth(record, sealer);
}

/** `auth` with its secret opened (throws SealError when it cannot be). */
export async function openAuth(
  serverId: string,
  auth: UpstreamAuth | undefined,
  sealedAuth: SealedValue | undefined,
  sealer: Sealer,
): Promise<UpstreamAuth | undefined> {
  if (!auth || !sealedAuth) return auth;
  const { clientSecret } = await sealer.open<{ clientSecret: string }>(
    sealedAuth,
    serverFieldContext(serverId, "auth"),
  );
  return { ...auth, clientSecret };
}
