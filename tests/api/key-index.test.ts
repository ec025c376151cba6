/**
 * Bearer keys are checked against an in-memory index of every live key hash, refreshed by one query
 * at most every KEY_CACHE_MS: a flood of random `mgw_` tokens costs no DynamoDB read per request;
 * a key created or revoked in this process counts at once; one revoked elsewhere stops working
 * within KEY_CACHE_MS; tokens never reach the logs.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { KEY_CACHE_MS } from "../../packages/api/src/auth";
import { countAwsCalls } from "../gateway/helpers";
import { createTestApp } from "../support/app";
import { waitFor } from "../support/stack";

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

const randomToken = () => `mgw_${randomBytes(32).toString("base64url")}`;

describe("key index", () => {
  let t: TestApp;
  let calls: ReturnType<typeof countAwsCalls>;

  let sources = 0;
  /**
   * A request with `token`, each from an address of its own (as a spread-out flood comes): one source's
   * wrong tokens are throttled after 20 a minute (see admin-throttle.test.ts), before any lookup.
   */
  const withToken = (token: string, path = "/v1/tools") => {
    const source = ++sources;
    const remoteAddress = `10.${(source >> 16) & 255}.${(source >> 8) & 255}.${source & 255}`;
    return t.app.request(
      path,
      { headers: { authorization: `Bearer ${token}` } },
      { incoming: { socket: { remoteAddress } } },
    );
  };

  async function createKey(name: string): Promise<{ id: string; key: string }> {
    const response = await t.call("POST", "/v1/keys", { name });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  }

  beforeAll(async () => {
    t = await createTestApp();
    calls = countAwsCalls(t.store.clients.ddb);
  });

  it("200 distinct random mgw_ tokens → all 401, for at most two DynamoDB reads in all", async () => {
    const tokens = Array.from({ length: 200 }, randomToken);
    calls.reset();
    const statuses: number[] = [];
    for (let start = 0; start < tokens.length; start += 20) {
      const batch = await Promise.all(tokens.slice(start, start + 20).map((token) => withToken(token)));
      statuses.push(...batch.map((response) => response.status));
    }
    expect(statuses).toEqual(tokens.map(() => 401));
    // One index query (two if the flood straddled a refresh), never a read per token.
    expect(calls.total, JSON.stringify(calls.byCommand)).toBeLessThanOrEqual(2);
    expect(Object.keys(calls.byCommand).every((command) => command === "QueryCommand")).toBe(true);
    // Junk without the prefix costs nothing at all.
    calls.reset();
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_MS + 100));
    for (const junk of ["nope", "Bearer-ish", "x".repeat(64)])
      expect((await withToken(junk)).status).toBe(401);
    expect(calls.total).toBe(0);
    // No token reaches the logs.
    const logs = t.logs.join("\n");
    for (const token of tokens) expect(logs).not.toContain(token);
  });

  it("a key created in this process works at once, even while the index is fresh", async () => {
    expect((await withToken(randomToken())).status).toBe(401); // the index is fresh now
    const created = await createKey("made here");
    expect((await withToken(created.key)).status).toBe(200);
  });

  it("a key revoked in this process is refused at once", async () => {
    const created = await createKey("revoked here");
    expect((await withToken(created.key)).status).toBe(200);
    expect((await t.call("DELETE", `/v1/keys/${created.id}`)).status).toBe(204);
    expect((await withToken(created.key)).status).toBe(401);
  });

  it(`a key revoked elsewhere is refused within ${KEY_CACHE_MS} ms, and the index refreshes once per window`, {
    timeout: 15_000,
  }, async () => {
    const created = await createKey("revoked elsewhere");
    expect((await withToken(created.key)).status).toBe(200);
    // Another process revokes it: straight in the table, unseen by this app's index.
    expect(await t.store.keys.revoke(created.id)).toBe(true);
    const revokedAt = Date.now();
    await waitFor(
      async () => (await withToken(created.key)).status,
      (status) => status === 401,
      { timeoutMs: KEY_CACHE_MS + 3_000, intervalMs: 50 },
    );
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(KEY_CACHE_MS + 500);

    // Within one window, any number of lookups share one refresh.
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_MS + 100));
    calls.reset();
    await Promise.all(Array.from({ length: 50 }, () => withToken(randomToken())));
    expect(calls.total).toBe(1);
  });
});
