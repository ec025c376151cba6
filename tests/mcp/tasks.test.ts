/**
 * A tool a 2025 upstream runs only as a task (`execution.taskSupport: "required"`) is called through
 * `/mcp/{server}` as a plain call, and the gateway runs the task as the 2025-11-25 revision says:
 *
 * - only on an upstream that declared `tasks.requests.tools.call` — another is called plainly, its
 *   plain answer the result (tests/fixtures/faithful-upstream.ts's `chore`), as is a plain answer from
 *   one that does take tasks;
 * - under one deadline for the whole call, which progress on the call's token pushes back as it does
 *   a plain call's, that progress reaching the caller until the task's result (tests/fixtures/task-upstream.ts);
 * - a task the gateway gives up on (its deadline passed, its caller left) is cancelled on the upstream.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { type FaithfulUpstream, startFaithfulUpstream } from "../fixtures/faithful-upstream";
import { startTaskUpstream, type TaskUpstream } from "../fixtures/task-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { waitFor } from "../support/stack";
import { connectTestClient, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";

describe("a task-only tool of a 2025 upstream through /mcp/{server}", () => {
  let stack: Stack;
  let key: CreatedKey;
  let faithful: FaithfulUpstream;
  let tasks: TaskUpstream;
  const plain = uniqueName("no-tasks");
  const tasked = uniqueName("tasked");
  const closers: Array<() => Promise<unknown>> = [];

  async function testClient(flavour: "v2-modern" | "v1", server: string): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}/mcp/${server}`, { key: key.key });
    closers.push(() => client.close());
    return client;
  }

  beforeAll(async () => {
    [stack, faithful, tasks] = await Promise.all([
      startGatewayStack(),
      startFaithfulUpstream("legacy"),
      startTaskUpstream(),
    ]);
    await Promise.all([
      createConnected(stack, { name: plain, url: faithful.url }),
      // One second: a task of several seconds lives on its progress alone.
      createConnected(stack, { name: tasked, url: tasks.url, timeoutSeconds: 1 }),
    ]);
    key = await createKey(stack, "tasks e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(closers.map((close) => close()));
    await stack?.stop();
    await Promise.allSettled([faithful?.close(), tasks?.close()]);
  });

  for (const flavour of ["v2-modern", "v1"] as const) {
    it(`${flavour}: an upstream that takes no tasks is called plainly, whatever its tool says`, async ({
      expect,
    }) => {
      const { result } = await (await testClient(flavour, plain)).callTool("chore");
      expect(result.isError ?? false).toBe(false);
      expect(textOf(result)).toBe("chore done");
    });
  }

  it("a plain answer to a call made as a task is the call's result", async ({ expect }) => {
    const { result } = await (await testClient("v1", tasked)).callTool("slow", { plainly: true });
    expect(textOf(result)).toBe("slow ran plainly");
  });

  it("a task's progress reaches the caller and keeps the call alive past the server's timeout", async ({
    expect,
  }) => {
    const client = await testClient("v1", tasked);
    const { result, progress } = await client.callTool(
      "slow",
      { steps: 8, everyMs: 300 },
      { timeoutMs: 20_000 },
    );
    expect(textOf(result)).toBe("slow done after 8 steps");
    expect(progress.map((update) => update.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  }, 30_000);

  it("a task the gateway stops waiting for is cancelled on the upstream", async ({ expect }) => {
    const client = await testClient("v1", tasked);
    const outcome = await client
      .callTool("slow", { steps: 100, everyMs: 100, silent: true }, { timeoutMs: 20_000 })
      .then(
        () => "answered",
        (error: unknown) => (error as Error).message,
      );
    expect(outcome).toMatch(/did not answer the call in time/);
    const created = tasks.created.at(-1);
    expect(created).toBeDefined();
    await waitFor(
      async () => [...tasks.cancelled],
      (cancelled) => cancelled.includes(created as string),
      { timeoutMs: 5_000, intervalMs: 50 },
    );
  }, 30_000);

  it("a task whose caller leaves is cancelled on the upstream", async ({ expect }) => {
    const before = tasks.created.length;
    const controller = new AbortController();
    const call = stack.callTool(
      `${tasked}__slow`,
      { steps: 100, everyMs: 100, silent: true },
      {
        signal: controller.signal,
      },
    );
    call.catch(() => undefined);
    await waitFor(
      async () => tasks.created.length,
      (created) => created > before,
      { timeoutMs: 5_000, intervalMs: 10 },
    );
    controller.abort();
    await expect(call).rejects.toThrow();
    const created = tasks.created.at(-1) as string;
    await waitFor(
      async () => [...tasks.cancelled],
      (cancelled) => cancelled.includes(created),
      { timeoutMs: 900, intervalMs: 20 },
    );
  });
});
