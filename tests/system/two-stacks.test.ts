/**
 * Two stacks on one host keep their children: each runner holds its own slice of the shared child uid
 * range, and its start-up sweep touches only that slice. Shown with two `npm run dev` processes on the
 * same uid range and temp dir: the second starts, is hard-killed and starts again, and the first's child
 * (and its grandchild) live on and keep answering; the restarted second sweeps its own old slice's
 * leftover (an orphaned grandchild) all the same. A second started on the first's port stops at once,
 * in one line, before its runner (or anything else) starts: the first's children are untouched.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cmdline, isAlive, TINY_STDIO, testUidBase, withMarker } from "../runner/helpers";
import { type DevProcess, runDevUntilExit, startDevProcess } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const isRoot = process.getuid?.() === 0;

/** A `sleep` duration no other process will have: a stack's grandchild's marker. */
function marker(): string {
  return `86397.${randomBytes(3).readUIntBE(0, 3)}`;
}

function isSleep(pid: number): boolean {
  try {
    return cmdline(pid)[0] === "sleep";
  } catch {
    return false;
  }
}

/** Registers a tiny stdio server (with a `sleep` grandchild) on `dev`; its child's and grandchild's pids. */
async function serverWithGrandchild(dev: DevProcess, mark: string) {
  const name = uniqueName("slice");
  const created = await dev.call("POST", "/v1/servers", {
    name,
    command: process.execPath,
    args: [TINY_STDIO, "--ignore-stdin-eof", "--grandchild", mark],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const pids = await waitFor(
    async () => withMarker(mark),
    (found) => found.filter(isSleep).length === 1 && found.filter((pid) => !isSleep(pid)).length === 1,
    { timeoutMs: 20_000 },
  );
  await waitFor(
    () => ping(dev, name),
    (status) => status === 200,
    { timeoutMs: 10_000 },
  );
  return {
    name,
    child: pids.find((pid) => !isSleep(pid)) as number,
    grandchild: pids.find(isSleep) as number,
  };
}

async function ping(dev: DevProcess, name: string): Promise<number> {
  return (await dev.call("POST", `/v1/tools/${name}__ping/call`, { arguments: {} })).status;
}

describe("two stacks on one host keep their children", () => {
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-two-stacks-"));
  chmodSync(tempBase, 0o711);
  /** One range for both stacks of a test, two slices of 100 uids in it (RUNNER_UID_SLICE's default). */
  const sharedRange = () => ({
    RUNNER_TEMP_DIR: tempBase,
    RUNNER_UID_BASE: String(testUidBase()),
    RUNNER_UID_COUNT: "200",
  });
  const running: DevProcess[] = [];

  afterAll(async () => {
    await Promise.all(running.map((dev) => dev.stop()));
    rmSync(tempBase, { recursive: true, force: true });
  });

  it("the second starts, crashes and starts again: the first's children live and answer; the second's leftovers go", async () => {
    const env = sharedRange();
    const first = await startDevProcess(env);
    running.push(first);
    const firsts = await serverWithGrandchild(first, marker());

    let second = await startDevProcess(env);
    running.push(second);
    expect(isAlive(firsts.child)).toBe(true);
    expect(isAlive(firsts.grandchild)).toBe(true);
    expect(await ping(first, firsts.name)).toBe(200);

    // The second's own child, then a crash: its grandchild is left behind in the second's slice.
    const seconds = await serverWithGrandchild(second, marker());
    await second.kill();
    expect(isAlive(seconds.grandchild)).toBe(true);

    second = await startDevProcess(env, second);
    running.push(second);
    // Without root there are no slices and no sweep: children run as the runner itself.
    if (isRoot) expect(isAlive(seconds.grandchild)).toBe(false);
    expect(isAlive(firsts.child)).toBe(true);
    expect(isAlive(firsts.grandchild)).toBe(true);
    expect(await ping(first, firsts.name)).toBe(200);
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  }, 180_000);

  it("a second on the first's port exits in one line before anything starts: the first's children live and answer", async () => {
    const env = sharedRange();
    const first = await startDevProcess(env);
    running.push(first);
    const firsts = await serverWithGrandchild(first, marker());
    const port = new URL(first.url).port;

    // The first's own table and queue too: a second that went on would share its jobs.
    const second = await runDevUntilExit(
      {
        ...env,
        PORT: port,
        AWS_ENDPOINT_URL: first.config.endpoint ?? "",
        TABLE_NAME: first.config.tableName,
        QUEUE_NAME: first.config.queueName,
        DEAD_LETTER_QUEUE_NAME: first.config.deadLetterQueueName,
        KMS_KEY_ALIAS: first.config.keyAlias,
      },
      { timeoutMs: 40_000 },
    );
    expect(second.output.trim()).toBe(
      `[dev] port ${port} is in use (another npm run dev?): stop it or set PORT=<a free port>`,
    );
    expect(second).toMatchObject({ code: 1, timedOut: false });
    expect(isAlive(firsts.child)).toBe(true);
    expect(isAlive(firsts.grandchild)).toBe(true);
    expect(await ping(first, firsts.name)).toBe(200);
  }, 120_000);
});
