import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ApiKeyInfo, Store } from "@mcpgw/aws";
import { AppError, changedFields, IDENTITY_NAME, NOT_BLANK } from "@mcpgw/core";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { credentialSubject, forgetSubject } from "../upstream-authorization";
import { ApiKeyList, KeyRateLimitView, NewApiKeyView } from "../views";
import { noteChange } from "./change-audit";
import { assertToolsets, ToolPolicyInput, ToolsetNames } from "./toolsets";

/** Text that trim() leaves non-empty (stored trimmed), its document saying so. */
export const NotBlank = z.string().trim().min(1).meta({ pattern: NOT_BLANK.source });

/**
 * `user:<name>` or `group:<name>`: a provider's `sub` or group name (letters, digits, `. _ @ | + = ~ -`
 * and inner spaces, up to 255), as the sign-in records them (access mappings and key owners).
 */
export const PersonSubject = z
  .string()
  .regex(new RegExp(`^(user|group):${IDENTITY_NAME.source.slice(1)}`), "must be user:<name> or group:<name>");

const CreateKey = z.strictObject({
  name: NotBlank.max(128),
  owner: PersonSubject.optional().openapi({
    description:
      "Who the key belongs to, `user:<name>` or `group:<name>`: the person who must sign in to open the key's per_user authorization links (a member, for a group). Without one, the key cannot authorize a per_user server (409 auth.owner_required).",
    example: "user:ada",
  }),
  servers: z.array(NotBlank.max(64)).max(500).optional().openapi({
    description:
      "Names or ids of the servers the key may use, each bound to the server's id now (unknown → 400 key.unknown_server); omitted = every server",
  }),
  rateLimit: KeyRateLimitView.nullable().optional().openapi({
    description: "The key's own call limits over the global ones; omitted or null = the global limits",
  }),
  toolsets: ToolsetNames.optional().openapi({
    description:
      "Tool sets the key may use besides its servers (unknown → 400 key.unknown_toolset); with sets and no `servers`, only the sets' tools",
  }),
  toolPolicy: ToolPolicyInput.optional(),
});

/** What the key routes tell about keys they create or revoke (the in-process key index). */
export interface KeyChanges {
  added(key: string, info: ApiKeyInfo): void;
  revoked(id: string): void;
}

/** Registers the client API key routes (admin only). */
export function registerKeyRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: { store: Store; keyChanges?: KeyChanges },
): void {
  app.openapi(
    route({
      method: "post",
      path: "/v1/keys",
      tags: ["keys"],
      summary: "Create a client API key for the data plane and MCP endpoints, optionally scoped to servers",
      request: jsonBody(CreateKey),
      responses: { 201: json(NewApiKeyView, "Created (the key is shown only now)") },
    }),
    async (c) => {
      const { name, servers, owner, rateLimit, toolPolicy } = c.req.valid("json");
      const scope = servers ? await resolveScope(deps.store, servers) : null;
      const toolsets = await assertToolsets(deps.store, c.req.valid("json").toolsets, "key.unknown_toolset");
      const created = await deps.store.keys.create(name, scope ? [...scope.keys()].sort() : null, {
        owner,
        rateLimit: rateLimit ?? null,
        toolsets,
        toolPolicy,
      });
      deps.keyChanges?.added(created.key, created);
      noteChange(c, {
        resource: { type: "key", id: created.id, name: created.name },
        fields: changedFields(undefined, c.req.valid("json")),
      });
      c.get("logger").info("api key created", {
        keyId: created.id,
        scoped: created.serverIds !== null,
        owned: created.owner !== undefined,
      });
      return c.json({ ...keyView(created, scope ?? new Map()), key: created.key }, 201);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/keys",
      tags: ["keys"],
      summary: "Client API keys (never the key material); scopes show the servers' current names",
      responses: { 200: json(ApiKeyList, "Keys") },
    }),
    async (c) => {
      const [keys, servers] = await Promise.all([deps.store.keys.list(), deps.store.servers.listPlain()]);
      const names = new Map(servers.map((server) => [server.id, server.name]));
      return c.json({ keys: keys.map((key) => keyView(key, names)) }, 200);
    },
  );

  app.openapi(
    route({
      method: "delete",
      path: "/v1/keys/{id}",
      tags: ["keys"],
      summary: "Revoke a key (takes effect within 2 s everywhere)",
      request: { params: z.object({ id: z.string().min(1).max(64) }) },
      responses: { 204: { description: "Revoked" }, ...problems(404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!(await deps.store.keys.revoke(id)))
        throw new AppError("request.not_found", `No API key with id '${id}'.`);
      deps.keyChanges?.revoked(id);
      const upstreamCredentials = await forgetSubject(
        deps.store,
        credentialSubject({ kind: "key", keyId: id, serverIds: null }),
      );
      c.get("logger").info("api key revoked", { keyId: id, upstreamCredentials });
      return c.body(null, 204);
    },
  );
}

/**
 * The servers named by `entries` (names or ids) as id → current name, read without opening secrets.
 * Any entry naming no server → 400 `code` (`key.unknown_server` by default), listing them all.
 */
export async function resolveScope(
  store: Store,
  entries: string[],
  code: "key.unknown_server" | "access.unknown_server" = "key.unknown_server",
): Promise<Map<string, string>> {
  const unique = [...new Set(entries)];
  const found = await Promise.all(unique.map((entry) => store.servers.resolvePlain(entry)));
  const unknown = unique.filter((_, index) => !found[index]);
  if (unknown.length > 0) {
    throw new AppError(
      code,
      `No server with id or name ${unknown.map((entry) => `'${entry}'`).join(", ")}.`,
      { unknown },
    );
  }
  return new Map(found.flatMap((server) => (server ? [[server.id, server.name] as const] : [])));
}

/** A key as shown: its scope's ids as stored, and the current names of those servers that still exist. */
function keyView(key: ApiKeyInfo, names: ReadonlyMap<string, string>) {
  const servers = key.serverIds?.flatMap((id) => names.get(id) ?? []).sort() ?? null;
  return {
    id: key.id,
    name: key.name,
    servers,
    serverIds: key.serverIds,
    rateLimit: key.rateLimit,
    owner: key.owner ?? null,
    toolsets: key.toolsets ?? [],
    toolPolicy: key.toolPolicy ?? null,
    createdAt: key.createdAt,
  };
}
