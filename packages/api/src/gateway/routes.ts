import { isIP } from "node:net";
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  AppError,
  assertJsonDepth,
  fieldsRefused,
  MAX_QUALIFIED_LENGTH,
  NAME_SAYS,
  parseQualifiedName,
  QUALIFIED_NAME_PATTERN,
  THREAD_ID,
} from "@mcpgw/core";
import type { InputRequired, ToolCallResult } from "@mcpgw/upstream";
import type { Context } from "hono";
import {
  CONSOLE_CALL_HEADER,
  CONSOLE_SOURCE_HEADER,
  CONSOLE_SUB_HEADER,
  CSRF_HEADER,
} from "../console/session";
import type { AppEnv, Principal } from "../env";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { clientAddress } from "../throttle";
import { CallResultView, CatalogToolList, ChatToggleList, ChatToggleView } from "../views";
import { AuthorizationNeeded, authorizationNeededResult } from "./authorization-needed";
import { callGatewayTool } from "./call";
import { audited, type CallNote, callNote } from "./call-audit";
import { describeCallBodyIssues } from "./call-body";
import { listTools, restTool, type ServerScope } from "./catalogue";
import type { GatewayDeps } from "./deps";
import { toolResultResponse } from "./result-body";
import { toolGate } from "./tool-access";
import { principalAs, ViewAs } from "./view-as";

const ChatId = z.string().min(1).max(256);
/** A tool as `<server>__<tool>`; a name of another form is 400 `tool.invalid_name`. */
const ToolName = z
  .string()
  .max(MAX_QUALIFIED_LENGTH)
  .regex(QUALIFIED_NAME_PATTERN)
  .openapi({ description: "`<server>__<tool>`, at most 64 characters", example: "github__search_issues" });
/** Thread ids: what a client names its conversation/worktree by (see `THREAD_ID`). */
export const ThreadId = z.string().regex(THREAD_ID, NAME_SAYS.thread);

const CallRequest = z
  .strictObject({
    arguments: z.record(z.string(), z.unknown()).default({}),
    chat: ChatId.optional(),
    thread: ThreadId.optional().openapi({
      description:
        "The thread whose instance runs a thread-scoped server's tool: one the caller started (any, for the admin)",
    }),
  })
  .openapi("ToolCallRequest");

/**
 * The server ids a principal may use whole (their resources and prompts too): all for the admin token,
 * a key's or a user's ids otherwise — none beyond its tool sets for a key with sets and no servers.
 */
export function scopeOf(principal: Principal | undefined): ServerScope {
  if (!principal || principal.kind === "admin") return null;
  if (principal.serverIds) return new Set(principal.serverIds);
  return principal.kind === "key" && principal.toolsets?.length ? new Set() : null;
}

/**
 * Where a REST call came from: the console's try-it (the admin in a console session, whose requests
 * carry its CSRF header, or forwarded by the admin function) or the REST API; and the client's address.
 */
export function restCallOrigin(c: Context<AppEnv>): Pick<CallNote, "plane" | "source"> {
  const consoleCall =
    c.get("principal")?.kind === "admin" &&
    (c.req.header(CSRF_HEADER) !== undefined || c.req.header(CONSOLE_CALL_HEADER) === "1");
  return {
    plane: consoleCall ? "console" : "rest",
    source: consoleForwarded(c)?.source ?? clientAddress(c),
  };
}

/** The principal a REST call is audited as: the admin forwarding a console call by its session's subject. */
function auditedCaller(c: Context<AppEnv>): Principal {
  const principal = c.get("principal");
  const sub = consoleForwarded(c)?.sub;
  return sub && principal.kind === "admin" ? { ...principal, sub } : principal;
}

/** The longest provider subject honoured from a forwarded console call. */
const MAX_FORWARDED_SUB = 255;

/**
 * Who the admin function forwarded a console call for — the session's subject and the browser's
 * address — honoured only from the admin token itself (never a key, a user or a console session).
 */
function consoleForwarded(c: Context<AppEnv>): { sub?: string; source?: string } | undefined {
  const principal = c.get("principal");
  if (principal?.kind !== "admin" || principal.via || c.req.header(CONSOLE_CALL_HEADER) !== "1") return;
  const sub = c.req.header(CONSOLE_SUB_HEADER);
  const source = c.req.header(CONSOLE_SOURCE_HEADER);
  return {
    ...(sub && sub.length <= MAX_FORWARDED_SUB ? { sub } : {}),
    ...(source && isIP(source) !== 0 ? { source } : {}),
  };
}

/**
 * A tool call's answer to a REST caller: its result, or `tool.input_required` when the tool asks
 * for input (asking the user or the model needs an MCP client): 409.
 */
export function restResult(answer: ToolCallResult | InputRequired): ToolCallResult {
  if (!("resultType" in answer)) return answer;
  throw new AppError(
    "tool.input_required",
    "The tool needs input from the user or the model before it can answer; call it through the MCP endpoint (/mcp) with a client that can give it.",
    { inputRequests: Object.keys(answer.inputRequests ?? {}) },
  );
}

