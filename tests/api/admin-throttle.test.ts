/**
 * Admin-token guessing is throttled per source: after 20 wrong secrets in a minute (bearer tokens on
 * the REST API or the MCP endpoints, admin tokens on the console's sign-in) a source is answered 429
 * `rate_limited` with Retry-After — whatever it sends next, the right token too — while another source
 * signs in and calls with the right token throughout. Requests with no token at all are not guesses.
 * Sources are loopback addresses (127.0.0.x) on a real listener.
 */
import { type Listener, listen } from "@mcpgw/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../mcp/helpers";
import { createTestApp, TEST_ADMIN_TOKEN } from "../support/app";

const LIMIT = 20;

describe("admin-token failures are throttled per source", () => {
  let api: Listener;
  beforeAll(async () => {
    const { app } = await createTestApp({ console: true });
    api = await listen(app, 0);
  });
  afterAll(() => api?.close());

  const get = (path: string, from: string, token?: string) =>
    rawRequest(`${api.url}${path}`, {
      localAddress: from,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const signIn = (from: string, token: string) =>
    rawRequest(`${api.url}/console/session`, { localAddress: from, body: { token } });

  it("wrong bearer tokens: 429 with Retry-After after 20, even for the right token; another source is served", async () => {
    const attacker = "127.0.0.2";
    const admin = "127.0.0.3";
    for (let i = 0; i < LIMIT; i++) {
      const path = i % 2 ? "/v1/servers" : "/mcp";
      expect((await get(path, attacker, `guess-${i}`)).status).toBe(401);
      expect((await get("/v1/servers", admin, TEST_ADMIN_TOKEN)).status).toBe(200);
    }
    const refused = await get("/v1/servers", attacker, "guess-more");
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "rate_limited", status: 429 });
    const wait = Number(refused.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await get("/v1/servers", attacker, TEST_ADMIN_TOKEN)).status).toBe(429);
    expect((await get("/mcp", attacker, TEST_ADMIN_TOKEN)).status).toBe(429);
    expect((await signIn(attacker, TEST_ADMIN_TOKEN)).status).toBe(429);

    expect((await get("/v1/servers", admin, TEST_ADMIN_TOKEN)).status).toBe(200);
    expect((await signIn(admin, TEST_ADMIN_TOKEN)).status).toBe(201);
    expect((await get("/v1/servers", admin, "one-typo")).status).toBe(401);
    // Requests with no token are not guesses: never throttled.
    for (let i = 0; i < LIMIT * 2; i++) expect((await get("/v1/servers", "127.0.0.6")).status).toBe(401);
    expect((await get("/v1/servers", "127.0.0.6", TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it("wrong console sign-in tokens: 429 after 20; the right token from elsewhere signs in", async () => {
    const attacker = "127.0.0.4";
    for (let i = 0; i < LIMIT; i++) expect((await signIn(attacker, `guess-${i}`)).status).toBe(401);
    const refused = await signIn(attacker, "guess-more");
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "rate_limited" });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await signIn(attacker, TEST_ADMIN_TOKEN)).status).toBe(429);
    expect((await signIn("127.0.0.5", TEST_ADMIN_TOKEN)).status).toBe(201);
  });
});
