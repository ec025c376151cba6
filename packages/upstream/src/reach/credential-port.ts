/**
 * What reaching an upstream needs of the credential store (the aws store's `upstreamCredentials`
 * satisfies it as it is): read, list without opening, write, and the refresh lease.
 */
import type { CredentialKeeper } from "../credential-refresh";
import type { HeldCredential } from "../oauth-client";

/** The credential store, as far as reaching an upstream needs it. */
export interface CredentialPort extends CredentialKeeper {
  /** Every credential held for the server, newest first, none opened. */
  held(serverId: string): Promise<Array<{ subject: string; expiresAt: string | null }>>;
}

/** The sealing adapter's error name: a stored value that cannot be opened (its own package's `SealError`). */
const SEAL_ERROR = "SealError";

/** The credential held for (server, subject); `unreadable` when it is stored but cannot be opened. */
export async function readCredential(
  credentials: Pick<CredentialPort, "get">,
  serverId: string,
  subject: string,
): Promise<HeldCredential | undefined | "unreadable"> {
  try {
    return await credentials.get(serverId, subject);
  } catch (error) {
    if (error instanceof Error && error.name === SEAL_ERROR) return "unreadable";
    throw error;
  }
}
