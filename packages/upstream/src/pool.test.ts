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
  it("a newer version's session leaves calls on the old one to finish there, then closes it", async () => {
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

  it("an idle session of an older version is closed at once", async () => {
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
});
