import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ThreadDetail } from "@mcpgw/aws";
import { AppError, checkWorktreeRoot, defaultWorktreeBase } from "@mcpgw/core";
import { createRunnerClient } from "@mcpgw/upstream";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { CatalogToolList, ThreadInstanceView, ThreadList, ThreadView } from "../views";
import { inScope, listTools, restTool } from "./catalogue";
import type { GatewayDeps } from "./deps";
import { Directory } from "./directory";
import { scopeOf, ThreadId } from "./routes";
import { mayUseThread, shownThreadIds, storedThreadId, threadOwner } from "./thread-access";
import { toolGate } from "./tool-access";

const WorktreeRoot = z
  .string()
  .max(4_096)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses (as \x00: schema tools read it)
  .regex(/^\/[^\x00]*$/, "must be an absolute path without NUL bytes")
  .openapi({
    description:
      "The thread's worktree, an absolute directory strictly under WORKTREE_BASE (default `<runner data dir>/mcpgw-worktrees`); stored normalised (`.` and extra slashes dropped). A `..` segment, a path outside the base, or (on the runner) a symlink resolving outside it is 400 thread.worktree_forbidden",
    example: "/tmp/mcpgw-worktrees/t1",
  });

/**
 * Registers the thread routes: list threads, start a thread-scoped server in a thread, a thread's
 * tools, tear it down. Thread ids are scoped to the principal naming them (see {@link storedThreadId}):
 * a key's `t1` is not another key's `t1`. The admin token sees every thread; a client key only the
 * threads it started, and starts instances only of servers in its scope.
 */
