import { describe, expect, it } from "vitest";
import { CallerGate } from "./caller-gate";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("CallerGate", () => {
  it("callers that cannot be asked go together; the sole caller is known only while one has requests in flight", async () => {
    const gate = new CallerGate();
    expect(gate.soleCaller).toBeUndefined();
    const a = await gate.enter("key:a", false);
    expect(gate.soleCaller).toBe("key:a");
    const b = await gate.enter("key:b", false);
    expect(gate.soleCaller).toBeUndefined();
    a();
    expect(gate.soleCaller).toBe("key:b");
    b();
    expect(gate.soleCaller).toBeUndefined();
  });

  it("until the child asks anything, callers that can be asked overlap too (nothing waits)", async () => {
    const gate = new CallerGate();
    const a = await gate.enter("key:a", true);
    const b = await gate.enter("key:b", true);
    expect(gate.soleCaller).toBeUndefined();
    a();
    b();
    gate.childAsks();
    const again = await gate.enter("key:a", true);
    let admitted = false;
    const waiting = gate.enter("key:b", false).then((release) => {
      admitted = true;
      return release;
    });
    await tick();
    expect(admitted).toBe(false);
    again();
    (await waiting)();
  });

  it("an asking request waits for other callers, and others wait for it, first come first served", async () => {
    const gate = new CallerGate();
    gate.childAsks();
    const b = await gate.enter("key:b", false);
    const admitted: string[] = [];
    const asking = gate.enter("key:a", true).then((release) => {
      admitted.push("a");
      return release;
    });
    const later = gate.enter("key:c", false).then((release) => {
      admitted.push("c");
      return release;
    });
    await tick();
    expect(admitted).toEqual([]);
    b();
    const a = await asking;
    expect(admitted).toEqual(["a"]);
    // The caller's next request queues behind c's, which came first.
    const more = gate.enter("key:a", true).then((release) => {
      admitted.push("a again");
      return release;
    });
    await tick();
    expect(admitted).toEqual(["a"]);
    a();
    (await later)();
    (await more)();
    expect(admitted).toEqual(["a", "c", "a again"]);
  });

  it("a wait is bounded: past it the request goes on, and no caller is sole", async () => {
    const gate = new CallerGate(20);
    gate.childAsks();
    const a = await gate.enter("key:a", true);
    const b = await gate.enter("key:b", false);
    expect(gate.soleCaller).toBeUndefined();
    a();
    b();
  });

  it("a request whose caller left stops waiting; a pass never waits but counts", async () => {
    const gate = new CallerGate();
    gate.childAsks();
    const a = await gate.enter("key:a", true);
    const leaving = new AbortController();
    const waiting = gate.enter("key:b", false, leaving.signal);
    leaving.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    const probe = gate.pass("probe");
    expect(gate.soleCaller).toBeUndefined();
    probe();
    expect(gate.soleCaller).toBe("key:a");
    a();
  });
});
