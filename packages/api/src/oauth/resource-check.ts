/** Which resources the authorization server issues tokens for, and which servers a user reaches. */
import type { AccessMapping, AccessSubject, GrantSubject, Store } from "@mcpgw/aws";
import type { ToolGrant } from "../gateway/tool-access";

/** What a user reaches: server ids (null: all), names for the consent page, and — when a mapping names tool sets or a policy — a grant per mapping. */
export interface Reach {
  ids: string[] | null;
  names: string[] | "all";
  grants?: ToolGrant[];
}

/** True when the user reaches no server and no tool set. */
export function reachesNothing(reach: Reach): boolean {
  return (
    reach.ids !== null && reach.ids.length === 0 && !reach.grants?.some((grant) => grant.toolsets.length > 0)
  );
}

/** The most a token's `grants` claim may take, as JSON: tokens travel in headers (the token at most 8 KiB). */
export const MAX_GRANTS_BYTES = 4 * 1024;

/** True when the grants, as JSON, fit in a token's `grants` claim. */
export function grantsFit(grants: readonly ToolGrant[] | undefined): boolean {
  return grants === undefined || Buffer.byteLength(JSON.stringify(grants)) <= MAX_GRANTS_BYTES;
}

/**
 * The most a token's reach (`servers` and `grants`) may take together, as JSON: base64url makes it a
 * third larger, and the rest of the token (header, other claims, signature) stays under 1 KiB, so a
 * token within it stays within the 8 KiB a verifier takes.
 */
export const MAX_REACH_BYTES = 5 * 1024;

/** True when a reach fits in one token: its grants alone, and its server ids with them. */
export function reachFits(reach: Pick<Reach, "ids" | "grants">): boolean {
  return (
    grantsFit(reach.grants) &&
    Buffer.byteLength(JSON.stringify({ servers: reach.ids, grants: reach.grants })) <= MAX_REACH_BYTES
  );
}

/**
 * What a user holding `mappings` (theirs and their groups') reaches: the union of their server ids
 * (null: every server), and a grant per mapping when one names tool sets or a policy.
 */
export function reachOfMappings(mappings: readonly AccessMapping[]): Pick<Reach, "ids" | "grants"> {
  // A mapping with tool sets and no servers reaches no server whole, only the sets' tools.
  const ids: string[] | null = mappings.some((m) => m.serverIds === null && !m.toolsets?.length)
    ? null
    : [...new Set(mappings.flatMap((m) => m.serverIds ?? []))].sort();
  const grants = mappings.some((m) => m.toolsets?.length || m.toolPolicy)
    ? mappings.map((m) => ({
        serverIds: m.serverIds,
        toolsets: m.toolsets ?? [],
        ...(m.toolPolicy ? { toolPolicy: m.toolPolicy } : {}),
      }))
    : undefined;
  return grants ? { ids, grants } : { ids };
}

/**
 * Which resources this gateway serves and which servers a user reaches: the union of the mappings of
 * the user and their groups (null: every server).
 */
export class ResourceCheck {
  constructor(
    private readonly store: Store,
    private readonly issuerOf: () => string,
  ) {}

  private get issuer(): string {
    return this.issuerOf();
  }

  /**
   * Whether `resource` is `${issuer}/mcp`, `${issuer}/mcp/{server}` of an existing server or
   * `${issuer}/mcp/sets/{name}` of an existing tool set.
   */
  async known(resource: string): Promise<boolean> {
    if (resource === `${this.issuer}/mcp`) return true;
    const set = this.toolsetOf(resource);
    if (set !== undefined) return (await this.store.toolsets.get(set)) !== undefined;
    const prefix = `${this.issuer}/mcp/`;
    if (!resource.startsWith(prefix)) return false;
    const name = resource.slice(prefix.length);
    const decoded = /^[^/?#]+$/.test(name) ? decodedName(name) : undefined;
    return decoded !== undefined && (await this.store.servers.resolvePlain(decoded)) !== undefined;
  }

  /** The servers `who` may reach for `resource`: ids (null: all) and names for the consent page. */
  async serversOf(who: GrantSubject, resource: string): Promise<Reach> {
    const subjects: AccessSubject[] = [
      `user:${who.sub}`,
      ...who.groups.map((group) => `group:${group}` as const),
    ];
    const mappings = await this.store.oauth.access(subjects);
    const servers = await this.store.servers.listPlain();
    const { ids, grants } = reachOfMappings(mappings);
    const tools = grants ? { grants } : {};
    // A token for one server reaches nothing when that server is not among the user's.
    // A tool set's endpoint is scoped as /mcp is: the user's tools (the set's among them) are what it serves.
    const prefix = `${this.issuer}/mcp/`;
    if (resource.startsWith(prefix) && this.toolsetOf(resource) === undefined) {
      const name = decodedName(resource.slice(prefix.length));
      const target = name === undefined ? undefined : await this.store.servers.resolvePlain(name);
      if (!target || (ids !== null && !ids.includes(target.id))) return { ids: [], names: [] };
    }
    if (ids === null) return { ids, names: "all", ...tools };
    const byId = new Map(servers.map((server) => [server.id, server.name]));
    const live = ids.filter((id) => byId.has(id));
    return { ids: live, names: live.map((id) => byId.get(id) ?? id).sort(), ...tools };
  }

  /** The tool set `resource` names (`${issuer}/mcp/sets/{name}`), if it names one. */
  private toolsetOf(resource: string): string | undefined {
    const prefix = `${this.issuer}/mcp/sets/`;
    if (!resource.startsWith(prefix)) return undefined;
    const name = resource.slice(prefix.length);
    return /^[^/?#]+$/.test(name) ? decodedName(name) : undefined;
  }
}

/** A percent-encoded server name decoded; undefined when its escapes are malformed. */
function decodedName(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
