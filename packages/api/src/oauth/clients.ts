/**
 * OAuth clients: registered by RFC 7591 dynamic registration (stored), or identified by a Client ID
 * Metadata Document — an https URL whose JSON names the client and its redirect URIs — fetched through
 * the SSRF guard, bounded in size and time, and cached briefly in memory.
 */
import { randomBytes } from "node:crypto";
import { z } from "@hono/zod-openapi";
import type { OAuthClientRecord, OAuthStore } from "@mcpgw/aws";

/** A client as the authorization endpoint sees it, however it was identified. */
export interface ResolvedClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  grantTypes: string[];
}

/** The client or its redirect URI is not acceptable: shown on a page, never redirected to. */
export class ClientError extends Error {
  override readonly name = "ClientError";
}

/** The prefix of the ids dynamic registration hands out. */
export const CLIENT_ID_PREFIX = "mgwcl_";

/** Largest CIMD document read (bytes) and the longest wait for it. */
export const CIMD_MAX_BYTES = 5 * 1024;
export const CIMD_TIMEOUT_MS = 5_000;
const CIMD_CACHE_ENTRIES = 200;
const CIMD_MIN_TTL_MS = 60_000;
const CIMD_MAX_TTL_MS = 3_600_000;
const CIMD_DEFAULT_TTL_MS = 300_000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A redirect URI a client may register: https, or http on a loopback host (native apps); no fragment. */
export function acceptableRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password) return false;
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
}

/** Whether a redirect URI only reaches this machine (the page warns about it). */
export function isLoopbackRedirect(value: string): boolean {
  return LOOPBACK_HOSTS.has(new URL(value).hostname);
}

const GRANT_TYPES = ["authorization_code", "refresh_token"] as const;

/** The RFC 7591 registration request the gateway accepts: public clients, code flow only. */
export const RegistrationRequest = z
  .object({
    redirect_uris: z
      .array(z.string().max(2048).refine(acceptableRedirectUri, "must be https, or http on a loopback host"))
      .min(1)
      .max(10),
    client_name: z.string().trim().min(1).max(128).optional(),
    token_endpoint_auth_method: z.literal("none").optional(),
    grant_types: z.array(z.enum(GRANT_TYPES)).max(2).optional(),
    response_types: z.array(z.literal("code")).max(1).optional(),
  })
  .loose();

/** A CIMD document's members the gateway reads (others are ignored). */
const MetadataDocument = z
  .object({
    client_id: z.string(),
    client_name: z.string().trim().min(1).max(128),
    redirect_uris: z.array(z.string().max(2048)).min(1).max(10),
    token_endpoint_auth_method: z.string().optional(),
    grant_types: z.array(z.string()).optional(),
  })
  .loose();

/** Whether `clientId` names a metadata document: an https URL with a path, no fragment or credentials. */
export function isMetadataDocumentId(clientId: string): boolean {
  if (!clientId.startsWith("https://")) return false;
  try {
    const url = new URL(clientId);
    return url.pathname.length > 1 && !url.hash && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** Resolves client ids to clients: stored ones, or metadata documents (fetched once per TTL). */
export class ClientDirectory {
  private readonly cache = new Map<string, { client: ResolvedClient; until: number }>();

  constructor(
    private readonly store: OAuthStore,
    private readonly fetchDocument: typeof fetch,
  ) {}

  /** The client `clientId` names; ClientError when there is none or its document is unacceptable. */
  async resolve(clientId: string): Promise<ResolvedClient> {
    if (isMetadataDocumentId(clientId)) return this.fromDocument(clientId);
    const stored = clientId.startsWith(CLIENT_ID_PREFIX) ? await this.store.client(clientId) : undefined;
    if (!stored) throw new ClientError("Unknown client_id.");
    return stored;
  }

  /** `clientId` obtained a token: a registered client lives on (unused ones expire; see the store). */
  async used(clientId: string): Promise<void> {
    if (clientId.startsWith(CLIENT_ID_PREFIX)) await this.store.clientUsed(clientId);
  }

  /** Registers a public client (RFC 7591); the record is what the registration response shows. */
  async register(request: z.infer<typeof RegistrationRequest>): Promise<OAuthClientRecord> {
    const client: OAuthClientRecord = {
      clientId: `${CLIENT_ID_PREFIX}${randomBytes(24).toString("base64url")}`,
      clientName: request.client_name ?? "Unnamed client",
      redirectUris: request.redirect_uris,
      grantTypes: request.grant_types ?? ["authorization_code"],
      createdAt: new Date().toISOString(),
    };
    await this.store.saveClient(client);
    return client;
  }

  private async fromDocument(url: string): Promise<ResolvedClient> {
    const cached = this.cache.get(url);
    if (cached && cached.until > Date.now()) return cached.client;
    const { document, ttlMs } = await this.fetchJson(url);
    const parsed = MetadataDocument.safeParse(document);
    if (!parsed.success)
      throw new ClientError("The client's metadata document is not valid client metadata.");
    const doc = parsed.data;
    if (doc.client_id !== url)
      throw new ClientError("The client's metadata document names another client_id.");
    if (doc.token_endpoint_auth_method && doc.token_endpoint_auth_method !== "none") {
      throw new ClientError("Only public clients (token_endpoint_auth_method none) are supported.");
    }
    if (!doc.redirect_uris.every(acceptableRedirectUri)) {
      throw new ClientError(
        "The client's metadata document lists a redirect URI that is not https or loopback.",
      );
    }
    const client: ResolvedClient = {
      clientId: url,
      clientName: doc.client_name,
      redirectUris: doc.redirect_uris,
      grantTypes: doc.grant_types ?? ["authorization_code"],
    };
    if (this.cache.size >= CIMD_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value ?? "");
    this.cache.set(url, { client, until: Date.now() + ttlMs });
    return client;
  }

  /** The document at `url`: 200, JSON, at most CIMD_MAX_BYTES, within CIMD_TIMEOUT_MS; no redirects. */
  private async fetchJson(url: string): Promise<{ document: unknown; ttlMs: number }> {
    const signal = AbortSignal.timeout(CIMD_TIMEOUT_MS);
    try {
      const response = await this.fetchDocument(url, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal,
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new ClientError(`The client's metadata document answered ${response.status}.`);
      }
      const text = await readBounded(response, CIMD_MAX_BYTES);
      return { document: JSON.parse(text), ttlMs: cacheTtl(response.headers.get("cache-control")) };
    } catch (error) {
      if (error instanceof ClientError) throw error;
      throw new ClientError("The client's metadata document could not be fetched.", { cause: error });
    }
  }
}

/** The body as text, refusing more than `maxBytes`. */
async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new ClientError("The client's metadata document is too large.");
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new ClientError("The client's metadata document is too large.");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** How long to keep a document: its max-age, clamped to 1 min…1 h (5 min when absent; none for no-store). */
function cacheTtl(cacheControl: string | null): number {
  if (cacheControl && /\bno-store\b/.test(cacheControl)) return 0;
  const maxAge = cacheControl ? /\bmax-age=(\d+)/.exec(cacheControl)?.[1] : undefined;
  if (maxAge === undefined) return CIMD_DEFAULT_TTL_MS;
  return Math.min(CIMD_MAX_TTL_MS, Math.max(CIMD_MIN_TTL_MS, Number(maxAge) * 1000));
}
