import { placeOn } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import {
  type FleetRunner,
  isMoving,
  RUNNER_LOST,
  RunnerDirectory,
  runnerFor,
  runnerLoss,
} from "./runner-fleet";

const NOW = 1_000_000;

function fleetOf(runners: FleetRunner[], leases: Record<string, string> = {}) {
  let reads = 0;
  return {
    view: {
      async runners() {
        reads++;
        return runners;
      },
      async lease(key: string) {
        const owner = leases[key];
        return owner ? { owner } : undefined;
      },
    },
    reads: () => reads,
  };
}

const runner = (id: string, extra: Partial<FleetRunner> = {}): FleetRunner => ({
  id,
  url: `http://127.0.0.1:1000${id.length}/${id}`,
  free: 10,
  aliveUntil: NOW + 10_000,
  draining: false,
  ...extra,
});

describe("RunnerDirectory", () => {
  it("sends an instance to its lease's live holder, else to the runner placement picks", async () => {
    const runners = [runner("a"), runner("bb"), runner("ccc")];
    const { view } = fleetOf(runners, { held: "bb" });
    const directory = new RunnerDirectory(view, "token", { now: () => NOW });

    expect(await directory.endpointFor("held")).toEqual({ url: runners[1]?.url, token: "token" });
    const placed = placeOn(
      "free",
      runners.map((r) => ({ id: r.id, weight: r.free })),
    );
    expect((await directory.endpointFor("free"))?.url).toBe(runners.find((r) => r.id === placed)?.url);
  });

  it("never places on a lapsed or draining runner; a lapsed holder's instance goes elsewhere", async () => {
    const { view } = fleetOf(
      [runner("lapsed", { aliveUntil: NOW - 1 }), runner("draining", { draining: true }), runner("ok")],
      { held: "lapsed" },
    );
    const directory = new RunnerDirectory(view, "token", { now: () => NOW });

    for (const key of ["held", "a", "b", "c", "d"])
      expect((await directory.endpointFor(key))?.url).toMatch(/\/ok$/);
    expect((await directory.everyEndpoint()).map((e) => e.url)).toEqual([
      expect.stringMatching(/\/draining$/),
      expect.stringMatching(/\/ok$/),
    ]);
  });

  it("reads the registry at most once per refresh interval", async () => {
    const clock = { now: NOW };
    const fleet = fleetOf([runner("a")]);
    const directory = new RunnerDirectory(fleet.view, "token", { refreshMs: 1_000, now: () => clock.now });
    await directory.endpointFor("x");
    await directory.endpointFor("y");
    expect(fleet.reads()).toBe(1);
    clock.now += 1_000;
    await directory.endpointFor("z");
    expect(fleet.reads()).toBe(2);
  });

  it("reads the registry again after a refusal; a lookup after one is marked followed", async () => {
    const fleet = fleetOf([runner("a")]);
    const directory = new RunnerDirectory(fleet.view, "token", { refreshMs: 60_000, now: () => NOW });
    expect(await runnerFor(directory, "x")).not.toHaveProperty("followed");
    directory.refresh();
    expect(await runnerFor(directory, "x", true)).toMatchObject({ followed: true });
    expect(fleet.reads()).toBe(2);
  });

  it("leaves a runner that refused a connection out until it heartbeats again", async () => {
    const clock = { now: NOW };
    const runners = [runner("a"), runner("bb")];
    const directory = new RunnerDirectory(fleetOf(runners).view, "token", {
      refreshMs: 0,
      now: () => clock.now,
    });
    await directory.live();

    directory.markDown(`${runners[0]?.url}/servers/s/mcp`);
    expect((await directory.live()).map((r) => r.id)).toEqual(["bb"]);
    runners[0] = { ...(runners[0] as FleetRunner), aliveUntil: NOW + 20_000 }; // a newer heartbeat
    expect((await directory.live()).map((r) => r.id)).toEqual(["a", "bb"]);
  });

  it("when every runner is full, still picks one (it answers its cap); none when no runner is alive", async () => {
    const full = new RunnerDirectory(fleetOf([runner("a", { free: 0 })]).view, "t", { now: () => NOW });
    expect(await full.endpointFor("x")).toBeDefined();
    const empty = new RunnerDirectory(fleetOf([]).view, "t", { now: () => NOW });
    expect(await empty.endpointFor("x")).toBeUndefined();
    expect(await runnerFor(empty, "x")).toBeUndefined();
  });
});

