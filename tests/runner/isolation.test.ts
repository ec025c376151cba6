/**
 * Children cannot reach each other or the runner: each runs under its own uid/gid from the runner's
 * pool, with its own 0700 HOME and a 0600 secret file owned by that uid. A hostile child tries to read
 * the runner's and a sibling's /proc/<pid>/environ, the sibling's secret file and HOME, and the runner's
 * own directory: every read is refused, and the sibling's secrets never reach it.
 * (Run as a non-root user, the runner cannot switch uids: then it says so, once, in a warning.)
 */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  environ,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
} from "./helpers";

const HOSTILE = join(dirname(TINY_STDIO), "hostile-stdio.mjs");
const tag = randomBytes(6).toString("hex");
const SIBLING_ENV = `sibling-env-sentinel-${tag}`;
const SIBLING_SECRET = `sibling-secret-sentinel-${tag}`;
const isRoot = process.getuid?.() === 0;

describe("runner: children are isolated from each other and from the runner", () => {
  let stack: RunnerStack;
  const hostile = uniqueName("hostile");
  const sibling = uniqueName("sibling");
  let siblingId: string;

  beforeAll(async () => {
    stack = await startRunnerStack();
    const put = await stack.call("PUT", `/v1/secrets/sib-${tag}`, { values: { TOKEN: SIBLING_SECRET } });
    expect(put.status).toBe(200);
    const [hostileId, id] = await Promise.all([
      createServer(stack, { name: hostile, command: process.execPath, args: [HOSTILE] }),
      createServer(stack, {
        name: sibling,
        command: process.execPath,
        args: [TINY_STDIO],
        env: { API_KEY: SIBLING_ENV, LEAK_FILE: "{{secret_file}}" },
        secretRef: `sib-${tag}`,
      }),
    ]);
    siblingId = id;
    await Promise.all([reaches(stack, hostileId, "connected"), reaches(stack, siblingId, "connected")]);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  it("runs each child under its own uid and gid, with a 0700 HOME and a 0600 secret file it owns", async () => {
    const who = JSON.parse(textOf((await stack.callTool(`${hostile}__whoami`)).body));
    const siblingPid = await pidOf(stack, siblingId);
    const siblingEnv = environ(siblingPid);
    const siblingUid = statSync(`/proc/${siblingPid}`).uid;
    if (!isRoot) {
      expect(stack.runner?.isolated).toBe(false);
      expect(stack.logs.some((line) => line.includes("stdio children are not isolated"))).toBe(true);
      return;
    }

    expect(stack.runner?.isolated).toBe(true);
    expect(who.uid).toBeGreaterThanOrEqual(200_000);
    expect(who.gid).toBe(who.uid);
    expect(siblingUid).not.toBe(who.uid);
    expect(siblingUid).not.toBe(process.getuid?.());
    const home = statSync(siblingEnv.HOME as string);
    expect(home.uid).toBe(siblingUid);
    expect(home.mode & 0o777).toBe(0o700);
    const secret = statSync(siblingEnv.LEAK_FILE as string);
    expect(secret.uid).toBe(siblingUid);
    expect(secret.mode & 0o777).toBe(0o600);
    // The runner's own directory: children may pass through it, not list it.
    expect(statSync(stack.tempRoot).mode & 0o777).toBe(0o711);
  });

  it("a hostile child cannot read the runner's or a sibling's environ, secret file, HOME or the runner dir", async () => {
    const siblingPid = await pidOf(stack, siblingId);
    const siblingEnv = environ(siblingPid);
    const targets = [
      `/proc/${process.pid}/environ`,
      `/proc/${siblingPid}/environ`,
      siblingEnv.LEAK_FILE as string,
      siblingEnv.HOME as string,
      stack.tempRoot,
    ];

    const call = await stack.callTool(`${hostile}__try_read`, { paths: targets });

    expect(call.status).toBe(200);
    const results = JSON.parse(textOf(call.body)) as Array<{ path: string; ok: boolean; code?: string }>;
    const raw = JSON.stringify(call.body);
    expect(raw).not.toContain(SIBLING_ENV);
    expect(raw).not.toContain(SIBLING_SECRET);
    if (!isRoot) return; // unisolated (see above): nothing is kept from it
    expect(results).toEqual(targets.map((path) => ({ path, ok: false, code: "EACCES" })));
  });
});
