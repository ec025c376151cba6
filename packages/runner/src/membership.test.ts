import type { RunnerFleet } from "@mcpgw/aws";
import { createMemoryRunnerFleet } from "@mcpgw/aws/memory";
import { AppError, createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { Membership } from "./membership";

const logger = createLogger({ level: "error", sink: () => undefined });

function member(
  fleet: RunnerFleet,
  id: string,
  clock: { now: number },
  lost: string[] = [],
  free: () => number = () => 3,
) {
  return new Membership({
    fleet,
    logger,
    id,
    url: () => `http://127.0.0.1:1/${id}`,
    capacity: 4,
    free,
    version: "test",
    leaseMs: 3_000,
    onLost: (key) => lost.push(key),
    now: () => clock.now,
  });
}

describe("Membership", () => {
  it("registers with its room; owns a free instance; a live other holder's instance is a not_owner naming it", async () => {
    const fleet = createMemoryRunnerFleet();
    const clock = { now: 1_000_000 };
    const a = member(fleet, "a", clock);
    const b = member(fleet, "b", clock);
    await a.join();
    await b.join();

    expect(await fleet.runners()).toContainEqual(expect.objectContaining({ id: "a", capacity: 4, free: 3 }));
    await a.own("s1");
    await a.own("s1"); // held: no second claim needed
    expect(a.leases).toEqual(["s1"]);
    const refusal = await b.own("s1").catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: "runner.not_owner", extra: { owner: { id: "a" } } });
    await a.leave();
    await b.leave();
  });

  it("full, it refuses a new instance while another runner has room, and says so in the registry first", async () => {
    const fleet = createMemoryRunnerFleet();
    const clock = { now: 1_000_000 };
    let room = 1;
    const a = member(fleet, "a", clock, [], () => room);
    await a.join();
    await a.own("held");

    room = 0; // its children (or its memory) reached the limit
    const full = a.own("new").catch((error: unknown) => error);
    // Alone in the fleet it still takes it: its own cap (making room, or refusing) decides.
    expect(await full).toBeUndefined();
    const b = member(fleet, "b", clock);
    await b.join();
    clock.now += 1_000; // its last look at the registry is a second old: it looks again
    const refusal = await a.own("newer").catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: "runner.not_owner", message: expect.stringMatching(/full/) });
    expect(refusal).not.toHaveProperty("extra.owner");
    expect(await fleet.lease("newer")).toBeUndefined();
    expect((await fleet.runners()).find((runner) => runner.id === "a")).toMatchObject({ free: 0 });
    await a.own("held"); // what it holds it still serves
    await b.own("newer");
    await a.leave();
    await b.leave();
  });

  it("full, it still takes a followed request, and serves a lease it holds in the table but lost track of", async () => {
    const base = createMemoryRunnerFleet();
    let announces = 0;
    const fleet: RunnerFleet = {
      ...base,
      announce: (runner) => {
        announces++;
        return base.announce(runner);
      },
    };
    const clock = { now: 1_000_000 };
    let room = 1;
    const a = member(fleet, "a", clock, [], () => room);
    const b = member(fleet, "b", clock);
    await a.join();
    await b.join();
    await a.own("mine");
    a.release("mine"); // given back here, but suppose the delete never landed: the table still says a
    await fleet.claim("mine", "a", clock.now);
    room = 0;

    await a.own("mine"); // its own lease in the table: served, not refused
    await a.own("asked-again", { followed: true }); // the caller was refused elsewhere already
    const before = announces;
    const refusals = await Promise.all(
      ["n1", "n2", "n3", "n4"].map((key) => a.own(key).catch((error: unknown) => error)),
    );
    for (const refusal of refusals) expect(refusal).toMatchObject({ code: "runner.not_owner" });
    expect(announces - before).toBe(1); // shown full once, not once per refusal
    await a.leave();
    await b.leave();
  });

  it("takes over the instance of a holder whose registration lapsed", async () => {
    const fleet = createMemoryRunnerFleet();
    const clock = { now: 1_000_000 };
    const a = member(fleet, "a", clock);
    await a.join();
    await a.own("s1");

    clock.now += 3_001; // a stopped beating; b joins now
    const b = member(fleet, "b", clock);
    await b.join();
    await b.own("s1");

    expect(await fleet.lease("s1")).toMatchObject({ owner: "b" });
    await expect(a.own("s1")).rejects.toMatchObject({ code: "runner.not_owner" }); // a's own lapsed too
    await a.leave();
    await b.leave();
  });

  it("a re-claim waits for its key's release under way: the lease it gets is not deleted after it", async () => {
    const fleet = createMemoryRunnerFleet();
    const slowFleet = {
      ...fleet,
      release: async (key: string, runnerId: string, version?: number) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return fleet.release(key, runnerId, version);
      },
    };
    const clock = { now: 1_000_000 };
    const a = member(slowFleet, "a", clock);
    await a.join();
    await a.own("s1");

    a.release("s1");
    await a.own("s1");

    expect(await fleet.lease("s1")).toMatchObject({ owner: "a" });
    await a.leave();
  });

  it("after a lapse of its own, gives up (ends) the instances another runner took meanwhile", async () => {
    const fleet = createMemoryRunnerFleet();
    const clock = { now: 1_000_000 };
    const lost: string[] = [];
    const a = member(fleet, "a", clock, lost);
    await a.join();
    await a.own("s1");
    await a.own("s2");
    clock.now += 10_000; // a was paused: its registration lapsed, and b took s1
    const b = member(fleet, "b", clock);
    await b.join();
    await b.own("s1");

    await a.drain(); // any announce after the lapse checks the leases again
    expect(lost).toEqual(["s1"]);
    expect(a.leases).toEqual(["s2"]);
    await a.leave();
    await b.leave();
  });

  it("draining: takes no new instance, keeps serving those it holds; leaving frees them and its registration", async () => {
    const fleet = createMemoryRunnerFleet();
    const clock = { now: 1_000_000 };
    const a = member(fleet, "a", clock);
    await a.join();
    await a.own("held");

    await a.drain();
    await a.own("held");
    await expect(a.own("new")).rejects.toMatchObject({ code: "runner.not_owner" });
    a.release("held");
    await a.leave();

    expect(await fleet.lease("held")).toBeUndefined();
    expect(await fleet.runners()).toEqual([]);
  });
});
