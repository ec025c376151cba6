/**
 * Deaths: a project child that dies unexpectedly marks its server `failed` (reason `failed`, `lastError`
 * = what happened plus the tail of its stderr, scrubbed of its env and secret values), and the 15 s retry
 * brings it back to `connected` by itself with a new child. A child that cannot start fails the probe
 * the same way. No env or secret value reaches the status, the API or a log line.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  everythingEntry,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  statusReader,
  TINY_STDIO,
  uniqueName,
  waitFor,
} from "./helpers";

const tag = randomBytes(6).toString("hex");
const API_KEY = `env-value-sentinel-${tag}`;
const SECRET = { TOKEN: `secret-value-sentinel-${tag}` };

describe("runner: deaths", () => {
  let stack: RunnerStack;

  beforeAll(async () => {
    stack = await startRunnerStack();
    const put = await stack.call("PUT", `/v1/secrets/leaky-${tag}`, { values: SECRET });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /** Neither sentinel in the status (the admin view shows the configured env itself) nor in a log line. */
  async function expectNoLeak(id: string) {
    const view = JSON.stringify((await stack.call("GET", `/v1/servers/${id}`)).body.status);
    const logs = stack.logs.join("\n");
    for (const value of [API_KEY, SECRET.TOKEN]) {
      expect(view).not.toContain(value);
      expect(logs).not.toContain(value);
    }
  }

  it("SIGKILL of server-everything's child → failed → connected again by itself (15 s retry)", async () => {
    const id = await createServer(stack, {
      name: uniqueName("killme"),
      command: process.execPath,
      args: [everythingEntry(), "stdio"],
    });
    await reaches(stack, id, "connected", 30_000);
    const pid = await pidOf(stack, id);
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");

    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed.reason).toBe("failed");
    expect(failed.lastError).toMatch(/exited unexpectedly \(SIGKILL\)/);
    expect(isAlive(pid)).toBe(false);
    expect((await stack.instances()).filter((i) => i.serverId === id)).toEqual([]);

    const back = await reaches(stack, id, "connected", 35_000);
    const waited = Date.now() - killedAt;
    expect(waited).toBeGreaterThanOrEqual(14_000); // the retry, not an immediate respawn
    expect(back.toolCount).toBeGreaterThanOrEqual(10);
    const newPid = await pidOf(stack, id);
    expect(newPid).not.toBe(pid);
    console.log(`[runner] killed child ${pid} → failed → connected with child ${newPid} after ${waited} ms`);
  }, 60_000);

  it("a crash keeps the stderr tail in lastError, scrubbed of env and secret values", async () => {
    const name = uniqueName("crasher");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      env: { API_KEY, LEAK_FILE: "{{secret_file}}" },
      secretRef: `leaky-${tag}`,
      secretFormat: "env",
    });
    await reaches(stack, id, "connected", 20_000);
    const crash = await stack.callTool(`${name}__crash`);
    expect(crash.status).not.toBe(200);
    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed.reason).toBe("failed");
    expect(failed.lastError).toMatch(
      /exited unexpectedly \(code 3\)\nstderr \(last lines\):\nabout to die; API_KEY=\[REDACTED\]; file=\[REDACTED\]/,
    );
    await expectNoLeak(id);
  });

  it("a child that dies before initialize fails the probe (one retry chain), with nothing leaked", async () => {
    const id = await createServer(stack, {
      name: uniqueName("nostart"),
      command: process.execPath,
      args: [TINY_STDIO, "--fail-at-start"],
      env: { API_KEY, LEAK_FILE: "{{secret_file}}" },
      secretRef: `leaky-${tag}`,
      secretFormat: "json",
    });
    const failed = await reaches(stack, id, "failed", 20_000);
    expect(failed.reason).toBe("failed");
    expect((await stack.instances()).filter((i) => i.serverId === id)).toEqual([]);
    // The runner answers the probe 502 with the scrubbed stderr tail: that is the lastError.
    expect(failed.lastError).toMatch(/the child did not start: .*about to die; API_KEY=\[REDACTED\]/s);
    await expectNoLeak(id);

    // One retry per round: the failed start is recorded by the probe only (not again by the runner).
    const attempts = () =>
      stack.logs.filter((line) => line.includes('"child died"') && line.includes(id)).length;
    await waitFor(
      async () => attempts(),
      (count) => count >= 2,
      { timeoutMs: 25_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // a duplicate chain would show up by now
    expect(attempts()).toBe(2);
    expect((await statusReader(stack, id)()).state).toBe("failed");
    await expectNoLeak(id);
  }, 60_000);
});
