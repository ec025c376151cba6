/**
 * Connection lifecycle — failing upstreams, their reasons, and healing: closed port (`unreachable`, then
 * healed by the 15 s retry with no admin action), bearer demanded (`access_denied`, healed by a PATCH),
 * accepts TCP but never answers (`not_responding` within 15 s), HTTP 500 (`failed`), a stdio server
 * without a runner (`failed`, never stuck in `connecting`); and the health sweep: a connected upstream
 * that dies is marked `failed` and heals through the retry when it is back, an upstream that adds a tool
 * has it in the catalogue after the sweep that re-lists tools (once the listing is `MAX_LISTING_AGE_MS`
 * old; sweeps in between only check liveness), disabled servers are left alone.
 *
 * One file (one stack, tests concurrent): the slow cases mostly wait on the 15 s retry, and vitest runs
 * files one at a time on a 2-core machine, so waiting side by side keeps the folder's wall time down.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack, waitFor } from "../support/stack";
import { createServer, parkedPort, reaches, settled, statusReader, uniqueName } from "./helpers";

describe.concurrent("connection lifecycle: failures, reasons and healing", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  async function upstream(options: Parameters<typeof startUpstream>[0]): Promise<Upstream> {
    const started = await startUpstream(options);
    upstreams.push(started);
    return started;
  }

  it("closed port → failed/unreachable; the server comes up → connected on the retry, no admin action", async ({
    expect,
  }) => {
    const port = await parkedPort();
    const id = await createServer(stack, { name: uniqueName("closed"), url: `http://127.0.0.1:${port}/mcp` });

    const failed = await settled(stack, id, 10_000);
    expect(failed).toMatchObject({ state: "failed", reason: "unreachable", toolCount: 0 });
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.error).toBe(failed.lastError);
    expect(failed.lastConnectionFailureAt).toEqual(expect.any(String));
    expect(failed.lastSuccessfulConnectionAt).toBeNull();
    const failedAt = Date.now();

    const up = await upstream({ port });
    // Default retry delay is 15 s: allow it plus pickup and the probe itself.
    const connected = await reaches(stack, id, "connected", 25_000);
    const healedAfterMs = Date.now() - failedAt;
    expect(connected).toMatchObject({ state: "connected", reason: null, error: null, toolCount: 4 });
    // The last failure stays in the diagnostics after the recovery.
    expect(connected.lastConnectionFailureAt).toBe(failed.lastConnectionFailureAt);
    expect(connected.lastError).toBe(failed.lastError);
    expect(up.connections).toBeGreaterThan(0);
    // It was the delayed retry that healed it, not an immediate re-attempt.
    expect(healedAfterMs).toBeGreaterThan(10_000);
  });

  it("sweep: connected upstream stops → the sweep marks it failed; it comes back → connected via the retry", async ({
    expect,
  }) => {
    const port = await parkedPort(); // outside the ephemeral range: nobody else gets it while it is down
    const first = await upstream({ port });
    const id = await createServer(stack, { name: uniqueName("dies"), url: first.url });
    const connected = await settled(stack, id);
    expect(connected).toMatchObject({ state: "connected", toolCount: 4 });

    await first.close();
    expect(await stack.sweep()).toBeGreaterThanOrEqual(1);
    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed).toMatchObject({ reason: "unreachable", toolCount: 0 });
    expect(failed.lastError).toEqual(expect.any(String));
    // Diagnostics keep the last success next to the new failure.
    expect(failed.lastSuccessfulConnectionAt).toBe(connected.lastSuccessfulConnectionAt);
    expect(failed.lastConnectionFailureAt).toEqual(expect.any(String));

    const second = await upstream({ port });
    const healed = await reaches(stack, id, "connected", 25_000);
    expect(healed).toMatchObject({ reason: null, error: null, toolCount: 4 });
    expect(second.connections).toBeGreaterThan(0);
    expect(Date.parse(healed.lastSuccessfulConnectionAt ?? "")).toBeGreaterThan(
      Date.parse(connected.lastSuccessfulConnectionAt ?? ""),
    );
  });

  it("sweep: upstream adds a tool → after the sweep that re-lists tools the catalogue shows it", async ({
    expect,
  }) => {
    const up = await upstream({});
    // Pinning `auto`: the new tool is served once listed (under `approve` it waits for an admin).
    const id = await createServer(stack, { name: uniqueName("grows"), url: up.url, pinning: "auto" });
    const before = await settled(stack, id);
    expect(before).toMatchObject({ state: "connected", toolCount: 4 });
    const names = async () =>
      ((await stack.call("GET", `/v1/servers/${id}/tools`)).body.tools as Array<{ name: string }>)
        .map((t) => t.name)
        .sort();
    expect(await names()).not.toContain("added_tool");

    up.addTool("added_tool", "A tool added after the first probe");
    // No session holds a stream to it (nobody hears list_changed): the listing's age brings the change
    // (here every listing counts as old; the other servers of this stack are judged as ever).
    expect(await stack.sweep({ maxListingAgeMs: 0 })).toBeGreaterThanOrEqual(1);
    const after = await waitFor(names, (list) => list.includes("added_tool"), { timeoutMs: 10_000 });
    expect(after).toEqual(["add", "added_tool", "echo", "fail", "slow"]);
    const status = await statusReader(stack, id)();
    expect(status).toMatchObject({ state: "connected", toolCount: 5 });
    expect(Date.parse(status.lastSuccessfulConnectionAt ?? "")).toBeGreaterThan(
      Date.parse(before.lastSuccessfulConnectionAt ?? ""),
    );
  });

  it("sweep: leaves disabled servers alone", async ({ expect }) => {
    const up = await upstream({});
    const id = await createServer(stack, { name: uniqueName("off"), url: up.url, enabled: false });
    expect((await statusReader(stack, id)()).state).toBe("disabled");
    await stack.sweep();
    // Give the poller time to run anything the sweep may have enqueued for it (it should be nothing).
    await waitFor(
      async () => stack.logs.filter((l) => l.includes('"msg":"sweep enqueued probes"')).length,
      (n) => n > 0,
      { timeoutMs: 5_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await statusReader(stack, id)()).state).toBe("disabled");
    expect(up.requests).toBe(0);
  });

  it("bearer demanded → failed/access_denied; PATCH the header → connected; the token is never echoed", async ({
    expect,
  }) => {
    const token = `sk-live-${randomUUID()}`;
    const wrong = `sk-wrong-${randomUUID()}`;
    const up = await upstream({ requireBearer: token });
    const name = uniqueName("bearer");

    const created = await stack.call("POST", "/v1/servers", {
      name,
      url: up.url,
      headers: { Authorization: `Bearer ${wrong}`, "X-Trace": "lifecycle" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const denied = await settled(stack, id);
    expect(denied).toMatchObject({ state: "failed", reason: "access_denied", toolCount: 0 });
    // The SDK error text carries the upstream's body (not the status code): `{"error":"unauthorized"}`.
    expect(denied.lastError).toMatch(/unauthorized/i);
    expect(up.lastHeaders?.authorization).toBe(`Bearer ${wrong}`); // the header really was sent

    const patched = await stack.call("PATCH", `/v1/servers/${id}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.status.state).toBe("connecting");
    const connected = await reaches(stack, id, "connected");
    expect(connected).toMatchObject({ reason: null, error: null, toolCount: 4 });
    expect(up.lastHeaders?.authorization).toBe(`Bearer ${token}`);

    // Neither token appears in any response, status field or log line.
    const seen = JSON.stringify([
      created.body,
      denied,
      patched.body,
      connected,
      (await stack.call("GET", `/v1/servers/${id}`)).body,
      (await stack.call("GET", "/v1/servers")).body,
      (await stack.call("GET", `/v1/servers/${id}/tools`)).body,
    ]);
    for (const secret of [token, wrong]) {
      expect(seen).not.toContain(secret);
      expect(stack.logs.join("\n")).not.toContain(secret);
    }
    expect(created.body.headers).toEqual({ Authorization: "Bearer [SECRET]", "X-Trace": "[SECRET]" });
    // PATCHing `headers` replaces the map: the header left out is gone.
    expect(patched.body.headers).toEqual({ Authorization: "Bearer [SECRET]" });
  });

  it("scrubs header values out of error/lastError when the upstream echoes them", async ({ expect }) => {
    // The probe's error text includes the upstream's error body; a server reflecting the credential
    // there must not get it into the diagnostics.
    const secret = `sk-echo-${randomUUID()}`;
    const { createServer: createHttp } = await import("node:http");
    const echo = createHttp((req, res) => {
      req.resume();
      res
        .writeHead(403, { "content-type": "application/json" })
        .end(JSON.stringify({ error: `token ${req.headers.authorization} rejected` }));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", () => resolve()));
    try {
      const { port } = echo.address() as { port: number };
      const id = await createServer(stack, {
        name: uniqueName("echo"),
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { Authorization: `Bearer ${secret}` },
      });
      const denied = await settled(stack, id);
      expect(denied).toMatchObject({ state: "failed", reason: "access_denied" });
      expect(JSON.stringify(denied)).not.toContain(secret);
      expect(stack.logs.join("\n")).not.toContain(secret);
    } finally {
      await new Promise<void>((resolve) => {
        echo.close(() => resolve());
        echo.closeAllConnections();
      });
    }
  });

  it("accepts TCP and never answers → failed/not_responding within 15 s of the create", async ({
    expect,
  }) => {
    const up = await upstream({ hang: true });
    const started = Date.now();
    const id = await createServer(stack, { name: uniqueName("hang"), url: up.url });
    const status = await settled(stack, id, 17_000);
    const elapsedMs = Date.now() - started;
    expect(status).toMatchObject({ state: "failed", reason: "not_responding", toolCount: 0 });
    expect(status.lastError).toEqual(expect.any(String));
    expect(up.requests).toBeGreaterThan(0);
    expect(elapsedMs).toBeLessThanOrEqual(15_000 + 1_500);
  });

  it("upstream answers HTTP 500 → failed/failed", async ({ expect }) => {
    const up = await upstream({ failWith: 500 });
    const id = await createServer(stack, { name: uniqueName("err500"), url: up.url });
    const status = await settled(stack, id);
    expect(status).toMatchObject({ state: "failed", reason: "failed", toolCount: 0 });
    expect(status.lastError).toMatch(/injected failure 500/);
    expect(status.lastConnectionFailureAt).toEqual(expect.any(String));
  });

  it("stdio server with no runner configured → failed with a clear error, not connecting forever", async ({
    expect,
  }) => {
    const id = await createServer(stack, { name: uniqueName("stdio"), command: "node", args: ["server.js"] });
    const status = await settled(stack, id);
    expect(status).toMatchObject({ state: "failed", reason: "failed" });
    expect(status.lastError).toMatch(/runner/i);
  });
});