/** Registers the data-plane routes (aggregated tools, tool calls, chat toggles) on `app`. */
export function registerGatewayRoutes(app: OpenAPIHono<AppEnv>, appDeps: GatewayDeps): void {
  /** The deps of one request: its logger carries the request id. */
  const scoped = (c: Context<AppEnv>): GatewayDeps => ({
    ...appDeps,
    logger: c.get("logger") ?? appDeps.logger,
  });

  app.openapi(
    route({
      method: "get",
      path: "/v1/tools",
      tags: ["tools"],
      summary: "Every tool of every enabled, connected server, as <server>__<tool>, sorted",
      request: { query: z.object({ chat: ChatId.optional(), as: ViewAs.optional() }) },
      responses: { 200: json(CatalogToolList, "Tools"), ...problems(403, 404) },
    }),
    async (c) => {
      const { chat, as } = c.req.valid("query");
      const principal = as ? await principalAs(appDeps.store, c.get("principal"), as) : c.get("principal");
      const tools = await listTools(appDeps, {
        scope: scopeOf(principal),
        gate: await toolGate(appDeps, principal),
        ...(chat ? { chat } : {}),
      });
      return c.json({ tools: tools.map(restTool) }, 200);
    },
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/tools/{name}/call",
      tags: ["tools"],
      summary: "Call a tool; tool-level failures are results with isError: true",
      request: {
        params: z.object({ name: ToolName }),
        // No body calls the tool without arguments.
        ...jsonBody(CallRequest, { optional: true }),
      },
      responses: { 200: json(CallResultView, "Result"), ...problems(404, 409, 502, 504) },
    }),
    async (c) => {
      // A call without a body comes as an unvalidated `{}` (defaults not applied): parsed here. One with
      // a body was validated, its defaults applied, by the route.
      const given = c.req.valid("json");
      const body = given.arguments === undefined ? CallRequest.parse(given) : given;
      assertJsonDepth(body.arguments, "Tool-call arguments");
      const name = c.req.valid("param").name;
      const note = callNote(restCallOrigin(c), name, appDeps.directory);
      const principal = c.get("principal");
      // Audited as the REST caller is answered: a tool asking for input is `tool.input_required`.
      const result = await audited(appDeps, note, auditedCaller(c), body.arguments, async () =>
        restResult(
          await callGatewayTool(scoped(c), name, body.arguments, {
            scope: scopeOf(principal),
            principal,
            signal: c.req.raw.signal,
            note,
            ...(body.chat ? { chat: body.chat } : {}),
            ...(body.thread ? { thread: body.thread } : {}),
          }),
        ),
      ).catch((error: unknown) => {
        // A per-user server the caller has not authorized at yet: the link, as the tool's answer.
        if (error instanceof AuthorizationNeeded) return authorizationNeededResult(error);
        throw error;
      });
      // Whole when small; else streamed part by part, so a large text is not held twice (content + text).
      return toolResultResponse(result) as never;
    },
    // A name not of the form <server>__<tool> is `tool.invalid_name`, as parseQualifiedName says.
    (result, c) => {
      if (result.success) return undefined;
      if (result.target === "param") parseQualifiedName(c.req.param("name") ?? "");
      throw fieldsRefused("request.invalid", describeCallBodyIssues(result.error.issues));
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/chats/{chatId}/servers",
      tags: ["chats"],
      summary: "Every server and whether this chat shows its tools",
      request: { params: z.object({ chatId: ChatId }) },
      responses: { 200: json(ChatToggleList, "Toggles") },
    }),
    async (c) => {
      const { chatId } = c.req.valid("param");
      const [snapshot, off] = await Promise.all([
        appDeps.directory.snapshot(),
        appDeps.store.chats.offServers(chatId),
      ]);
      const scope = scopeOf(c.get("principal"));
      const servers = [...snapshot.byName.values()]
        .filter((entry) => !scope || scope.has(entry.server.id))
        .map(({ server }) => ({ id: server.id, name: server.name, enabled: !off.has(server.id) }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return c.json({ servers }, 200);
    },
  );

  app.openapi(
    route({
      method: "put",
      path: "/v1/chats/{chatId}/servers/{server}",
      tags: ["chats"],
      summary: "Show or hide one server's tools in one chat (a preference, not a security boundary)",
      request: {
        params: z.object({ chatId: ChatId, server: z.string().min(1).max(128) }),
        ...jsonBody(z.strictObject({ enabled: z.boolean() })),
      },
      responses: { 200: json(ChatToggleView, "Toggle"), ...problems(404) },
    }),
    async (c) => {
      const { chatId, server: idOrName } = c.req.valid("param");
      const { enabled } = c.req.valid("json");
      const server = await findServer(appDeps, idOrName);
      const scope = scopeOf(c.get("principal"));
      if (!server || (scope && !scope.has(server.id))) {
        throw new AppError("server.not_found", `No server with id or name '${idOrName}'.`);
      }
      await appDeps.store.chats.set(chatId, server.id, enabled);
      appDeps.directory.forgetChat(chatId);
      return c.json({ id: server.id, name: server.name, enabled }, 200);
    },
  );
}

/** A server by name or id from the directory (re-read once when it is not there yet). */
async function findServer(deps: GatewayDeps, idOrName: string) {
  const lookup = (snapshot: Awaited<ReturnType<GatewayDeps["directory"]["snapshot"]>>) =>
    (snapshot.byName.get(idOrName) ?? snapshot.byId.get(idOrName))?.server;
  return lookup(await deps.directory.snapshot()) ?? lookup(await deps.directory.fresh());
}
