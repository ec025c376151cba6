import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { AppError, describeIssues, SecretName, ServerPatch, ServerSpec } from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, security } from "../openapi-helpers";
import { ImportResult, SecretSummaryView, ServerList, ServerView, ToolList } from "../views";
import {
  type AdminDeps,
  createServer,
  deleteServer,
  getServer,
  importServers,
  listServers,
  listServerTools,
  reconnectServer,
  updateServer,
} from "./service";

const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .openapi({ description: "Server id or name", param: { name: "id", in: "path" } }),
});
const SecretParam = z.object({ name: SecretName });
const RevealQuery = z.object({
  reveal: z
    .enum(["env"])
    .optional()
    .openapi({
      description: "`env`: show a stdio server's env values in the clear (logged); headers stay masked",
      param: { name: "reveal", in: "query" },
    }),
});
/** Registers the admin routes (servers, import, secrets) on `app`. */
export function registerAdminRoutes(app: OpenAPIHono<AppEnv>, appDeps: AdminDeps): void {
  /** The deps of one request: its logger carries the request id (contract: every log line has one). */
  const scoped = (c: Context<AppEnv>): AdminDeps => ({
    ...appDeps,
    logger: c.get("logger") ?? appDeps.logger,
  });
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/servers",
      tags: ["servers"],
      security,
      summary: "List servers with their status, sorted by name",
      responses: { 200: json(ServerList, "Servers"), ...problems(401) },
    }),
    async (c) => c.json({ servers: await listServers(scoped(c)) }, 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/servers",
      tags: ["servers"],
      security,
      summary: "Register a server; its first connection attempt is queued",
      request: jsonBody(ServerSpec),
      responses: { 201: json(ServerView, "Created"), ...problems(400, 401, 409, 413) },
    }),
    async (c) => c.json(await createServer(scoped(c), c.req.valid("json")), 201),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/servers/import",
      tags: ["servers"],
      security,
      summary: "Import a Claude / Cursor / VS Code MCP config (.mcp.json), all or nothing",
      request: {
        query: z.object({ onConflict: z.enum(["fail", "skip", "replace"]).default("fail") }),
        ...jsonBody(z.record(z.string(), z.unknown()).openapi("McpJson")),
      },
      responses: { 201: json(ImportResult, "Imported"), ...problems(400, 401, 409, 413) },
    }),
    async (c) =>
      c.json(await importServers(scoped(c), c.req.valid("json"), c.req.valid("query").onConflict), 201),
    // A body that is not a JSON object is a broken document: an `import.*` error like the others.
    (result) => {
      if (result.success) return undefined;
      if (result.target === "json") {
        throw new AppError(
          "import.invalid_document",
          "Expected a JSON object with `mcpServers` (or `servers`).",
        );
      }
      const errors = describeIssues(result.error.issues);
      throw new AppError("request.invalid", errors.join("; "), { errors });
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      security,
      summary: "One server with its status (`?reveal=env` shows a stdio server's env values)",
      request: { params: IdParam, query: RevealQuery },
      responses: { 200: json(ServerView, "Server"), ...problems(400, 401, 404) },
    }),
    async (c) => {
      const deps = scoped(c);
      const server = await getServer(deps, c.req.valid("param").id, c.req.valid("query").reveal);
      c.header("ETag", `"${server.version}"`);
      return c.json(server, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      security,
      summary: "Edit a server (headers and env follow the mask rule); reconnects or settles disabled",
      request: {
        params: IdParam,
        headers: z.object({ "if-match": z.string().optional() }),
        ...jsonBody(ServerPatch),
      },
      responses: { 200: json(ServerView, "Updated"), ...problems(400, 401, 404, 409, 412, 413) },
    }),
    async (c) => {
      const deps = scoped(c);
      const server = await updateServer(
        deps,
        c.req.valid("param").id,
        c.req.valid("json"),
        c.req.header("if-match"),
      );
      c.header("ETag", `"${server.version}"`);
      return c.json(server, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      security,
      summary: "Delete a server and everything it owns",
      request: { params: IdParam },
      responses: { 204: { description: "Deleted" }, ...problems(401, 404) },
    }),
    async (c) => {
      const deps = scoped(c);
      await deleteServer(deps, c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/servers/{id}/reconnect",
      tags: ["servers"],
      security,
      summary: "Start a fresh connection attempt",
      request: { params: IdParam },
      responses: { 202: json(ServerView, "Reconnecting"), ...problems(401, 404, 409) },
    }),
    async (c) => c.json(await reconnectServer(scoped(c), c.req.valid("param").id), 202),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/servers/{id}/tools",
      tags: ["servers"],
      security,
      summary: "The tools of a connected server (empty otherwise)",
      request: { params: IdParam },
      responses: { 200: json(ToolList, "Tools"), ...problems(401, 404) },
    }),
    async (c) => c.json({ tools: await listServerTools(scoped(c), c.req.valid("param").id) }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/secrets",
      tags: ["secrets"],
      security,
      summary: "Secret names and their key names (never values)",
      responses: {
        200: json(z.object({ secrets: z.array(SecretSummaryView) }), "Secrets"),
        ...problems(401),
      },
    }),
    async (c) => c.json({ secrets: await appDeps.store.secrets.list() }, 200),
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/secrets/{name}",
      tags: ["secrets"],
      security,
      summary: "Create or replace a secret (a flat key/value map, sealed)",
      request: {
        params: SecretParam,
        ...jsonBody(
          z.strictObject({
            values: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/), z.string().max(65_536)),
          }),
        ),
      },
      responses: { 200: json(SecretSummaryView, "Stored"), ...problems(400, 401, 413) },
    }),
    async (c) => {
      const deps = scoped(c);
      const summary = await deps.store.secrets.put(c.req.valid("param").name, c.req.valid("json").values);
      deps.logger.info("secret stored", { secret: summary.name, keys: summary.keys.length });
      return c.json(summary, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/secrets/{name}",
      tags: ["secrets"],
      security,
      summary: "Delete a secret",
      request: { params: SecretParam },
      responses: { 204: { description: "Deleted" }, ...problems(401, 404) },
    }),
    async (c) => {
      const deps = scoped(c);
      const { name } = c.req.valid("param");
      if (!(await deps.store.secrets.remove(name)))
        throw new AppError("secret.not_found", `No secret named '${name}'.`);
      return c.body(null, 204);
    },
  );
}
