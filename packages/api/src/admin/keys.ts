import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Store } from "@mcpgw/aws";
import { AppError, ServerName } from "@mcpgw/core";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, security } from "../openapi-helpers";

const KeyInfo = z
  .object({
    id: z.string(),
    name: z.string(),
    servers: z
      .array(z.string())
      .nullable()
      .openapi({ description: "Server names the key may use; null = every enabled server" }),
    createdAt: z.string(),
  })
  .openapi("ApiKey");

const NewKey = KeyInfo.extend({
  key: z.string().openapi({ description: "Shown once; only its hash is stored" }),
}).openapi("NewApiKey");

const CreateKey = z.strictObject({
  name: z.string().trim().min(1).max(128),
  servers: z.array(ServerName).max(500).optional(),
});

/** Registers the client API key routes (admin only). */
export function registerKeyRoutes(app: OpenAPIHono<AppEnv>, deps: { store: Store }): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/keys",
      tags: ["keys"],
      security,
      summary: "Create a client API key for the data plane and MCP endpoints, optionally scoped to servers",
      request: jsonBody(CreateKey),
      responses: { 201: json(NewKey, "Created (the key is shown only now)"), ...problems(400, 401, 403) },
    }),
    async (c) => {
      const { name, servers } = c.req.valid("json");
      const created = await deps.store.keys.create(name, servers ? [...new Set(servers)].sort() : null);
      c.get("logger").info("api key created", { keyId: created.id, scoped: created.servers !== null });
      return c.json(created, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/keys",
      tags: ["keys"],
      security,
      summary: "Client API keys (never the key material)",
      responses: { 200: json(z.object({ keys: z.array(KeyInfo) }), "Keys"), ...problems(401, 403) },
    }),
    async (c) => c.json({ keys: await deps.store.keys.list() }, 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/keys/{id}",
      tags: ["keys"],
      security,
      summary: "Revoke a key (takes effect within 2 s everywhere)",
      request: { params: z.object({ id: z.string().min(1).max(64) }) },
      responses: { 204: { description: "Revoked" }, ...problems(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!(await deps.store.keys.revoke(id)))
        throw new AppError("request.not_found", `No API key with id '${id}'.`);
      c.get("logger").info("api key revoked", { keyId: id });
      return c.body(null, 204);
    },
  );
}
