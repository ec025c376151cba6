import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { AppError, checkWorktreeRoot } from "@mcpgw/core";
import { createRunnerClient } from "@mcpgw/upstream";
import type { AppEnv } from "../env";
import { Directory } from "../gateway/directory";
import { CatalogToolView, ThreadId } from "../gateway/routes";
import { type GatewayDeps, listTools, restTool } from "../gateway/service";
import { json, jsonBody, problems, security } from "../openapi-helpers";

const ThreadInstanceView = z
  .object({
    threadId: z.string(),
    serverId: z.string(),
    server: z.string(),
    worktreeRoot: z.string(),
    createdAt: z.string(),
    pid: z.number().int().nullable(),
  })
  .openapi("ThreadInstance");

const WorktreeRoot = z
  .string()
  .startsWith("/", "must be an absolute path")
  .max(4_096)
  .refine((path) => !path.includes("\0"), "must not contain NUL bytes")
  .openapi({
    description:
      "The thread's worktree, an absolute path; stored normalised (`.`, `..` and trailing slashes resolved). With WORKTREE_BASE set it must be that path or under it (else 400 thread.worktree_forbidden)",
    example: "/work/t1",
  });

/** Registers the thread routes: start a thread-scoped server in a thread, its tools, tear it down. */
export function registerThreadRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: Pick<GatewayDeps, "store" | "logger" | "runner"> & {
    directory?: Directory;
    /** Worktree roots must be this path or under it (WORKTREE_BASE), when set. */
    worktreeBase?: string | undefined;
  },
): void {
  const directory = deps.directory ?? new Directory(deps.store, deps.logger);
  const runner = () => {
    if (!deps.runner) throw new AppError("server.unavailable", "No stdio runner is configured (RUNNER_URL).");
    return createRunnerClient(deps.runner);
  };

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/threads/{threadId}/servers/{id}",
      tags: ["threads"],
      security,
      summary: "Start a thread-scoped stdio server in a thread (idempotent: a live instance is kept)",
      request: {
        params: z.object({ threadId: ThreadId, id: z.string().min(1).max(128) }),
        ...jsonBody(z.strictObject({ worktreeRoot: WorktreeRoot })),
      },
      responses: {
        200: json(ThreadInstanceView, "Running"),
        201: json(ThreadInstanceView, "Started"),
        ...problems(400, 401, 404, 409, 502),
      },
    }),
    async (c) => {
      const { threadId, id } = c.req.valid("param");
      const worktreeRoot = checkWorktreeRoot(c.req.valid("json").worktreeRoot, deps.worktreeBase);
      const server = await deps.store.servers.resolve(id);
      if (!server) throw new AppError("server.not_found", `No server with id or name '${id}'.`);
      if (server.transport !== "stdio" || server.scope !== "thread") {
        throw new AppError("request.invalid", `Server '${server.name}' is not a thread-scoped stdio server.`);
      }
      if (!server.enabled) throw new AppError("server.unavailable", `Server '${server.name}' is disabled.`);
      const client = runner();
      const { instance, created } = await deps.store.threads.register({
        threadId,
        serverId: server.id,
        worktreeRoot,
      });
      const { pid } = await client.startThreadInstance(threadId, server.id);
      c.get("logger").info("thread instance started", { threadId, server: server.name, created, pid });
      return c.json({ ...instance, server: server.name, pid }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/threads/{threadId}/tools",
      tags: ["threads"],
      security,
      summary: "The project's tools plus the tools of this thread's instances",
      request: { params: z.object({ threadId: ThreadId }) },
      responses: { 200: json(z.object({ tools: z.array(CatalogToolView) }), "Tools"), ...problems(401) },
    }),
    async (c) => {
      const tools = await listTools(
        { store: deps.store, directory },
        { thread: c.req.valid("param").threadId },
      );
      return c.json({ tools: tools.map(restTool) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/threads/{threadId}",
      tags: ["threads"],
      security,
      summary: "Close a thread: end every instance it started",
      request: { params: z.object({ threadId: ThreadId }) },
      responses: {
        200: json(z.object({ stopped: z.number().int(), removed: z.number().int() }), "Closed"),
        ...problems(401, 502),
      },
    }),
    async (c) => {
      const { threadId } = c.req.valid("param");
      const removed = await deps.store.threads.removeThread(threadId);
      const stopped = deps.runner ? await runner().stopThread(threadId) : 0;
      c.get("logger").info("thread closed", { threadId, removed: removed.length, stopped });
      return c.json({ stopped, removed: removed.length }, 200);
    },
  );
}
