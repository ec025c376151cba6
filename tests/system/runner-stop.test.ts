/**
 * A graceful stop has a deadline even while a child is starting: SIGTERM to `npm run dev` while a
 * probe waits on a child that never answers `initialize` (and ignores its stdin's end) exits cleanly
 * (code 0) within 10 s — the start is abandoned, its child killed and the runner's directory removed —
 * instead of waiting out the runner's 60 s start timeout.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive, runnerDirs, TINY_STDIO, testUidBase, withMarker } from "../runner/helpers";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const MARKER = `--marker=stop-${randomBytes(4).toString("hex")}`;

describe("a graceful stop does not wait for a start", () => {
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-stop-"));
  chmodSync(tempBase, 0o711);
  let dev: DevProcess | undefined;

  afterAll(async () => {
    await dev?.kill();
    for (const pid of withMarker(MARKER)) process.kill(pid, "SIGKILL");
    rmSync(tempBase, { recursive: true, force: true });
  });

  it("SIGTERM while a child is starting: exit 0 within 10 s, the child and the runner's files gone", async () => {
    dev = await startDevProcess({
      RUNNER_TEMP_DIR: tempBase,
      RUNNER_UID_BASE: String(testUidBase()),
      RUNNER_UID_COUNT: "200",
    });
    const created = await dev.call("POST", "/v1/servers", {
      name: uniqueName("starting"),
      command: process.execPath,
      args: [TINY_STDIO, "--hang-at-initialize", "--ignore-stdin-eof", MARKER],
    });
    expect(created.status).toBe(201);
    const [child] = await waitFor(
      async () => withMarker(MARKER),
      (pids) => pids.length === 1,
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    expect(runnerDirs(tempBase)).toHaveLength(1); // the runner's own dir

    const started = Date.now();
    const exit = await dev.stop();
    const took = Date.now() - started;
    console.log(`[stop] SIGTERM during a start: exited ${JSON.stringify(exit)} after ${took} ms`);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(took).toBeLessThan(10_000);
    expect(isAlive(child as number)).toBe(false);
    expect(runnerDirs(tempBase)).toEqual([]);
    expect(dev.logs()).toContain('"child start abandoned"');
  }, 60_000);
});
