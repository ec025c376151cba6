import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "@mcpgw/aws";
import {
  AppError,
  describeIssues,
  fieldsRefused,
  IF_MATCH_MESSAGE,
  IF_MATCH_PATTERN,
  McpJsonDocument,
  NAME_SAYS,
  parseMcpJson,
  recordOf,
  SECRET_KEY,
  SecretName,
  ServerPatch,
  ServerSpec,
} from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { etag, json, jsonBody, problems, route } from "../openapi-helpers";
import {
  ImportPreview,
  ImportResult,
  LatencyHistoryView,
  SecretSummaryView,
  ServerList,
  ServerView,
  ToolList,
} from "../views";
import { noteChange, noteNoChange } from "./change-audit";
import { registerChangeRoutes } from "./changes";
import { IdParam } from "./params";
import {
  type AdminDeps,
  createServer,
  deleteServer,
  getLatencyHistory,
  getServer,
  importServers,
  listServers,
  listServerTools,
  previewImport,
  reconnectServer,
  updateServer,
} from "./service";
import { authorizeServer } from "./upstream-auth";

const SecretParam = z.object({ name: SecretName });
const SecretValues = z.strictObject({
  values: recordOf(z.string().regex(SECRET_KEY, NAME_SAYS.secretKey), SECRET_KEY, z.string().max(65_536)),
});
/** The import body (core's schemas are plain zod: named through zod's own metadata). */
const ImportDocument = McpJsonDocument.meta({ id: "McpJson" });
const ImportQuery = z.object({
  onConflict: z
    .enum(["fail", "skip", "replace"])
    .default("fail")
    .openapi({
      description: "When a name is taken: `fail` (409, the default), `skip` it, or `replace` its config",
      param: { name: "onConflict", in: "query" },
    }),
  dryRun: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description: "`true`: validate and answer what would happen (200), writing nothing",
      param: { name: "dryRun", in: "query" },
    }),
});
const IfMatch = z.object({
  "if-match": z
    .string()
    .regex(IF_MATCH_PATTERN, IF_MATCH_MESSAGE)
    .optional()
    .openapi({
      description:
        'Apply the edit only at this version: the ETag (`"3"`), a list (`"3", "4"`) or `*` (any); else 412. Empty or malformed → 400',
      param: { name: "if-match", in: "header" },
    }),
});
const RevealQuery = z.object({
  reveal: z
    .enum(["env"])
    .optional()
    .openapi({
      description: "`env`: show a stdio server's env values in the clear (logged); headers stay masked",
      param: { name: "reveal", in: "query" },
    }),
});
const ListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIST_LIMIT)
    .default(DEFAULT_LIST_LIMIT)
    .openapi({
      description: `Servers per page, 1–${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}); a page may hold fewer`,
      param: { name: "limit", in: "query" },
    }),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,512}$/)
    .optional()
    .openapi({
      description: "The `nextCursor` of the previous page (opaque); any other value → 400 `request.invalid`",
      param: { name: "cursor", in: "query" },
    }),
});

const AuthorizationStart = z
  .object({
    authorizationUrl: z.string().openapi({ description: "Open this in a browser and approve" }),
    expiresAt: z.string().openapi({ description: "When the URL stops working (10 minutes)" }),
  })
  .openapi("AuthorizationStart");

