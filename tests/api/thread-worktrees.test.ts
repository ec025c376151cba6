/**
 * `worktreeRoot` of `POST /v1/threads/{t}/servers/{id}` is checked before anything else (no runner is
 * needed to see it): it must be absolute and free of NUL bytes (400 request.invalid), free of `..`
 * segments (refused, not resolved) and, normalised, strictly under the worktree base — WORKTREE_BASE,
 * or its default `mcpgw-worktrees` under the OS temp dir — segment by segment (400
 * thread.worktree_forbidden). Paths that pass get as far as the runner, of which this app has none.
 */
import { defaultWorktreeBase } from "@mcpgw/core";
import { beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../support/servers";
import { expectProblem, freshApp, type TestApp } from "./helpers";

async function threadServer(app: TestApp): Promise<string> {
  const caller = {
    async call(method: string, path: string, body?: unknown) {
      const response = await app.call(method, path, body);
      return { status: response.status, body: await response.json() };
    },
  };
  return createServer(caller, {
    name: "files",
    command: "node",
    args: ["{{worktree_root}}"],
    scope: "thread",
  });
}

const start = (app: TestApp, id: string, worktreeRoot: unknown) =>
  app.call("POST", `/v1/threads/t1/servers/${id}`, { worktreeRoot });

describe("worktreeRoot with WORKTREE_BASE unset: the default base applies", () => {
  let app: TestApp;
  let id: string;
  const base = defaultWorktreeBase();
  beforeAll(async () => {
    app = await freshApp();
    id = await threadServer(app);
  });

  it.each([["relative/path"], ["./here"], [""], ["/a\u0000b"]])("%j → 400 request.invalid", async (root) => {
    const problem = await expectProblem(await start(app, id, root), 400, "request.invalid");
    expect(String(problem.detail)).toContain("worktreeRoot");
  });

  it.each([["/"], ["/etc"], ["/proc/self"], ["/tmp"], [base], [`${base}/../etc`], [`${base}/t1/..`]])(
    "%s → 400 thread.worktree_forbidden",
    async (root) => {
      const problem = await expectProblem(await start(app, id, root), 400, "thread.worktree_forbidden");
      expect(problem).toMatchObject({ base });
    },
  );

  it("a root under the default base passes (on to the runner: none here → 409 server.unavailable)", async () => {
    await expectProblem(await start(app, id, `${base}/./t1/`), 409, "server.unavailable");
  });
});

describe("worktreeRoot with WORKTREE_BASE /srv/wt", () => {
  let app: TestApp;
  let id: string;
  beforeAll(async () => {
    app = await freshApp({ worktreeBase: "/srv/wt" });
    id = await threadServer(app);
  });

  it.each([
    ["/srv/wt/../etc"],
    ["/srv/wt-evil/x"],
    ["/srv/wt-evil"],
    ["/srv"],
    ["/srv/wt"],
    ["/srv/wt/"],
    ["/etc/passwd"],
    ["/srv/wt/a/../../x"],
    ["/srv/wt/x/../t1"],
    ["/srv/wt/t1/.."],
  ])("%s → 400 thread.worktree_forbidden", async (root) => {
    const problem = await expectProblem(await start(app, id, root), 400, "thread.worktree_forbidden");
    expect(problem).toMatchObject({ base: "/srv/wt" });
  });

  it("checks the path before the server: an unknown server with a forbidden root is still 400", async () => {
    await expectProblem(
      await app.call("POST", "/v1/threads/t1/servers/nope", { worktreeRoot: "/srv/wt/../etc" }),
      400,
      "thread.worktree_forbidden",
    );
  });

  it.each([["/srv/wt/t1"], ["/srv/wt/./t1/"], ["/srv/wt//a/t1"]])(
    "%s passes (on to the runner)",
    async (root) => {
      await expectProblem(await start(app, id, root), 409, "server.unavailable");
    },
  );

  it("a relative path is still request.invalid", async () => {
    await expectProblem(await start(app, id, "srv/wt/t1"), 400, "request.invalid");
  });
});
