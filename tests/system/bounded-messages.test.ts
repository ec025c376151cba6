/**
 * Every message is bounded, shown on `npm run dev` as its own process:
 * - a stdio child writing an 11 MiB stdout line is killed — that child only: its server goes `failed`
 *   saying why, a sibling child and the API answer throughout, and the stack keeps its pid;
 * - a 200 MB tool result from an HTTP upstream is refused (502 `upstream.response_too_large`, JSON and
 *   SSE answers alike) while the stack's resident set stays under a fixed ceiling; the server stays
 *   `connected` (one huge answer is its caller's failure, not the server's);
 * - a tools/list past the limit fails the probe with a sentence that says so.
 */
import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHuge } from "../fixtures/huge-upstream-process";
import { TINY_STDIO, testUidBase } from "../runner/helpers";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const HOSTILE = join(dirname(TINY_STDIO), "hostile-stdio.mjs");
const MIB = 1024;
/** How much the stack's peak resident set may grow while it refuses a 200 MB answer. */
const RSS_CEILING_KIB = 96 * MIB;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
type Json = any;

describe("every message is bounded (npm run dev as a process)", () => {
  let dev: DevProcess;
  const upstreams: ChildProcess[] = [];

  beforeAll(async () => {
    dev = await startDevProcess({ RUNNER_UID_BASE: String(testUidBase()), RUNNER_UID_COUNT: "200" });
  }, 90_000);
  afterAll(async () => {
    await dev?.stop();
    for (const child of upstreams) child.kill("SIGKILL");
  });

  async function create(body: Record<string, unknown>): Promise<string> {
    const created = await dev.call("POST", "/v1/servers", body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  }

  function status(id: string) {
    return waitFor(
      async () => (await dev.call("GET", `/v1/servers/${id}`)).body.status as Json,
      () => true,
    );
  }

  function reaches(id: string, state: string, timeoutMs = 20_000) {
    return waitFor(
      async () => (await dev.call("GET", `/v1/servers/${id}`)).body.status as Json,
      (s) => s.state === state,
      { timeoutMs },
    );
  }

  function callTool(name: string, args: Record<string, unknown> = {}) {
    return dev.call("POST", `/v1/tools/${name}/call`, { arguments: args });
  }

  it("a child's 11 MiB stdout line kills that child only; the stack keeps its pid and serves on", async () => {
    const flooder = uniqueName("flooder");
    const sibling = uniqueName("sibling");
    const [floodId, siblingId] = await Promise.all([
      create({ name: flooder, command: process.execPath, args: [HOSTILE] }),
      create({ name: sibling, command: process.execPath, args: [TINY_STDIO] }),
    ]);
    await Promise.all([reaches(floodId, "connected"), reaches(siblingId, "connected")]);
    await waitFor(
      () => callTool(`${sibling}__ping`),
      (r) => r.status === 200,
      { timeoutMs: 5_000 },
    );
    const pid = dev.pid;

    // The sibling and the API keep answering while the flood is under way.
    let flooding = true;
    const siblingCalls: number[] = [];
    const steady = (async () => {
      while (flooding) siblingCalls.push((await callTool(`${sibling}__ping`)).status);
    })();
    const flood = await callTool(`${flooder}__flood`, { bytes: 11 * 1024 * 1024 });
    const failed = await reaches(floodId, "failed");
    flooding = false;
    await steady;

    expect(flood.status).toBe(502);
    expect(failed.reason).toBe("failed");
    expect(failed.lastError).toMatch(/wrote a message larger than 10 MiB \(MAX_UPSTREAM_MESSAGE_BYTES\)/);
    expect(siblingCalls.length).toBeGreaterThan(0);
    expect(new Set(siblingCalls)).toEqual(new Set([200]));
    expect(dev.alive()).toBe(true);
    expect(dev.pid).toBe(pid);
    expect((await status(siblingId)).state).toBe("connected");
    expect((await fetch(`${dev.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it.each([
    ["JSON", []],
    ["SSE", ["--sse"]],
  ])(
    "a 200 MB tool result (%s) → 502 upstream.response_too_large, the resident set under its ceiling",
    async (kind, args) => {
      const upstream = await startHuge(args as string[]);
      upstreams.push(upstream.child);
      const name = uniqueName(`huge-${kind.toLowerCase()}`);
      const id = await create({ name, url: upstream.url });
      await reaches(id, "connected");
      await waitFor(
        () => callTool(`${name}__small`),
        (r) => r.status === 200,
        { timeoutMs: 5_000 },
      );
      const before = dev.memory();

      const refused = await callTool(`${name}__huge`, { mb: 200 });
      const after = dev.memory();

      expect(refused.status).toBe(502);
      expect(refused.body).toMatchObject({ code: "upstream.response_too_large" });
      expect(refused.body.detail).toMatch(/exceeded the 16 MiB limit \(MAX_UPSTREAM_MESSAGE_BYTES\)/);
      const grewKiB = after.peakKiB - before.peakKiB;
      console.log(
        `[bounded] 200 MB ${kind} answer refused: peak RSS ${Math.round(before.peakKiB / MIB)} → ${Math.round(after.peakKiB / MIB)} MiB (+${Math.round(grewKiB / MIB)} MiB; ceiling +${RSS_CEILING_KIB / MIB} MiB)`,
      );
      expect(grewKiB).toBeLessThan(RSS_CEILING_KIB);
      // The server answered; it is not down for everyone else.
      expect((await status(id)).state).toBe("connected");
      expect((await callTool(`${name}__small`)).status).toBe(200);
    },
    60_000,
  );

  it("a tools/list past the limit fails the probe with a sentence that says so", async () => {
    const upstream = await startHuge(["--huge-list", "20"]);
    upstreams.push(upstream.child);
    const id = await create({ name: uniqueName("hugelist"), url: upstream.url });

    const failed = await reaches(id, "failed");

    expect(failed.reason).toBe("failed");
    expect(failed.lastError).toBe(
      "the upstream's message exceeded the 16 MiB limit (MAX_UPSTREAM_MESSAGE_BYTES) and was dropped",
    );
    // Trying again with nothing changed cannot help: the retry waits the 5 min cap (less its jitter).
    const wait = Date.parse(failed.nextAttemptAt ?? "") - Date.parse(failed.lastConnectionFailureAt ?? "");
    expect(wait).toBeGreaterThanOrEqual(240_000);
    expect(wait).toBeLessThanOrEqual(301_000);
  }, 60_000);
});
