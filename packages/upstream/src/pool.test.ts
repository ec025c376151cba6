import { describe, expect, it } from "vitest";
import { SessionPool } from "./pool";
import type { UpstreamSession } from "./session";

/** A stand-in session that records its close. */
function fakeSession() {
  const state = { closed: false };
  const session = {
    client: {},
    close: async () => {
      state.closed = true;
    },
  } as unknown as UpstreamSession;
  return { session, state };
}

describe("SessionPool", () => {
  it("releases a thread's sessions by its URI-encoded id, as the gateway keys them", async () => {
    const pool = new SessionPool();
    const thread = fakeSession();
    const other = fakeSession();
    await pool.use(
      "s1#@user%3Aada#user%3Aada%2Ft1",
      1,
      async () => thread.session,
      async () => undefined,
    );
    await pool.use(
      "s1#@user%3Aada",
      1,
      async () => other.session,
      async () => undefined,
    );

    expect(pool.releaseThread("user:ada/t1")).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(thread.state.closed).toBe(true);
    expect(other.state.closed).toBe(false);
    pool.close();
  });

  it("a newer generation's session leaves calls on the old one to finish there, then closes it", async () => {
    const pool = new SessionPool();
    const old = fakeSession();
    const next = fakeSession();
    let finish = () => {};
    const inFlight = pool.use(
      "s1",
      1,
      async () => old.session,
      async (pooled) => {
        await new Promise<void>((resolve) => {
          finish = resolve;
        });
        return pooled.broken.aborted;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 0));

    const answered = await pool.use(
      "s1",
      2,
      async () => next.session,
      async (pooled) => pooled.session,
    );
    expect(answered).toBe(next.session);
    expect(old.state.closed).toBe(false);

    finish();
    expect(await inFlight).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(old.state.closed).toBe(true);
    expect(next.state.closed).toBe(false);
    pool.close();
  });

  it("an idle session of an older generation is closed at once", async () => {
    const pool = new SessionPool();
    const old = fakeSession();
    await pool.use(
      "s1",
      1,
      async () => old.session,
      async () => undefined,
    );
    await pool.use(
      "s1",
      2,
      async () => fakeSession().session,
      async () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(old.state.closed).toBe(true);
    pool.close();
  });

  it("a request naming an older generation reuses a newer one's session, never swapping back", async () => {
    const pool = new SessionPool();
    const older = fakeSession();
    const newer = fakeSession();
    const opened: string[] = [];
    const open = (name: string, session: UpstreamSession) => async () => {
      opened.push(name);
      return session;
    };
    const using = (generation: number, session: UpstreamSession, name: string) =>
      pool.use("s1", generation, open(name, session), async (pooled) => pooled.session);

    await using(1, older.session, "older");
    expect(await using(2, newer.session, "newer")).toBe(newer.session);
    // A snapshot up to 2 s old still names generation 1.
    expect(await using(1, fakeSession().session, "older again")).toBe(newer.session);
    expect(await using(2, fakeSession().session, "newer again")).toBe(newer.session);

    expect(opened).toEqual(["older", "newer"]);
    expect(newer.state.closed).toBe(false);
    pool.close();
  });

  it("a touched session does not idle out; one no longer touched does, and none is touched once gone", async () => {
    const pool = new SessionPool(300);
    const kept = fakeSession();
    await pool.use(
      "s1",
      2,
      async () => kept.session,
      async () => undefined,
    );
    expect(pool.touch("s1", 3)).toBe(false); // a newer generation than the session's is not it
    const until = Date.now() + 750;
    while (Date.now() < until) {
      expect(pool.touch("s1", 2)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(kept.state.closed).toBe(false);
    const deadline = Date.now() + 3_000;
    while (!kept.state.closed && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(kept.state.closed).toBe(true);
    expect(pool.touch("s1", 2)).toBe(false);
    pool.close();
  });

  it("hands out quiet sessions to check: not one in use or used lately, the longest unchecked first, up to the limit", async () => {
    const pool = new SessionPool();
    const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (const key of ["a", "b", "c"])
      await pool.use(
        key,
        1,
        async () => fakeSession().session,
        async () => undefined,
      );
    let release = () => {};
    const busy = pool.use(
      "d",
      1,
      async () => fakeSession().session,
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    await at(30);
    await pool.use(
      "c",
      1,
      async () => fakeSession().session,
      async () => undefined,
    ); // used just now

    expect(pool.quiet(20, 10).map(({ serverKey }) => serverKey)).toEqual(["a", "b"]);
    // Checked just now: not handed out again until they are quiet as long again.
    expect(pool.quiet(20, 10)).toEqual([]);
    await at(30);
    expect(pool.quiet(20, 1).map(({ serverKey }) => serverKey)).toHaveLength(1);
    release();
    await busy;
    pool.close();
  });

  it("tells onDisconnect of the server whose session lost its connection, once it is out of the pool", async () => {
    const pool = new SessionPool();
    const lost = fakeSession();
    await pool.use(
      "s1",
      1,
      async () => lost.session,
      async () => undefined,
    );
    const told: Array<[string, number]> = [];
    pool.onDisconnect = (serverKey) => told.push([serverKey, pool.size]);
    const client = lost.session.client as { onerror?: (error: Error) => void };
    client.onerror?.(new Error("an unrelated protocol error"));
    expect(told).toEqual([]);
    client.onerror?.(new Error("SSE stream disconnected: TypeError: terminated"));
    expect(told).toEqual([["s1", 0]]);
    pool.close();
  });

  it("hands out only the keys asked for, counts a touch as no use, and tells when a call took the session meanwhile", async () => {
    const pool = new SessionPool();
    const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (const key of ["s1", "s1#@key%3Aa", "s2"])
      await pool.use(
        key,
        1,
        async () => fakeSession().session,
        async () => undefined,
      );
    await at(30);
    pool.touch("s2", 1); // kept warm (a listener), not used

    const due = pool.quiet(20, 10, (key) => !key.includes("#"));
    expect(due.map(({ serverKey }) => serverKey).sort()).toEqual(["s1", "s2"]);
    const s1 = due.find(({ serverKey }) => serverKey === "s1");
    expect(s1?.stillQuiet()).toBe(true);
    await pool.use(
      "s1",
      1,
      async () => fakeSession().session,
      async () => undefined,
    );
    expect(s1?.stillQuiet()).toBe(false);
    pool.close();
  });
});
