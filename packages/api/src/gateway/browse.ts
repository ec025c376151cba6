/**
 * One server's resources and prompts for REST callers — the console's server page browses them:
 * `GET /v1/resources?server=<name>` (its resources and resource templates) and `GET
 * /v1/prompts?server=<name>` (its prompts), read live from its warm session as `/mcp/{server}` reads
 * them, page after page up to a bound. The caller's scope decides, as for tools: a server out of it is
 * one that does not exist. What the upstream lists is passed on as it listed it (its word, bounded).
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { AppError } from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { json, problems, route } from "../openapi-helpers";
import { forwardToServer } from "./call";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";
import { availableEntry } from "./mcp-forwarding";
import { scopeOf } from "./routes";
import { isThreadScoped } from "./thread-access";

/** Pages read from the upstream for one list, and the most items passed on. */
const MAX_PAGES = 20;
const MAX_ITEMS = 1_000;

const Items = z.array(z.record(z.string(), z.unknown())).openapi({
  description: "as the server lists them (at most 1,000; `truncated` says when there were more)",
});
const ResourceList = z
  .object({
    server: z.string(),
    resources: Items,
    resourceTemplates: Items,
    truncated: z.boolean(),
  })
  .openapi("ServerResourceList");
const PromptList = z
  .object({ server: z.string(), prompts: Items, truncated: z.boolean() })
  .openapi("ServerPromptList");
const ServerQuery = z.object({ server: z.string().min(1).max(64) });

/** Registers the two browse routes on the data plane's client group. */
export function registerBrowseRoutes(app: OpenAPIHono<AppEnv>, deps: GatewayDeps): void {
  app.openapi(
    route({
      method: "get",
      path: "/v1/resources",
      tags: ["tools"],
      summary: "One server's resources and resource templates, read live from it",
      request: { query: ServerQuery },
      responses: { 200: json(ResourceList, "Resources"), ...problems(404, 409, 502, 504) },
    }),
    async (c) => {
      const entry = await browsed(c, deps, c.req.valid("query").server);
      const offers = offered(entry, "resources");
      const [resources, templates] = offers
        ? await Promise.all([
            allItems(c, deps, entry, "resources/list", "resources"),
            allItems(c, deps, entry, "resources/templates/list", "resourceTemplates"),
          ])
        : [NONE, NONE];
      return c.json(
        {
          server: entry.server.name,
          resources: resources.items,
          resourceTemplates: templates.items,
          truncated: resources.truncated || templates.truncated,
        },
        200,
      );
    },
  );
  app.openapi(
    route({
      method: "get",
      path: "/v1/prompts",
      tags: ["tools"],
      summary: "One server's prompts, read live from it",
      request: { query: ServerQuery },
      responses: { 200: json(PromptList, "Prompts"), ...problems(404, 409, 502, 504) },
    }),
    async (c) => {
      const entry = await browsed(c, deps, c.req.valid("query").server);
      const prompts = offered(entry, "prompts")
        ? await allItems(c, deps, entry, "prompts/list", "prompts")
        : NONE;
      return c.json({ server: entry.server.name, prompts: prompts.items, truncated: prompts.truncated }, 200);
    },
  );
}

const NONE = { items: [], truncated: false };

/**
 * The server named, in the caller's scope and connected (else 404, or 409 `server.unavailable`, as
 * `/mcp/{server}` says), and not thread-scoped (400: its lists are a thread's).
 */
async function browsed(c: Context<AppEnv>, deps: GatewayDeps, name: string): Promise<DirectoryEntry> {
  const entry = await availableEntry(deps.directory, name, scopeOf(c.get("principal")));
  if (isThreadScoped(entry))
    throw new AppError(
      "request.invalid",
      `Server '${name}' runs an instance per thread: its resources and prompts are a thread's (see them through its MCP session).`,
    );
  return entry;
}

/** Whether the server's last probe says it offers `capability` (no profile yet: it is asked). */
function offered(entry: DirectoryEntry, capability: "resources" | "prompts"): boolean {
  return !entry.profile || entry.profile.capabilities?.[capability] !== undefined;
}

/** Every item of one list, page after page, within {@link MAX_PAGES} and {@link MAX_ITEMS}. */
async function allItems(
  c: Context<AppEnv>,
  deps: GatewayDeps,
  entry: DirectoryEntry,
  method: string,
  key: string,
): Promise<{ items: Array<Record<string, unknown>>; truncated: boolean }> {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await forwardToServer(deps, entry, method, cursor ? { cursor } : {}, {
      principal: c.get("principal"),
      signal: c.req.raw.signal,
    });
    const listed = Array.isArray(answer[key]) ? (answer[key] as unknown[]) : [];
    for (const item of listed)
      if (item && typeof item === "object") items.push(item as Record<string, unknown>);
    if (items.length > MAX_ITEMS) return { items: items.slice(0, MAX_ITEMS), truncated: true };
    cursor = typeof answer.nextCursor === "string" && answer.nextCursor ? answer.nextCursor : undefined;
    if (!cursor) return { items, truncated: false };
  }
  return { items, truncated: true };
}
