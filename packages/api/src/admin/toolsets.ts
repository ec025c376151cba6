/**
 * Tool sets (admin only): named selections of tools across servers — tools by `<server>__<tool>`,
 * rules (a server, annotation hints, a name glob), per-tool overrides — served at `/mcp/sets/{name}`
 * and usable as a key's or an access mapping's scope. Stored by server id (a rename keeps a set),
 * shown by the servers' current names.
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Catalog, Store, StoredToolRule, StoredToolset, ToolOverride } from "@mcpgw/aws";
import {
  AppError,
  changedFields,
  type FieldProblem,
  fieldsRefused,
  type Logger,
  MAX_QUALIFIED_LENGTH,
  NAME_SAYS,
  type PlainServer,
  parseQualifiedName,
  QUALIFIED_NAME_PATTERN,
  qualifyToolName,
  SERVER_NAME_RULE,
  TOOL_ALIAS,
  TOOL_SEPARATOR,
} from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { resolveSet, type ToolCatalogue, toolsetIndex } from "../toolsets";
import { noteChange } from "./change-audit";

/** The annotation hints a rule, policy or override may give. */
export const HintsInput = z
  .strictObject({
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .openapi("ToolHints");

/** Tool set names, as server names: 1-32 letters, digits, '_' or '-', alphanumeric at both ends, no `__`. */
const SetName = z.string().regex(SERVER_NAME_RULE, NAME_SAYS.toolset);

/** A qualified name or a glob over qualified names (`*`, `?`). */
export const ToolPattern = z.string().min(1).max(128).openapi({ example: "github__get_*" });

/** A key's or access mapping's tool policy. */
export const ToolPolicyInput = z
  .strictObject({
    allow: z.array(ToolPattern).max(100).optional().openapi({
      description: "Qualified names or globs the caller may use; absent = every tool in scope",
    }),
    refuse: HintsInput.optional().openapi({
      description: "Tools whose hint (spec defaults applied) equals the value given are refused",
      example: { destructiveHint: true },
    }),
    except: z
      .array(ToolPattern)
      .max(100)
      .optional()
      .openapi({ description: "Names or globs exempt from `refuse`" }),
  })
  .openapi("ToolPolicy");

/** Tool set names in a key's or mapping's scope. */
export const ToolsetNames = z.array(SetName).max(100).openapi({
  description: "Tool sets the caller may use besides its servers (the union of both)",
});

/** The named sets, each known (else `code`, naming the unknown ones). */
export async function assertToolsets(
  store: Store,
  names: string[] | undefined,
  code: "key.unknown_toolset" | "access.unknown_toolset",
): Promise<string[] | undefined> {
  if (!names?.length) return undefined;
  const unique = [...new Set(names)].sort();
  const found = await Promise.all(unique.map((name) => store.toolsets.get(name)));
  const unknown = unique.filter((_, at) => !found[at]);
  if (unknown.length > 0)
    throw new AppError(code, `No tool set named ${unknown.map((name) => `'${name}'`).join(", ")}.`, {
      unknown,
    });
  return unique;
}

const QualifiedTool = z
  .string()
  .max(MAX_QUALIFIED_LENGTH)
  .regex(QUALIFIED_NAME_PATTERN, "must be <server>__<tool>")
  .openapi({ example: "github__search_issues" });

/** A rule with none of its fields matches nothing. */
const Rule = z
  .strictObject({
    server: SetName.optional().openapi({ description: "A server's name: its tools" }),
    annotations: HintsInput.optional().openapi({
      description: "Each hint given must equal the tool's (spec defaults applied)",
    }),
    glob: ToolPattern.optional().openapi({ description: "`*`/`?` over the qualified name" }),
  })
  .openapi("ToolRule");

const Override = z
  .strictObject({
    name: z.string().regex(TOOL_ALIAS, NAME_SAYS.toolAlias).optional(),
    description: z.string().max(4_096).optional(),
    annotations: HintsInput.extend({ title: z.string().max(256).optional() }).optional(),
  })
  .openapi("ToolOverride");

const ToolsetBody = z.strictObject({
  description: z.string().max(1_024).optional(),
  tools: z.array(QualifiedTool).max(500).optional().openapi({ description: "Tools by `<server>__<tool>`" }),
  rules: z.array(Rule).max(50).optional().openapi({ description: "A tool matching any rule is in the set" }),
  overrides: z
    .record(QualifiedTool, Override)
    .refine((overrides) => Object.keys(overrides).length <= 500, "at most 500 overrides")
    .optional()
    .openapi({
      description: "What the set's endpoint shows in place of a tool's name, description, annotations",
    })
    // Its keys' rule, for the document (the record's key schema is not rendered there).
    .meta({
      propertyNames: {
        type: "string",
        maxLength: MAX_QUALIFIED_LENGTH,
        pattern: QUALIFIED_NAME_PATTERN.source,
      },
    }),
});
const NewToolset = ToolsetBody.extend({
  name: SetName.openapi({ description: "As server names: 1-32 letters, digits, '_' or '-'" }),
}).openapi("NewToolset");

const ToolsetView = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    tools: z.array(z.string()),
    rules: z.array(z.record(z.string(), z.unknown())),
    overrides: z.record(z.string(), z.record(z.string(), z.unknown())),
    createdAt: z.string(),
    updatedAt: z.string(),
    resolved: z.array(z.string()).optional().openapi({
      description: "The tools in the set now (qualified names), resolved against the live catalogue",
    }),
  })
  .openapi("Toolset");

