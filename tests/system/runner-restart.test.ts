/**
 * A runner that dies hard leaves its children's files and stray processes behind; the next runner
 * start wipes them: its predecessor's directory (instance HOMEs, 0600 secret files) is gone, and what
 * still ran under the pool's uids (an orphaned grandchild) is killed. The child itself does not even
 * wait for the restart: it dies with the runner (parent-death signal), though it ignores its stdin's
 * end. Shown with `npm run dev` as a process, SIGKILLed and started again on the same temp dir and
 * uid pool.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parentDeathWrapper } from "@mcpgw/runner";
import { afterAll, describe, expect, it } from "vitest";
import {
  cmdline,
  environ,
  isAlive,
  runnerDirs,
  TINY_STDIO,
  testUidBase,
  withMarker,
} from "../runner/helpers";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const isRoot = process.getuid?.() === 0;
/** A `sleep` duration no other process will have: the orphaned grandchild's marker. */
const MARKER = `86398.${randomBytes(3).readUIntBE(0, 3)}`;

function isSleep(pid: number): boolean {
  try {
    return cmdline(pid)[0] === "sleep";
  } catch {
    return false;
  }
}

describe("a runner start wipes what a hard-killed predecessor left", () => {
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-restart-"));
  chmodSync(tempBase, 0o711);
  const env = {
    RUNNER_TEMP_DIR: tempBase,
    RUNNER_UID_BASE: String(testUidBase()),
    RUNNER_UID_COUNT: "200",
  };
  let second: DevProcess | undefined;

  afterAll(async () => {
    await second?.stop();
    rmSync(tempBase, { recursive: true, force: true });
  });

  it("the child dies with the runner though it ignores stdin's end; its dir, secret files and (isolated) strays go at the restart", async () => {
    const first = await startDevProcess(env);
    const secret = `restart-${randomBytes(3).toString("hex")}`;
    expect(
      (await first.call("PUT", `/v1/secrets/${secret}`, { values: { TOKEN: "left-behind" } })).status,
    ).toBe(200);
    const created = await first.call("POST", "/v1/servers", {
      name: uniqueName("orphan"),
      command: process.execPath,
      args: [TINY_STDIO, "--ignore-stdin-eof", "--grandchild", MARKER],
      env: { LEAK_FILE: "{{secret_file}}" },
      secretRef: secret,
    });
    expect(created.status).toBe(201);
    const [child] = await waitFor(
      async () => withMarker(MARKER).filter((pid) => !isSleep(pid)),
      (pids) => pids.length === 1,
      { timeoutMs: 20_000 },
    );
    const secretFile = environ(child as number).LEAK_FILE as string;
    const [oldDir] = runnerDirs(tempBase);
    expect(existsSync(secretFile)).toBe(true);

    // Its grandchild runs too before the runner dies (a child killed sooner would never start it).
    await waitFor(
      async () => withMarker(MARKER).filter(isSleep).length,
      (started) => started === 1,
      { timeoutMs: 5_000 },
    );
    await first.kill();
    // Hard-killed: nothing cleaned up. The child, which ignores its stdin's end, dies with the runner
    // all the same (SIGKILL from the kernel: its parent-death signal); its grandchild stays.
    expect(existsSync(secretFile)).toBe(true);
    if (parentDeathWrapper()) {
      await waitFor(
        async () => isAlive(child as number),
        (alive) => !alive,
        { timeoutMs: 2_000, intervalMs: 20 },
      );
    }
    await waitFor(
      async () => withMarker(MARKER).filter(isSleep).length,
      (strays) => strays === 1,
      { timeoutMs: 5_000 },
    );

    second = await startDevProcess(env, first);

    expect(existsSync(secretFile)).toBe(false);
    expect(readdirSync(tempBase)).not.toContain(oldDir);
    expect(runnerDirs(tempBase)).toHaveLength(1); // the new runner's own
    const strays = withMarker(MARKER);
    if (isRoot) expect(strays.filter(isAlive)).toEqual([]);
    if (isRoot || parentDeathWrapper()) expect(isAlive(child as number)).toBe(false);
  }, 120_000);
});
