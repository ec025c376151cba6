/**
 * A child's list_changed refreshes its server's catalogue at once: the runner enqueues a probe job
 * for that server (with the instance's generation) instead of leaving it to the next sweep, a burst
 * becoming one job; what a child says while it starts is relayed only when the first request it answers
 * is not that list (a probe's tools/list sees the change anyway).
 */
import type { Job } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  everythingEntry,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
  waitFor,
} from "./helpers";

describe("runner: a child's list_changed becomes a probe job", () => {
  let stack: RunnerStack;
  /** Every job sent to the queue, with when (the runner and the API share the stack's store). */
  const sent: Array<{ job: Job; at: number }> = [];

  beforeAll(async () => {
    stack = await startRunnerStack();
    const { jobs } = stack.store;
    const send = jobs.send.bind(jobs);
    jobs.send = async (job, delaySeconds) => {
      sent.push({ job, at: Date.now() });
      return send(job, delaySeconds);
    };
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  const probesOf = (id: string, since = 0) =>
    sent.filter(({ job, at }) => job.type === "probe" && job.serverId === id && at >= since);

  it("a child that adds a tool and says so gets its server probed within 1 s; the catalogue shows the tool", async () => {
    const name = uniqueName("relay");
    const id = await createServer(stack, {
      name,
      // The new tool is served at once (under `approve` it would wait for an admin).
      pinning: "auto",
      command: process.execPath,
      args: [TINY_STDIO, "--dynamic"],
    });
    await reaches(stack, id, "connected");
    const generation = (await stack.store.statuses.get(id))?.generation;
    expect(probesOf(id)).toEqual([]);

    const asked = Date.now();
    const call = await stack.callTool(`${name}__add-tool`, { name: "fresh_tool" });
    expect(call.status).toBe(200);
    const [probe] = await waitFor(
      async () => probesOf(id, asked),
      (probes) => probes.length > 0,
      { timeoutMs: 1_000, intervalMs: 20 },
    );
    expect(probe?.job).toEqual({ type: "probe", serverId: id, generation });
    console.log(`[relay] probe job ${(probe?.at ?? 0) - asked} ms after the call was made`);
    await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${id}/tools`)).body.tools as Array<{ name: string }>,
      (tools) => tools.some((tool) => tool.name === "fresh_tool"),
      { timeoutMs: 10_000 },
    );
    const fresh = await stack.callTool(`${name}__fresh_tool`);
    expect(fresh.status).toBe(200);
  });

  it("a burst of list_changed becomes one probe job", async () => {
    const name = uniqueName("burst");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO, "--dynamic"],
    });
    await reaches(stack, id, "connected");
    const asked = Date.now();
    const calls = await Promise.all(
      ["one", "two", "three", "four", "five"].map((tool) =>
        stack.callTool(`${name}__add-tool`, { name: tool }),
      ),
    );
    expect(calls.map((call) => call.status)).toEqual([200, 200, 200, 200, 200]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(probesOf(id, asked)).toHaveLength(1);
  });

  it("a child started by the very call that changes its list gets its server probed too", async () => {
    const name = uniqueName("cold");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO, "--dynamic"],
    });
    await reaches(stack, id, "connected");
    // No child now: the next call starts one, and its first answer is that call's, not a list.
    await stack.runner?.instances.stopServer(id);
    const asked = Date.now();
    const call = await stack.callTool(`${name}__add-tool`, { name: "cold_tool" });
    expect(call.status).toBe(200);
    await waitFor(
      async () => probesOf(id, asked),
      (probes) => probes.length === 1,
      { timeoutMs: 1_000, intervalMs: 20 },
    );
  });

  it("what a child says while it starts is not relayed when its first answer is that list (a probe's)", async () => {
    // server-everything registers tools once initialized, each saying tools/list_changed.
    const id = await createServer(stack, {
      name: uniqueName("evstart"),
      command: process.execPath,
      args: [everythingEntry(), "stdio"],
    });
    await reaches(stack, id, "connected", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(probesOf(id)).toEqual([]);
  });
});
