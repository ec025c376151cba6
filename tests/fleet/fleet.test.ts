/**
 * A fleet of three stdio runners, each its own process registered in the table (as `RUNNERS=3 npm run
 * dev` starts them), behind one gateway and worker that reach each instance at the runner holding its
 * lease: instances spread over the fleet, one child each across it; a runner killed hard under load
 * has its servers served by the others once its registration lapses, while the other runners' calls
 * see no error; a runner stopped gracefully hands its instances back.
 */
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStore, type Store } from "@mcpgw/aws";
import { RUNNER_LOST, RunnerDirectory } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FleetProcess, startFleet, startFleetProcess } from "../../scripts/lib/runner-fleet";
import { isAlive, TINY_STDIO, testUidBase } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv } from "../support/dev-process";
import { createServer, reaches } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

const SERVERS = 60;
/** Each runner's registration lives this long without a heartbeat (RUNNER_LEASE_SECONDS). */
const LEASE_SECONDS = 3;

/** Live processes whose command line has an argument starting with `prefix`, by that argument. */
function childrenByMarker(prefix: string): Map<string, number[]> {
  const found = new Map<string, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const marker = args.find((arg) => arg.startsWith(prefix));
    if (!marker || !isAlive(pid)) continue;
    found.set(marker, [...(found.get(marker) ?? []), pid]);
  }
  return found;
}

