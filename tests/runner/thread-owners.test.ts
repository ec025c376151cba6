/**
 * Threads belong to the principal that started them, and thread ids are scoped to it: client keys
 * start, list and stop their own threads; another key naming the same id gets a thread of its own
 * (never the first one's instances or worktree), and cannot squat an id before its owner; a key starts
 * instances only of servers in its scope; the admin sees and stops every thread, naming a key's by the
 * id it is listed under (`key:<keyId>:<id>`). Closing a thread forgets its owner too, and deleting a
 * server still removes its instances. Worktrees lie under WORKTREE_BASE here, checked segment by segment.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanTable } from "../support/aws";
import {
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
} from "./helpers";

const tag = randomBytes(4).toString("hex");
const base = realpathSync(mkdtempSync(join(tmpdir(), "mcpgw-wt-base-")));
// Children run under uids of their own: every directory down to a worktree must be searchable by them.
chmodSync(base, 0o755);

interface Key {
  id: string;
  key: string;
}

describe("thread ownership", () => {
  let stack: RunnerStack;
  const files = uniqueName("files");
  const other = uniqueName("other");
  let filesId: string;
  let otherId: string;
  let keyA: Key;
  let keyB: Key;
  let scoped: Key;
  const threadA = `a-${tag}`;
  const threadB = `b-${tag}`;

  /** A worktree directory under the base (the runner starts children in it). */
  const worktree = (name: string) => {
    const dir = join(base, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  /** Requests as `key`. */
  const as = (key: Key) => stack.callAs(key.key);

  const start = (call: RunnerStack["call"], thread: string, server: string, root = worktree(thread)) =>
    call("POST", `/v1/threads/${thread}/servers/${server}`, { worktreeRoot: root });

  /** The id the admin names a key's thread by (the key's own id scoped to it). */
  const adminRef = (key: Key, thread: string) => `key:${key.id}:${thread}`;

  const threadItems = async (thread: string) =>
    (await scanTable(stack.store.config)).filter((item) => item.pk === `THREAD#${thread}`);

  beforeAll(async () => {
    stack = await startRunnerStack({}, { worktreeBase: base });
    [filesId, otherId] = await Promise.all([
      createServer(stack, { name: files, command: process.execPath, args: [TINY_STDIO], scope: "thread" }),
      createServer(stack, { name: other, command: process.execPath, args: [TINY_STDIO], scope: "thread" }),
    ]);
    await Promise.all([
      reaches(stack, filesId, "connected", 30_000),
      reaches(stack, otherId, "connected", 30_000),
    ]);
    const key = async (name: string, servers?: string[]) => {
      const created = await stack.call("POST", "/v1/keys", { name, ...(servers ? { servers } : {}) });
      expect(created.status).toBe(201);
      return created.body as Key;
    };
    [keyA, keyB, scoped] = await Promise.all([key("a"), key("b"), key("other only", [other])]);
  }, 60_000);

  afterAll(async () => {
    await stack?.cleanup();
    rmSync(base, { recursive: true, force: true });
  });

  it("a key starts a thread and owns it: GET /v1/threads, GET /v1/threads/{t}, its tools and calls", async () => {
    const root = worktree(threadA);
    const started = await start(as(keyA), threadA, files, `${root}/./`);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      threadId: threadA,
      serverId: filesId,
      server: files,
      worktreeRoot: root,
    });

    const one = await as(keyA)("GET", `/v1/threads/${threadA}`);
    expect(one).toEqual({
      status: 200,
      body: {
        id: threadA,
        owner: keyA.id,
        createdAt: expect.any(String),
        instances: [
          {
            threadId: threadA,
            serverId: filesId,
            server: files,
            worktreeRoot: root,
            createdAt: expect.any(String),
          },
        ],
      },
    });
    const listed = await as(keyA)("GET", "/v1/threads");
    expect(listed).toEqual({
      status: 200,
      body: {
        threads: [
          {
            id: threadA,
            owner: keyA.id,
            createdAt: one.body.createdAt,
            instances: [{ serverId: filesId, server: files }],
          },
        ],
      },
    });
    const tools = await as(keyA)("GET", `/v1/threads/${threadA}/tools`);
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).toContain(`${files}__ping`);
    const called = await as(keyA)("POST", `/v1/tools/${files}__ping/call`, {
      arguments: {},
      thread: threadA,
    });
    expect(called.status).toBe(200);
    expect(textOf(called.body)).toBe("pong");
  });

  it("another key naming that thread id never reaches it: no thread to read or call, a close is a no-op", async () => {
    const b = as(keyB);
    for (const [method, path, body] of [
      ["GET", `/v1/threads/${threadA}`],
      ["POST", `/v1/tools/${files}__ping/call`, { arguments: {}, thread: threadA }],
    ] as Array<[string, string, unknown?]>) {
      const response = await b(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body, `${method} ${path}`).toMatchObject({ code: "request.not_found" });
    }
    const tools = await b("GET", `/v1/threads/${threadA}/tools`);
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).not.toContain(`${files}__ping`);
    expect(await b("DELETE", `/v1/threads/${threadA}`)).toEqual({
      status: 200,
      body: { stopped: 0, removed: 0 },
    });
    expect((await b("GET", "/v1/threads")).body).toEqual({ threads: [] });
    // Untouched: still A's, with its one instance, and A can still call into it.
    const still = await as(keyA)("GET", `/v1/threads/${threadA}`);
    expect(still.body).toMatchObject({ owner: keyA.id, instances: [{ serverId: filesId }] });
    const called = await as(keyA)("POST", `/v1/tools/${files}__ping/call`, {
      arguments: {},
      thread: threadA,
    });
    expect(called.status).toBe(200);
  });

  it("another key starting that thread id gets a thread of its own, and cannot squat an id before its owner", async () => {
    const pidOfA = (await stack.instances()).find((i) => i.threadId === `key:${keyA.id}:${threadA}`)?.pid;
    expect(pidOfA).toEqual(expect.any(Number));
    const own = await start(as(keyB), threadA, files, worktree(`b-own-${tag}`));
    expect(own.status).toBe(201);
    expect(own.body).toMatchObject({ threadId: threadA, worktreeRoot: worktree(`b-own-${tag}`) });
    expect(own.body.pid).not.toBe(pidOfA);
    expect((await as(keyB)("GET", `/v1/threads/${threadA}`)).body).toMatchObject({
      id: threadA,
      owner: keyB.id,
    });
    expect((await as(keyA)("GET", `/v1/threads/${threadA}`)).body).toMatchObject({
      owner: keyA.id,
      instances: [{ worktreeRoot: worktree(threadA) }],
    });
    // B claims an id first; A's start of the same id is still A's own thread.
    const squat = `squat-${tag}`;
    expect((await start(as(keyB), squat, files, worktree(`b-${squat}`))).status).toBe(201);
    const mine = await start(as(keyA), squat, files, worktree(`a-${squat}`));
    expect(mine.status).toBe(201);
    expect((await as(keyA)("GET", `/v1/threads/${squat}`)).body).toMatchObject({ owner: keyA.id });
    for (const key of [keyA, keyB])
      expect((await as(key)("DELETE", `/v1/threads/${squat}`)).body).toEqual({ stopped: 1, removed: 1 });
    expect((await as(keyB)("DELETE", `/v1/threads/${threadA}`)).body).toEqual({ stopped: 1, removed: 1 });
    expect((await as(keyA)("GET", `/v1/threads/${threadA}`)).body).toMatchObject({ owner: keyA.id });
  });

  it("each key lists only its own threads", async () => {
    expect((await start(as(keyB), threadB, filesId)).status).toBe(201);
    const ids = async (key: Key) =>
      ((await as(key)("GET", "/v1/threads")).body.threads as Array<{ id: string }>).map(
        (thread) => thread.id,
      );
    expect(await ids(keyA)).toEqual([threadA]);
    expect(await ids(keyB)).toEqual([threadB]);
    expect(await ids(scoped)).toEqual([]);
  });

  it("a key scoped to other servers cannot start an instance of this one (404 server.not_found)", async () => {
    const thread = `s-${tag}`;
    const refused = await start(as(scoped), thread, files);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ code: "server.not_found" });
    expect(await threadItems(adminRef(scoped, thread))).toEqual([]);
    // Its own server it may start.
    expect((await start(as(scoped), thread, other)).status).toBe(201);
    const tools = await as(scoped)("GET", `/v1/threads/${thread}/tools`);
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).toEqual([
      `${other}__crash`,
      `${other}__pid`,
      `${other}__ping`,
      `${other}__slow`,
    ]);
  });

  it("a worktree outside WORKTREE_BASE is refused, even when its string starts like the base", async () => {
    for (const root of [`${base}/../etc`, `${base}-evil/x`, `${base}/t/../../x`]) {
      const refused = await start(as(keyA), `w-${tag}`, files, root);
      expect(refused.status, root).toBe(400);
      expect(refused.body, root).toMatchObject({ code: "thread.worktree_forbidden" });
    }
  });

  it("the admin sees every thread, reads and calls into any, and stops a key's thread", async () => {
    const all = await stack.call("GET", "/v1/threads");
    expect(all.status).toBe(200);
    expect(all.body.threads).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: adminRef(keyA, threadA),
          owner: keyA.id,
          instances: [{ serverId: filesId, server: files }],
        }),
        expect.objectContaining({ id: adminRef(keyB, threadB), owner: keyB.id }),
      ]),
    );
    expect((await stack.call("GET", `/v1/threads/${adminRef(keyA, threadA)}`)).body).toMatchObject({
      owner: keyA.id,
    });
    // The admin's own `threadA` is another thread.
    expect((await stack.call("GET", `/v1/threads/${threadA}`)).status).toBe(404);
    expect((await stack.callTool(`${files}__ping`, {}, adminRef(keyA, threadA))).status).toBe(200);

    expect(await stack.call("DELETE", `/v1/threads/${adminRef(keyA, threadA)}`)).toEqual({
      status: 200,
      body: { stopped: 1, removed: 1 },
    });
    // Gone for its owner too, and nothing of it is left in the table (the owner record included).
    expect((await as(keyA)("GET", `/v1/threads/${threadA}`)).status).toBe(404);
    expect((await as(keyA)("GET", "/v1/threads")).body).toEqual({ threads: [] });
    expect(await threadItems(adminRef(keyA, threadA))).toEqual([]);
    const call = await as(keyA)("POST", `/v1/tools/${files}__ping/call`, { arguments: {}, thread: threadA });
    expect(call.status).toBe(404);
  });

  it("a key stops its own thread; its records go with it", async () => {
    expect(await as(keyB)("DELETE", `/v1/threads/${threadB}`)).toEqual({
      status: 200,
      body: { stopped: 1, removed: 1 },
    });
    expect(await threadItems(adminRef(keyB, threadB))).toEqual([]);
    // Closing no thread is a no-op, for a key as for the admin.
    expect(await as(keyB)("DELETE", `/v1/threads/${threadB}`)).toEqual({
      status: 200,
      body: { stopped: 0, removed: 0 },
    });
  });

  it("a thread registered before owners were recorded is the admin's: keys get 404, the admin sees it", async () => {
    const thread = `legacy-${tag}`;
    await stack.store.clients.ddb.send(
      new PutCommand({
        TableName: stack.store.config.tableName,
        Item: {
          pk: `THREAD#${thread}`,
          sk: `SERVER#${filesId}`,
          kind: `OWNED#${filesId}`,
          kindSort: `THREAD#${thread}`,
          threadId: thread,
          serverId: filesId,
          worktreeRoot: worktree(thread),
          createdAt: new Date().toISOString(),
        },
      }),
    );
    expect((await as(keyA)("GET", `/v1/threads/${thread}`)).status).toBe(404);
    expect((await as(keyA)("POST", `/v1/tools/${files}__ping/call`, { arguments: {}, thread })).status).toBe(
      404,
    );
    // A key starting that id gets a thread of its own; the legacy one stays the admin's.
    expect((await start(as(keyA), thread, files)).status).toBe(201);
    expect((await stack.call("GET", `/v1/threads/${thread}`)).body).toMatchObject({
      owner: "admin",
      instances: [{ serverId: filesId }],
    });
    expect((await stack.call("DELETE", `/v1/threads/${thread}`)).body).toMatchObject({ removed: 1 });
    expect(await threadItems(thread)).toEqual([]);
    expect((await as(keyA)("DELETE", `/v1/threads/${thread}`)).body).toMatchObject({ removed: 1 });
  });

  it("deleting a server still removes its thread instances; the thread stays, without them", async () => {
    const doomed = uniqueName("doomed");
    const doomedId = await createServer(stack, {
      name: doomed,
      command: process.execPath,
      args: [TINY_STDIO],
      scope: "thread",
    });
    await reaches(stack, doomedId, "connected", 30_000);
    const thread = `c-${tag}`;
    expect((await start(as(keyA), thread, doomedId)).status).toBe(201);
    expect((await stack.call("DELETE", `/v1/servers/${doomedId}`)).status).toBe(204);

    const items = await scanTable(stack.store.config);
    expect(items.filter((item) => item.kind === `OWNED#${doomedId}`)).toEqual([]);
    expect(
      items.filter((item) => item.pk === `THREAD#${adminRef(keyA, thread)}`).map((item) => item.sk),
    ).toEqual(["META"]);
    expect((await as(keyA)("GET", `/v1/threads/${thread}`)).body).toMatchObject({
      owner: keyA.id,
      instances: [],
    });
    const listed = (await as(keyA)("GET", "/v1/threads")).body.threads;
    expect(listed).toEqual([expect.objectContaining({ id: thread, instances: [] })]);
    expect((await as(keyA)("DELETE", `/v1/threads/${thread}`)).body).toMatchObject({ removed: 0 });
    expect(await threadItems(adminRef(keyA, thread))).toEqual([]);
  });
});