/** Registers the admin routes (servers, import, secrets) on `app`. */
export function registerAdminRoutes(app: OpenAPIHono<AppEnv>, appDeps: AdminDeps): void {
  /** The deps of one request: its logger carries the request id (contract: every log line has one). */
  const scoped = (c: Context<AppEnv>): AdminDeps => ({
    ...appDeps,
    logger: c.get("logger") ?? appDeps.logger,
    noteChange: (note) => noteChange(c, note),
  });
  registerChangeRoutes(app, scoped);
  app.openapi(
    route({
      method: "get",
      path: "/v1/servers",
      tags: ["servers"],
      summary: "List servers with their status, sorted by name, a page at a time (`nextCursor` → next page)",
      request: { query: ListQuery },
      responses: { 200: json(ServerList, "A page of servers") },
    }),
    async (c) => c.json(await listServers(scoped(c), c.req.valid("query")), 200),
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/servers",
      tags: ["servers"],
      summary: "Register a server; its first connection attempt is queued",
      request: jsonBody(ServerSpec),
      responses: { 201: json(ServerView, "Created"), ...problems(409) },
    }),
    async (c) => c.json(await createServer(scoped(c), c.req.valid("json")), 201),
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/servers/import",
      tags: ["servers"],
      summary: "Import a Claude / Cursor / VS Code MCP config (.mcp.json), all or nothing",
      description:
        "`?dryRun=true` checks the document exactly as an import would (same problems) and answers 200 with the names it would create, replace and skip, writing nothing.",
      request: { query: ImportQuery, ...jsonBody(ImportDocument) },
      responses: {
        200: json(ImportPreview, "Dry run (`dryRun=true`): what the import would do; nothing written"),
        201: json(ImportResult, "Imported"),
        ...problems(409),
      },
    }),
    async (c) => {
      const { onConflict, dryRun } = c.req.valid("query");
      const document = c.req.valid("json");
      if (dryRun === "true") {
        noteNoChange(c);
        return c.json(await previewImport(scoped(c), document, onConflict), 200);
      }
      return c.json(await importServers(scoped(c), document, onConflict), 201);
    },
    (result) => {
      if (result.success) return undefined;
      if (result.target === "json") return refuseDocument(result);
      throw fieldsRefused("request.invalid", describeIssues(result.error.issues));
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      summary: "One server with its status (`?reveal=env` shows a stdio server's env values)",
      request: { params: IdParam, query: RevealQuery },
      responses: { 200: json(ServerView, "Server", etag), ...problems(404, 409) },
    }),
    async (c) => {
      const deps = scoped(c);
      const server = await getServer(deps, c.req.valid("param").id, c.req.valid("query").reveal);
      c.header("ETag", `"${server.version}"`);
      return c.json(server, 200);
    },
  );

  app.openapi(
    route({
      method: "patch",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      summary:
        "Edit a server (headers and env follow the mask rule); an edit reaching the upstream reconnects (the old connection serves until the new one is connected) or settles disabled",
      request: {
        params: IdParam,
        headers: IfMatch,
        // No body is an empty edit: it bumps the version and, reaching nothing upstream, keeps the connection.
        ...jsonBody(ServerPatch, { optional: true }),
      },
      responses: { 200: json(ServerView, "Updated", etag), ...problems(404, 409, 412) },
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
    route({
      method: "delete",
      path: "/v1/servers/{id}",
      tags: ["servers"],
      summary: "Delete a server and everything it owns",
      request: { params: IdParam },
      responses: { 204: { description: "Deleted" }, ...problems(404) },
    }),
    async (c) => {
      const deps = scoped(c);
      await deleteServer(deps, c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/servers/{id}/reconnect",
      tags: ["servers"],
      summary: "Start a fresh connection attempt",
      request: { params: IdParam },
      responses: { 202: json(ServerView, "Reconnecting"), ...problems(404, 409) },
    }),
    async (c) => c.json(await reconnectServer(scoped(c), c.req.valid("param").id), 202),
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/servers/{id}/authorize",
      tags: ["servers"],
      summary: "Authorize the gateway at an upstream that needs OAuth",
      description:
        "Discovers the upstream's authorization server from its 401, registers the gateway (CIMD, else dynamic registration, else `auth.clientId`) and answers the authorization URL (code + PKCE) for an admin to open. The authorization server redirects to the admin function's `/oauth/upstream/callback`, which keeps the tokens sealed and reconnects the server. In `shared` mode this is the connection every caller uses; in `per_user` mode it is the admin's own (each user authorizes theirs when a call first needs it), which the gateway's checks use to catalogue the tools. A pre-registered confidential client (`auth.clientSecret`) authenticates at the token endpoint with its secret. A `client_credentials` server has no authorize step: 409 `server.no_authorize_step`.",
      request: { params: IdParam },
      responses: {
        200: json(AuthorizationStart, "The URL to open"),
        ...problems(400, 404, 409, 502),
      },
    }),
    async (c) => c.json(await authorizeServer(scoped(c), c.req.valid("param").id, c.get("principal")), 200),
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/servers/{id}/tools",
      tags: ["servers"],
      summary: "The tools of a connected server (empty otherwise)",
      request: { params: IdParam },
      responses: { 200: json(ToolList, "Tools"), ...problems(404, 409) },
    }),
    async (c) => c.json({ tools: await listServerTools(scoped(c), c.req.valid("param").id) }, 200),
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/servers/{id}/latency",
      tags: ["servers"],
      summary:
        "Recent latencies: the worker's probes (2 h) and the gateway's calls per 10 s (20 min), oldest first",
      request: { params: IdParam },
      responses: { 200: json(LatencyHistoryView, "Latency history"), ...problems(404, 409) },
    }),
    async (c) => c.json(await getLatencyHistory(scoped(c), c.req.valid("param").id), 200),
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/secrets",
      tags: ["secrets"],
      summary: "Secret names and their key names (never values)",
      responses: {
        200: json(z.object({ secrets: z.array(SecretSummaryView) }), "Secrets"),
      },
    }),
    async (c) => c.json({ secrets: await appDeps.store.secrets.list() }, 200),
  );

  app.openapi(
    route({
      method: "put",
      path: "/v1/secrets/{name}",
      tags: ["secrets"],
      summary: "Create or replace a secret (a flat key/value map, sealed)",
      request: {
        params: SecretParam,
        ...jsonBody(SecretValues),
      },
      responses: { 200: json(SecretSummaryView, "Stored") },
    }),
    async (c) => {
      const deps = scoped(c);
      const { name } = c.req.valid("param");
      const { values } = c.req.valid("json");
      // The entries set (all those sent: values are never compared) and those the replacement drops.
      const before = (await deps.store.secrets.list()).find((secret) => secret.name === name)?.keys ?? [];
      const summary = await deps.store.secrets.put(name, values);
      const entries = new Set([...Object.keys(values), ...before]);
      noteChange(c, {
        resource: { type: "secret", id: name, name },
        fields: [...entries].sort().map((key) => `values.${key}`),
      });
      deps.logger.info("secret stored", { secret: summary.name, keys: summary.keys.length });
      return c.json(summary, 200);
    },
  );

  app.openapi(
    route({
      method: "delete",
      path: "/v1/secrets/{name}",
      tags: ["secrets"],
      summary: "Delete a secret",
      request: { params: SecretParam },
      responses: { 204: { description: "Deleted" }, ...problems(404) },
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

/**
 * A document the import schema refuses gets the `import.*` error that names its problem, as
 * `parseMcpJson` words it; one it would take is `import.invalid_document` with the schema's issues.
 * (The validator hands its hook the value it read as `data`: `{}` when there is no JSON body.)
 */
function refuseDocument(result: { error: { issues: Parameters<typeof describeIssues>[0] } }): never {
  parseMcpJson((result as { data?: unknown }).data ?? {});
  throw fieldsRefused("import.invalid_document", describeIssues(result.error.issues));
}
