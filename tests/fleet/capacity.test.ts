/**
 * Each runner of a fleet enforces its own capacity: a full runner takes no new instance while another
 * has room — it says so in the registry and answers 421, starting nothing and evicting nothing — and the
 * caller, its view of the fleet stale, reads the registry again and places the instance on a runner
 * with room.
 */
import { randomUUID } from "node:crypto";
import { createStore, type Store } from "@mcpgw/aws";
import { RunnerDirectory } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FleetProcess, startFleetProcess } from "../../scripts/lib/runner-fleet";
import { TINY_STDIO, testUidBase } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv } from "../support/dev-process";
import { createServer, reaches } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("a full runner of a fleet", () => {
  const tag = `capacity-${randomUUID().slice(0, 8)}-`;
  const token = `runner-${randomUUID()}`;
  let env: Record<string, string | undefined>;
  const runners: FleetProcess[] = [];
  let store: Store;
  let stack: Stack;
  let directory: RunnerDirectory;

  /** The instances a runner lists: server id → its child's pid. */
  const listed = async (runner: FleetProcess) => {
    const response = await fetch(`${runner.url}/servers`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as { instances: Array<{ serverId: string; pid: number }> };
    return new Map(body.instances.map((instance) => [instance.serverId, instance.pid]));
  };
  const create = (name: string) =>
    createServer(stack, { name, command: process.execPath, args: [TINY_STDIO, name] });

  beforeAll(async () => {
    const config = await createTestConfig();
    const { PORT: _port, ADMIN_TOKEN: _admin, ...aws } = (await devEnv(config)).env;
    env = {
      ...process.env,
      ...aws,
      RUNNER_TOKEN: token,
      RUNNER_LEASE_SECONDS: "10",
      RUNNER_UID_BASE: String(testUidBase()),
      RUNNER_UID_COUNT: "400",
      RUNNER_UID_SLICE: "20",
    };
    store = createStore(config);
    // One runner of two children, alone at first.
    runners.push(await startFleetProcess({ env: { ...env, RUNNER_MAX_CHILDREN: "2" } }));
    // The gateway and worker read the registry every 8 s here: read just before the second runner joins,
    // their view of the fleet is stale when it has, so they ask the full one first and must follow its
    // refusal.
    directory = new RunnerDirectory(store.fleet, token, { refreshMs: 8_000 });
    stack = await startStack({ aws: config, runnerAt: directory });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all(runners.map((runner) => runner.kill()));
  }, 60_000);

  it("refuses a new instance with 421 while another runner has room, which then serves it", async () => {
    const [small] = runners as [FleetProcess];
    const held = [await create(`${tag}a`), await create(`${tag}b`)];
    await Promise.all(held.map((id) => reaches(stack, id, "connected", 30_000)));
    const before = await listed(small);
    expect([...before.keys()].sort()).toEqual([...held].sort());

    directory.refresh();
    expect((await directory.live()).map((runner) => runner.id)).toEqual([small.id]);
    const roomy = await startFleetProcess({ env: { ...env, RUNNER_MAX_CHILDREN: "20" } });
    runners.push(roomy);
    const name = `${tag}c`;
    const id = await create(name);
    // Asked for the new instance (the worker's probe, on its stale view, and here directly), the full
    // runner refuses it: it starts nothing, evicts nothing, takes no lease, and shows no room.
    const asked = await fetch(`${small.url}/servers/${id}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    expect(asked.status).toBe(421);
    expect(await asked.json()).toMatchObject({
      code: "runner.not_owner",
      detail: expect.stringMatching(/full/),
    });
    expect(await listed(small)).toEqual(before);
    expect((await store.fleet.lease(id))?.owner).not.toBe(small.id);
    expect((await store.fleet.runners()).find((runner) => runner.id === small.id)).toMatchObject({ free: 0 });

    // The probe that followed the refusal connected it on the runner with room at once (not a retry
    // later: it never failed), and calls go there.
    await reaches(stack, id, "connected", 6_000);
    expect((await store.statuses.get(id))?.lastError).toBeNull();
    const call = await stack.call("POST", `/v1/tools/${encodeURIComponent(`${name}__ping`)}/call`, {
      arguments: {},
    });
    expect(call.status).toBe(200);
    expect((await store.fleet.lease(id))?.owner).toBe(roomy.id);
    await waitFor(
      () => listed(roomy),
      (instances) => instances.has(id),
      { timeoutMs: 5_000 },
    );
    expect(await listed(small)).toEqual(before);
  }, 120_000);
});