export function registerThreadRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: Pick<GatewayDeps, "store" | "logger" | "runner"> & {
    /** The data plane's warm sessions: a closed thread's are released at once. */
    pool?: GatewayDeps["pool"];
    directory?: Directory;
    /** Worktree roots must lie strictly under this path (WORKTREE_BASE; default {@link defaultWorktreeBase}). */
    worktreeBase?: string | undefined;
  },
): void {
  const directory = deps.directory ?? new Directory(deps.store, deps.logger);
  const worktreeBase = deps.worktreeBase ?? defaultWorktreeBase();
  const runner = () => {
    if (!deps.runner) throw new AppError("server.unavailable", "No stdio runner is configured (RUNNER_URL).");
    return createRunnerClient(deps.runner);
  };

  /**
   * The stored id of the thread the caller names `threadId`, and the thread when the caller may see it
   * (undefined when there is none; 404 when another owns it — only the admin's refs can name one).
   */
  async function visibleThread(
    c: Context<AppEnv>,
    threadId: string,
  ): Promise<{ stored: string; thread: ThreadDetail | undefined }> {
    const stored = storedThreadId(c.get("principal"), threadId);
    const thread = await deps.store.threads.thread(stored);
    if (thread && !mayUseThread(c.get("principal"), thread.owner)) throw noThread(threadId);
    return { stored, thread };
  }

  /** Current names of servers by id, from a view no older than the request (a deleted server has none). */
  async function serverNames(ids: Iterable<string>): Promise<Map<string, string>> {
    const wanted = [...new Set(ids)];
    // A view taken after this request came: a server deleted just before it (its instances gone with
    // it) is not named from a view still holding it, nor a new one missed. One shared, spaced refresh.
    const snapshot = wanted.length > 0 ? await directory.fresh() : await directory.snapshot();
    return new Map(
      wanted.flatMap((id) => {
        const entry = snapshot.byId.get(id);
        return entry ? [[id, entry.server.name] as const] : [];
      }),
    );
  }

  app.openapi(
    route({
      method: "get",
      path: "/v1/threads",
      tags: ["threads"],
      summary: "Threads the caller may see: every thread for the admin, its own for a client key",
      responses: {
        200: json(ThreadList, "Threads"),
      },
    }),
    async (c) => {
      const principal = c.get("principal");
      const threads = await deps.store.threads.threads(
        principal.kind === "admin" ? undefined : threadOwner(principal),
      );
      const names = await serverNames(threads.flatMap((thread) => thread.serverIds));
      const shown = shownThreadIds(principal);
      const views = threads
        .map((thread) => ({
          id: shown(thread.threadId),
          owner: thread.owner,
          createdAt: thread.createdAt,
          // A deleted server's instance went with it.
          instances: thread.serverIds.flatMap((serverId) => {
            const server = names.get(serverId);
            return server ? [{ serverId, server }] : [];
          }),
        }))
        .sort((a, b) => compare(a.createdAt, b.createdAt) || compare(a.id, b.id));
      return c.json({ threads: views }, 200);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/threads/{threadId}",
      tags: ["threads"],
      summary: "One thread and its registered instances",
      request: { params: z.object({ threadId: ThreadId }) },
      responses: { 200: json(ThreadView, "Thread"), ...problems(404) },
    }),
    async (c) => {
      const { threadId } = c.req.valid("param");
      const { thread } = await visibleThread(c, threadId);
      if (!thread) throw noThread(threadId);
      const names = await serverNames(thread.instances.map((instance) => instance.serverId));
      const instances = thread.instances.flatMap((instance) => {
        const server = names.get(instance.serverId);
        return server ? [{ ...instance, threadId, server }] : [];
      });
      return c.json({ id: threadId, owner: thread.owner, createdAt: thread.createdAt, instances }, 200);
    },
  );

  app.openapi(
    route({
      method: "post",
      path: "/v1/threads/{threadId}/servers/{id}",
      tags: ["threads"],
      summary:
        "Start a thread-scoped stdio server in a thread (idempotent: a live instance is kept); the first start makes the caller the thread's owner",
      request: {
        params: z.object({ threadId: ThreadId, id: z.string().min(1).max(128) }),
        ...jsonBody(z.strictObject({ worktreeRoot: WorktreeRoot })),
      },
      responses: {
        200: json(ThreadInstanceView, "Running"),
        201: json(ThreadInstanceView, "Started"),
        ...problems(404, 409, 502),
      },
      description:
        "The runner checks the worktree before it spawns: a path that does not exist there, is not a directory or cannot be entered by the child's uid is 400 thread.worktree_missing; one that resolves (symlinks included) outside WORKTREE_BASE, or is, holds or lies in another thread's open worktree, is 400 thread.worktree_forbidden (either way the registration is not kept). The worktree is then open to this thread's children only.",
    }),
    async (c) => {
      const { threadId, id } = c.req.valid("param");
      const worktreeRoot = checkWorktreeRoot(c.req.valid("json").worktreeRoot, worktreeBase);
      const principal = c.get("principal");
      // Config only (no secrets are opened: the runner reads what it spawns with itself).
      const server = await deps.store.servers.resolvePlain(id);
      if (!server || !inScope(scopeOf(principal), server.id))
        throw new AppError("server.not_found", `No server with id or name '${id}'.`);
      // (A plain record's type keeps only the fields both transports share; `scope` is stdio's.)
      if (server.transport !== "stdio" || (server as { scope?: string }).scope !== "thread") {
        throw new AppError("request.invalid", `Server '${server.name}' is not a thread-scoped stdio server.`);
      }
      if (!server.enabled) throw new AppError("server.unavailable", `Server '${server.name}' is disabled.`);
      const { stored } = await visibleThread(c, threadId);
      const client = runner();
      const { instance, created } = await deps.store.threads.register({
        threadId: stored,
        serverId: server.id,
        worktreeRoot,
        owner: threadOwner(principal),
      });
      const { pid } = await client.startThreadInstance(stored, server.id).catch(async (error) => {
        // The runner found the worktree unusable: this registration must not outlive the refusal, or
        // a retry with a corrected path would keep the bad one.
        if (created && error instanceof AppError && WORKTREE_REFUSALS.has(error.code))
          await deps.store.threads.unregister(stored, server.id);
        throw error;
      });
      c.get("logger").info("thread instance started", {
        threadId: stored,
        server: server.name,
        created,
        pid,
      });
      return c.json({ ...instance, threadId, server: server.name, pid }, created ? 201 : 200);
    },
  );

  app.openapi(
    route({
      method: "get",
      path: "/v1/threads/{threadId}/tools",
      tags: ["threads"],
      summary: "The project's tools plus the tools of this thread's instances (within the caller's scope)",
      request: { params: z.object({ threadId: ThreadId }) },
      responses: { 200: json(CatalogToolList, "Tools"), ...problems(404) },
    }),
    async (c) => {
      const { threadId } = c.req.valid("param");
      const { stored } = await visibleThread(c, threadId);
      const tools = await listTools(
        { store: deps.store, directory },
        {
          thread: stored,
          scope: scopeOf(c.get("principal")),
          gate: await toolGate({ store: deps.store, directory }, c.get("principal")),
        },
      );
      return c.json({ tools: tools.map(restTool) }, 200);
    },
  );

  app.openapi(
    route({
      method: "delete",
      path: "/v1/threads/{threadId}",
      tags: ["threads"],
      summary: "Close a thread: end every instance it started and forget it (closing no thread is a no-op)",
      request: { params: z.object({ threadId: ThreadId }) },
      responses: {
        200: json(z.object({ stopped: z.number().int(), removed: z.number().int() }), "Closed"),
        ...problems(404, 502),
      },
    }),
    async (c) => {
      const { threadId } = c.req.valid("param");
      const { stored } = await visibleThread(c, threadId);
      const removed = await deps.store.threads.removeThread(stored);
      // This process's warm sessions to the thread's instances go now, not when they idle out.
      const released = deps.pool?.releaseThread(stored) ?? 0;
      const stopped = deps.runner ? await runner().stopThread(stored) : 0;
      c.get("logger").info("thread closed", { threadId: stored, removed: removed.length, stopped, released });
      return c.json({ stopped, removed: removed.length }, 200);
    },
  );
}

/** What the runner answers when a thread's worktree cannot be used (the registration is taken back). */
const WORKTREE_REFUSALS = new Set(["thread.worktree_missing", "thread.worktree_forbidden"]);

function noThread(threadId: string): AppError {
  return new AppError("request.not_found", `No thread '${threadId}'.`, { threadId });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