describe("a fleet of three stdio runners", () => {
  const tag = `fleet-${randomUUID().slice(0, 8)}-`;
  const token = `runner-${randomUUID()}`;
  /** A secret every server references: each child gets it in a secret file of its own. */
  const secret = `fleet-${randomUUID().slice(0, 8)}`;
  /** The fleet's RUNNER_TEMP_DIR: each runner's directory (its children's HOMEs, secret files) is in it. */
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-fleet-"));
  // Children (under uids of their own) reach their thread's worktree through it: searchable, not listable.
  chmodSync(tempBase, 0o711);
  /** Where thread worktrees lie: storage every runner of this fleet sees (one host's disk). */
  const worktreeBase = join(tempBase, "mcpgw-worktrees");
  /** The runner directories under it belonging to the runner process `pid`. */
  const dirsOf = (pid: number) =>
    readdirSync(tempBase).filter((name) => name.startsWith(`mcpgw-runner-${pid}-`));
  let env: Record<string, string | undefined>;
  let runners: FleetProcess[] = [];
  let store: Store;
  let stack: Stack;
  const servers: Array<{ id: string; name: string; marker: string }> = [];
  /** The most children any one instance had at once, seen by the watcher. */
  let mostChildren = 0;
  let watcher: NodeJS.Timeout | undefined;

  const ownerOf = async (id: string) => (await store.fleet.lease(id))?.owner;
  /** Pings `among` one after another, round and round, until `stop()`: how many answered, what failed. */
  const steadyLoad = (among: ReadonlyArray<{ name: string }>) => {
    let loading = true;
    const failures: unknown[] = [];
    let served = 0;
    const running = (async () => {
      for (let round = 0; loading; round++) {
        const { name } = among[round % among.length] as { name: string };
        const response = await ping(name);
        if (response.status === 200) served++;
        else failures.push({ name, body: response.body });
      }
    })();
    return {
      async stop() {
        loading = false;
        await running;
        return { served, failures };
      },
    };
  };
  const ping = (name: string) =>
    stack.call("POST", `/v1/tools/${encodeURIComponent(`${name}__ping`)}/call`, { arguments: {} });

  beforeAll(async () => {
    const config = await createTestConfig();
    const dev = await devEnv(config);
    const { PORT: _port, ADMIN_TOKEN: _admin, ...aws } = dev.env;
    env = {
      ...process.env,
      ...aws,
      RUNNER_TOKEN: token,
      RUNNER_LEASE_SECONDS: String(LEASE_SECONDS),
      RUNNER_MAX_CHILDREN: String(SERVERS),
      RUNNER_UID_BASE: String(testUidBase()),
      RUNNER_UID_COUNT: "600",
      RUNNER_UID_SLICE: String(2 * SERVERS),
      RUNNER_TEMP_DIR: tempBase,
    };
    runners = await startFleet(3, { env });
    store = createStore(config);
    stack = await startStack({
      aws: config,
      runnerAt: new RunnerDirectory(store.fleet, token, { refreshMs: 250 }),
      // The runners' own default (under their RUNNER_TEMP_DIR), which they share on this host.
      worktreeBase,
      retryDelaySeconds: 1,
      maxRetryDelaySeconds: 2,
    });
    watcher = setInterval(() => {
      for (const pids of childrenByMarker(tag).values()) mostChildren = Math.max(mostChildren, pids.length);
    }, 100);
  }, 120_000);

  afterAll(async () => {
    clearInterval(watcher);
    await stack?.stop();
    await Promise.all(runners.map((runner) => runner.kill()));
    rmSync(tempBase, { recursive: true, force: true });
  }, 60_000);

  it("spreads 60 stdio servers over all three runners, one child each, no runner holding more than half", async () => {
    const stored = await stack.call("PUT", `/v1/secrets/${secret}`, {
      values: { TOKEN: `sentinel-${randomUUID()}` },
    });
    expect(stored.status).toBe(200);
    for (let i = 0; i < SERVERS; i++) {
      const name = `${tag}${i}`;
      const marker = `${tag}${i}`;
      const id = await createServer(stack, {
        name,
        command: process.execPath,
        args: [TINY_STDIO, marker],
        secretRef: secret,
      });
      servers.push({ id, name, marker });
    }
    await Promise.all(servers.map(({ id }) => reaches(stack, id, "connected", 60_000)));

    const owners = await Promise.all(servers.map(({ id }) => ownerOf(id)));
    const held = new Map<string, number>();
    for (const owner of owners) held.set(String(owner), (held.get(String(owner)) ?? 0) + 1);
    expect([...held.keys()].sort()).toEqual(runners.map((runner) => runner.id).sort());
    for (const count of held.values()) expect(count).toBeLessThanOrEqual(SERVERS / 2);
    const children = childrenByMarker(tag);
    expect(children.size).toBe(SERVERS);
    for (const pids of children.values()) expect(pids).toHaveLength(1);
    // Each child is its owner's: the runner that holds the lease lists the instance, no other does.
    const listed = await Promise.all(
      runners.map(async (runner) => {
        const response = await fetch(`${runner.url}/servers`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const body = (await response.json()) as { instances: Array<{ serverId: string }> };
        return body.instances.map((instance) => [instance.serverId, runner.id] as const);
      }),
    );
    const listedBy = new Map(listed.flat());
    expect(listedBy.size).toBe(SERVERS);
    for (const [i, { id }] of servers.entries()) expect(listedBy.get(id)).toBe(owners[i]);
    console.log(`[fleet] ${SERVERS} servers over 3 runners: ${[...held.values()].join(", ")}`);
  }, 120_000);

  it("a runner killed under load: its servers serve again within 20 s, the others' calls never fail, and what it left is swept", async () => {
    const [victim] = runners as [FleetProcess];
    // Its directory holds a secret file per child (the sealed env, in the clear for the child to read).
    const [victimDir] = dirsOf(victim.pid);
    expect(victimDir).toBeDefined();
    const secretFiles = (dir: string): string[] =>
      readdirSync(join(tempBase, dir), { recursive: true, encoding: "utf8" }).filter((path) =>
        /secret-[^/]*$/.test(path),
      );
    expect(secretFiles(victimDir as string).length).toBeGreaterThan(0);
    const owners = await Promise.all(
      servers.map(async (server) => ({ server, owner: await ownerOf(server.id) })),
    );
    const lost = owners.filter(({ owner }) => owner === victim.id).map(({ server }) => server);
    const kept = owners.filter(({ owner }) => owner !== victim.id).map(({ server }) => server);
    expect(lost.length).toBeGreaterThan(0);

    // Steady load on the other runners' servers until every lost server answers again.
    const load = steadyLoad(kept);

    /** What calls of the lost servers got before they were served again, and which servers failed one. */
    const gapCodes = new Set<string>();
    const failedOn = new Set<string>();
    // The statuses a few of its servers show meanwhile: state, and lastError when there is one.
    const watched = lost.slice(0, 3);
    const seen = new Map<string, string[]>(watched.map(({ id }) => [id, []]));
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const { id } of watched) {
          const status = await store.statuses.get(id);
          const shown = `${status?.state}: ${status?.lastError ?? ""}`;
          const states = seen.get(id) as string[];
          if (states.at(-1) !== shown) states.push(shown);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // Calls in flight on the victim when it dies (on warm sessions): each reached its child, so none is
    // made again elsewhere.
    const slowOnes = lost.slice(0, 3);
    for (const response of await Promise.all(slowOnes.map(({ name }) => ping(name))))
      expect(response.status).toBe(200);
    const inFlight = slowOnes.map(({ name }) => ({
      name,
      answer: stack.call("POST", `/v1/tools/${encodeURIComponent(`${name}__slow`)}/call`, {
        arguments: { ms: 10_000 },
      }),
    }));
    // Time to reach the runner; and the runner has answered a ping on each of their servers since they
    // were sent (on the same warm sessions): it is taking their servers' calls, theirs among them.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const response of await Promise.all(slowOnes.map(({ name }) => ping(name))))
      expect(response.status).toBe(200);
    const killedAt = Date.now();
    await victim.kill();
    /** Each lost server's answers as they changed: `<ms after the kill>:<ok or code>`. */
    const timeline = new Map<string, string[]>();
    const recovered = await Promise.all(
      lost.map(async ({ name }) => {
        await waitFor(
          () => ping(name),
          (response) => {
            const line = timeline.get(name) ?? [];
            timeline.set(name, line);
            const code = response.status === 200 ? "ok" : String(response.body?.code);
            if (!line.at(-1)?.endsWith(code)) line.push(`${Date.now() - killedAt}:${code}`);
            if (response.status !== 200) {
              gapCodes.add(response.body?.code);
              failedOn.add(name);
            }
            return response.status === 200;
          },
          { timeoutMs: 20_000, intervalMs: 200 },
        ).catch(() => undefined); // not served in time: the bound below fails, after the timeline is shown
        return Date.now() - killedAt;
      }),
    );
    const { served, failures } = await load.stop();
    // What each lost server's calls got, by ms after the kill: shown when one came back too late.
    if (Math.max(...recovered) >= 20_000)
      for (const [name, line] of timeline) console.log(`[fleet] ${name} after the kill: ${line.join(" ")}`);

    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    // A call the dead runner had taken fails, soon, as its runner lost: retryable, not a timeout.
    for (const { name, answer } of inFlight) {
      const response = await answer;
      expect(response.status, name).toBe(503);
      expect(response.body, name).toMatchObject({ code: "upstream.runner_lost", retryable: true });
      failedOn.add(name);
    }
    // A call made after the death is served on another runner, or — while the dead one's registration
    // has not lapsed — fails the same way, or finds the server unavailable while it moves. How many fail
    // is timing: none do once that registration lapsed before they came.
    for (const code of gapCodes) expect(["upstream.runner_lost", "server.unavailable"]).toContain(code);
    expect(Math.max(...recovered)).toBeLessThan(20_000);
    expect(mostChildren).toBe(1);
    // The lost servers are the survivors' now, with one child each; the dead runner's children are gone.
    for (const { id } of lost) expect([runners[1]?.id, runners[2]?.id]).toContain(await ownerOf(id));
    const children = childrenByMarker(tag);
    for (const { marker } of servers) expect(children.get(marker)).toHaveLength(1);
    // Their statuses show the blip and recover without anyone: connecting (moving to another runner),
    // lastError saying the runner was lost — never failed — then connected.
    await Promise.all(lost.map(({ id }) => reaches(stack, id, "connected", 20_000)));
    watching = false;
    await watch;
    // Each whose call failed was recorded as moving: its status says the runner was lost (lastError
    // outlives the recovery), and those watched never showed `failed` on the way.
    expect(failedOn.size).toBeGreaterThan(0);
    for (const { id, name } of lost.filter(({ name }) => failedOn.has(name)))
      expect((await store.statuses.get(id))?.lastError, name).toBe(RUNNER_LOST);
    for (const [id, states] of seen) {
      expect(
        states.filter((state) => state.startsWith("failed")),
        id,
      ).toEqual([]);
      for (const [i, state] of states.entries())
        if (state.endsWith(RUNNER_LOST) && !states.slice(0, i).some((before) => before.endsWith(RUNNER_LOST)))
          expect(state, id).toBe(`connecting: ${RUNNER_LOST}`);
      expect(states.at(-1), id).toMatch(/^connected/);
    }
    // The successors swept what it left: its directory, with every secret file in it.
    await waitFor(
      async () => dirsOf(victim.pid),
      (left) => left.length === 0,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    for (const runner of runners.slice(1)) expect(dirsOf(runner.pid)).toHaveLength(1);
    console.log(
      `[fleet] SIGKILL: ${lost.length} servers served again within ${Math.max(...recovered)} ms; ${served} calls on the others, none failed`,
    );
  }, 90_000);

  it("a runner stopped with SIGTERM under load: calls in flight on it finish, no call fails, its instances are handed back", async () => {
    const leaving = runners[1] as FleetProcess;
    const theirs = [];
    for (const server of servers) if ((await ownerOf(server.id)) === leaving.id) theirs.push(server);
    expect(theirs.length).toBeGreaterThan(0);

    // Steady load on every server (the leaving runner's too), and slow calls in flight on its servers.
    const load = steadyLoad(servers);
    const slow = theirs.slice(0, 5).map(({ name }) =>
      stack.call("POST", `/v1/tools/${encodeURIComponent(`${name}__slow`)}/call`, {
        arguments: { ms: 2_000 },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // they reached the runner

    const stoppedAt = Date.now();
    await leaving.stop();
    const stopMs = Date.now() - stoppedAt;
    // Every slow call ended with its answer: the drain let them finish (within RUNNER_DRAIN_SECONDS).
    for (const response of await Promise.all(slow)) {
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body)).toContain("slow done");
    }
    expect(stopMs).toBeGreaterThanOrEqual(1_000);
    // The load goes on a while once it left: its servers open where they are placed now.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const { served, failures } = await load.stop();
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    expect(await store.fleet.leasesOf(leaving.id)).toEqual([]);
    expect((await store.fleet.runners()).map((runner) => runner.id)).not.toContain(leaving.id);
    for (const { name } of theirs) expect((await ping(name)).status).toBe(200);
    expect(mostChildren).toBe(1);
    console.log(
      `[fleet] SIGTERM: stopped in ${stopMs} ms with ${slow.length} slow calls in flight; ${served} calls under load, none failed`,
    );
  }, 90_000);

  it("a fourth runner joining moves nothing already placed", async () => {
    const before = await Promise.all(servers.map(({ id }) => ownerOf(id)));
    const joined = await startFleetProcess({ env });
    runners.push(joined);
    const after = await Promise.all(servers.map(({ id }) => ownerOf(id)));
    expect(after).toEqual(before);
    expect(mostChildren).toBe(1);
  }, 90_000);

  it("a thread's instance moves with its worktree, on storage the runners share, when its runner dies", async () => {
    const thread = `thread-${tag}`;
    const name = `${tag}worktree`;
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO, "{{worktree_root}}"],
      scope: "thread",
    });
    await reaches(stack, id, "connected", 30_000);
    const worktree = join(worktreeBase, `wt-${tag}`);
    mkdirSync(worktree, { recursive: true, mode: 0o755 });
    const started = await stack.call("POST", `/v1/threads/${thread}/servers/${id}`, {
      worktreeRoot: worktree,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const pidOf = async () => {
      const response = await stack.call("POST", `/v1/tools/${encodeURIComponent(`${name}__pid`)}/call`, {
        arguments: {},
        thread,
      });
      return response.status === 200 ? Number(JSON.stringify(response.body).match(/"text":"(\d+)"/)?.[1]) : 0;
    };
    const first = await pidOf();
    expect(first).toBeGreaterThan(0);
    const key = `${id}#${thread}`;
    const ownerId = await ownerOf(key);
    const dying = runners.find((runner) => runner.id === ownerId) as FleetProcess;
    expect(dying).toBeDefined();

    await dying.kill();
    const moved = await waitFor(pidOf, (pid) => pid > 0 && pid !== first, {
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    // Another runner serves it now, in the same worktree: the child's working directory is it.
    expect(await ownerOf(key)).not.toBe(dying.id);
    expect(readlinkSync(`/proc/${moved}/cwd`)).toBe(realpathSync(worktree));
  }, 60_000);
});