const NameParam = z.object({ name: SetName.openapi({ param: { name: "name", in: "path" } }) });

/** Registers `POST/GET/PUT/DELETE /v1/toolsets[/{name}]` (admin only). */
export function registerToolsetRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: { store: Store; logger: Logger },
): void {
  const { store } = deps;
  const index = toolsetIndex(store);
  const idsToNames = async () =>
    new Map((await store.servers.listPlain()).map((s) => [s.id, s.name] as const));
  /** Creates or replaces a set; this process's data plane sees it at once. */
  const save = async (c: Context<AppEnv>, name: string, body: Body, done: "created" | "replaced") => {
    const now = new Date().toISOString();
    const set = { ...(await stored(store, body)), name, createdAt: now, updatedAt: now };
    const before = done === "replaced" ? await store.toolsets.get(name) : undefined;
    const saved = await (done === "created" ? store.toolsets.create(set) : store.toolsets.replace(set));
    index.changed();
    noteChange(c, {
      resource: { type: "toolset", id: name, name },
      fields: changedFields(definitionOf(before), definitionOf(saved)),
    });
    const logger = c.get("logger");
    logger.info(`tool set ${done}`, { toolset: name });
    return view(saved, await idsToNames());
  };

  app.openapi(
    route({
      method: "post",
      path: "/v1/toolsets",
      tags: ["toolsets"],
      summary: "Create a tool set (served at /mcp/sets/{name}; usable as a key's or mapping's scope)",
      request: jsonBody(NewToolset),
      responses: { 201: json(ToolsetView, "Created"), ...problems(400, 409) },
    }),
    async (c) => {
      const { name, ...body } = c.req.valid("json");
      return c.json(await save(c, name, body, "created"), 201);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/toolsets",
      tags: ["toolsets"],
      summary: "Every tool set",
      responses: { 200: json(z.object({ toolsets: z.array(ToolsetView) }), "Tool sets") },
    }),
    async (c) => {
      const [sets, names] = await Promise.all([store.toolsets.list(), idsToNames()]);
      return c.json({ toolsets: sets.map((set) => view(set, names)) }, 200);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/toolsets/{name}",
      tags: ["toolsets"],
      summary: "A tool set, with the tools it holds now (`resolved`)",
      request: { params: NameParam },
      responses: { 200: json(ToolsetView, "The set"), ...problems(400, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const set = await store.toolsets.get(name);
      if (!set) throw new AppError("toolset.not_found", `No tool set named '${name}'.`);
      const [servers, catalogs] = await Promise.all([
        store.servers.listPlain(),
        store.statuses.listCatalogs(),
      ]);
      const resolved = [...resolveSet(set, catalogue(servers, catalogs)).members.keys()].sort();
      return c.json({ ...view(set, new Map(servers.map((s) => [s.id, s.name]))), resolved }, 200);
    },
  );

  app.openapi(
    route({
      method: "put",
      path: "/v1/toolsets/{name}",
      tags: ["toolsets"],
      summary: "Replace a tool set",
      request: { params: NameParam, ...jsonBody(ToolsetBody) },
      responses: { 200: json(ToolsetView, "The set as stored"), ...problems(400, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      // A replace names the whole set: a request with no body at all is not an empty set.
      if (!c.req.header("content-type"))
        throw new AppError(
          "request.invalid",
          "PUT needs a JSON body: the whole set (`{}` for an empty one).",
        );
      return c.json(await save(c, name, c.req.valid("json"), "replaced"), 200);
    },
  );

  app.openapi(
    route({
      method: "delete",
      path: "/v1/toolsets/{name}",
      tags: ["toolsets"],
      summary: "Delete a tool set no key or access mapping uses (else 409 toolset.in_use)",
      request: { params: NameParam },
      responses: { 204: { description: "Deleted" }, ...problems(400, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const [keys, mappings] = await Promise.all([store.keys.list(), store.oauth.listAccess()]);
      const users = [
        ...keys.filter((key) => key.toolsets?.includes(name)).map((key) => `key:${key.id}`),
        ...mappings.filter((mapping) => mapping.toolsets?.includes(name)).map((mapping) => mapping.subject),
      ];
      if (users.length > 0) {
        throw new AppError(
          "toolset.in_use",
          `Tool set '${name}' is in use by ${users.length} key(s) or mapping(s).`,
          {
            usedBy: users.slice(0, 50),
          },
        );
      }
      if (!(await store.toolsets.delete(name)))
        throw new AppError("toolset.not_found", `No tool set named '${name}'.`);
      index.changed();
      c.get("logger").info("tool set deleted", { toolset: name });
      return c.body(null, 204);
    },
  );
}

type Body = z.infer<typeof ToolsetBody>;

/** What a set defines, as stored (its times apart). */
function definitionOf(set: StoredToolset | undefined): Record<string, unknown> | undefined {
  if (!set) return undefined;
  const { createdAt: _c, updatedAt: _u, ...definition } = set;
  return definition;
}

/** Every server's last catalogue by qualified name, as the data plane's directory holds it. */
function catalogue(servers: PlainServer[], catalogs: Catalog[]): ToolCatalogue {
  const tools = new Map(catalogs.map((catalog) => [catalog.serverId, catalog.tools]));
  return {
    byId: new Map(
      servers.map((server) => [
        server.id,
        {
          server,
          tools: new Map(
            (tools.get(server.id) ?? []).map((tool) => [qualifyToolName(server.name, tool.name), tool]),
          ),
        },
      ]),
    ),
  };
}

/**
 * The set as stored: servers by id (unknown server names → 400 `toolset.unknown_server`, listing them),
 * the overridden names unique in the set (else 400 `toolset.invalid`).
 */
async function stored(
  store: Store,
  body: Body,
): Promise<Omit<StoredToolset, "name" | "createdAt" | "updatedAt">> {
  const tools = [...new Set(body.tools ?? [])];
  const overrides = body.overrides ?? {};
  const rules = body.rules ?? [];
  const servers = [
    ...new Set([
      ...[...tools, ...Object.keys(overrides)].map((tool) => parseQualifiedName(tool).server),
      ...rules.flatMap((rule) => (rule.server ? [rule.server] : [])),
    ]),
  ];
  const found = await Promise.all(servers.map((server) => store.servers.resolvePlain(server)));
  const unknown = servers.filter((server, at) => found[at]?.name !== server);
  if (unknown.length > 0) {
    throw new AppError(
      "toolset.unknown_server",
      `No server named ${unknown.map((s) => `'${s}'`).join(", ")}.`,
      {
        unknown,
      },
    );
  }
  const ids = new Map(servers.map((server, at) => [server, found[at]?.id ?? ""]));
  const byId = (qualified: string) => {
    const { server, tool } = parseQualifiedName(qualified);
    return `${ids.get(server)}${TOOL_SEPARATOR}${tool}`;
  };
  assertUniqueNames(tools, overrides);
  return {
    ...(body.description !== undefined ? { description: body.description } : {}),
    tools: tools.map(byId),
    rules: rules.map(
      ({ server, ...rule }): StoredToolRule => ({
        ...rule,
        ...(server ? { serverId: ids.get(server) } : {}),
      }),
    ),
    overrides: Object.fromEntries(
      Object.entries(overrides).map(([tool, override]) => [byId(tool), override as ToolOverride]),
    ),
  };
}

/** Each tool the set lists keeps a name of its own: an overridden name may not be another's. */
function assertUniqueNames(tools: string[], overrides: Record<string, { name?: string | undefined }>): void {
  const listed = new Map<string, string>();
  const clash: FieldProblem[] = [];
  for (const tool of new Set([...tools, ...Object.keys(overrides)])) {
    const name = overrides[tool]?.name ?? tool;
    const other = listed.get(name);
    if (other !== undefined)
      clash.push({
        field: "tools",
        message: `'${tool}' and '${other}' would both be listed as '${name}': give one another name.`,
      });
    listed.set(name, tool);
  }
  if (clash.length > 0) throw fieldsRefused("toolset.invalid", clash);
}

/** A stored set as shown: servers by their current names (tools of deleted servers left out). */
function view(set: StoredToolset, names: ReadonlyMap<string, string>) {
  const byName = (stored: string) => {
    const at = stored.indexOf(TOOL_SEPARATOR);
    const server = names.get(stored.slice(0, at));
    return server === undefined ? [] : [`${server}${stored.slice(at)}`];
  };
  return {
    name: set.name,
    ...(set.description !== undefined ? { description: set.description } : {}),
    tools: set.tools.flatMap(byName).sort(),
    rules: set.rules.flatMap(({ serverId, ...rule }) => {
      if (serverId === undefined) return [rule];
      const server = names.get(serverId);
      // A deleted server's rule matches nothing: shown by the id it names.
      return [server === undefined ? { serverId, ...rule } : { server, ...rule }];
    }),
    overrides: Object.fromEntries(
      Object.entries(set.overrides).flatMap(([stored, override]) =>
        byName(stored).map((tool) => [tool, override]),
      ),
    ),
    createdAt: set.createdAt,
    updatedAt: set.updatedAt,
  };
}