describe("runnerLoss", () => {
  const verdict = { reason: "unreachable", error: "fetch failed", retryable: true, scope: "server" } as const;

  it("names a fleet stdio server's unreachability as its runner lost, retried once the runner lapsed", async () => {
    const directory = new RunnerDirectory(fleetOf([runner("a", { aliveUntil: NOW + 2_500 })]).view, "t", {
      now: () => NOW,
    });
    await directory.live();
    expect(await runnerLoss(directory, "stdio", verdict)).toEqual({
      verdict: { ...verdict, error: RUNNER_LOST },
      moving: true,
      retry: { retryDelaySeconds: 4, maxRetryDelaySeconds: 4 },
    });
  });

  it("waits for the runner that refused a connection to lapse, not for every runner", async () => {
    const runners = [runner("a", { aliveUntil: NOW + 1_200 }), runner("bb", { aliveUntil: NOW + 14_000 })];
    const directory = new RunnerDirectory(fleetOf(runners).view, "t", { now: () => NOW });
    await directory.live();
    expect(await directory.failoverSeconds()).toBe(15);
    directory.markDown(`${runners[0]?.url}/servers/s/mcp`);
    expect(await directory.failoverSeconds()).toBe(3);
  });

  it("reads the registry afresh: the lost runner may have heartbeated since the read it was placed by", async () => {
    const runners = [runner("a", { aliveUntil: NOW + 1_200 }), runner("bb", { aliveUntil: NOW + 1_500 })];
    const fleet = fleetOf(runners);
    const directory = new RunnerDirectory(fleet.view, "t", { now: () => NOW, refreshMs: 60_000 });
    await directory.live();
    // Its heartbeat after that read pushed it on; it died then, and refused the next connection.
    runners[0] = { ...(runners[0] as FleetRunner), aliveUntil: NOW + 2_900 };
    directory.markDown(`${runners[0].url}/servers/s/mcp`);
    const reads = fleet.reads();
    expect(await directory.failoverSeconds()).toBe(4);
    expect(fleet.reads()).toBe(reads + 1);
  });

  it("times the retry by the latest of the runners lost, each as it is registered now", async () => {
    const runners = [
      runner("a", { aliveUntil: NOW + 1_200 }),
      runner("bb", { aliveUntil: NOW + 1_500 }),
      runner("ccc", { aliveUntil: NOW + 9_000 }),
    ];
    const fleet = fleetOf(runners);
    const directory = new RunnerDirectory(fleet.view, "t", { now: () => NOW, refreshMs: 60_000 });
    await directory.live();
    directory.markDown(`${runners[0]?.url}/servers/s/mcp`);
    directory.markDown(`${runners[1]?.url}/servers/s/mcp`);
    // The second heartbeated after the read it was marked down by, then died.
    runners[1] = { ...(runners[1] as FleetRunner), aliveUntil: NOW + 3_500 };
    expect(await directory.failoverSeconds()).toBe(5);
  });

  it("is nothing for an HTTP server, a single runner, or another failure", async () => {
    const directory = new RunnerDirectory(fleetOf([]).view, "t");
    expect(await runnerLoss(directory, "http", verdict)).toBeUndefined();
    expect(await runnerLoss({ url: "http://r", token: "t" }, "stdio", verdict)).toBeUndefined();
    expect(await runnerLoss(directory, "stdio", { ...verdict, reason: "not_responding" })).toBeUndefined();
  });
});

describe("isMoving", () => {
  const at = (ms: number) => new Date(NOW + ms).toISOString();
  const moving = {
    state: "connecting",
    lastError: RUNNER_LOST,
    lastSuccessfulConnectionAt: at(-60_000),
    lastConnectionFailureAt: at(-5_000),
    nextAttemptAt: at(-1_000),
    supersededAt: at(-120_000),
  };

  it("is a server of this generation that had connected, its runner lost and lapsed by now", () => {
    expect(isMoving(moving, NOW)).toBe(true);
    expect(isMoving({ ...moving, supersededAt: null }, NOW)).toBe(true);
  });

  it("is not yet while the lost runner may still hold its lease (its retry's time to come)", () => {
    expect(isMoving({ ...moving, nextAttemptAt: at(2_000) }, NOW)).toBe(false);
    expect(isMoving({ ...moving, nextAttemptAt: null }, NOW)).toBe(false);
  });

  it("is not a server failed by it, connecting for another reason, or that never connected", () => {
    expect(isMoving({ ...moving, state: "failed" }, NOW)).toBe(false);
    expect(isMoving({ ...moving, lastError: "fetch failed" }, NOW)).toBe(false);
    expect(isMoving({ ...moving, lastSuccessfulConnectionAt: null }, NOW)).toBe(false);
  });

  it("is not a server edited since: its new generation has not connected, the catalogue is the old one's", () => {
    // Moved once, then edited: connecting its new generation, lastError left from the move.
    expect(isMoving({ ...moving, supersededAt: at(-2_000) }, NOW)).toBe(false);
    // Connected again after the move: the old lastError outlives a success, not its failure.
    expect(isMoving({ ...moving, lastSuccessfulConnectionAt: at(-3_000) }, NOW)).toBe(false);
  });
});
