/**
 * `RUNNERS=3 npm run dev`, as a newcomer types it: three stdio runner processes (not the runner in
 * the stack's own process) that register in the table as deployed tasks do; `/readyz` checks them; a
 * stdio server's calls are served by the one holding its lease; Ctrl-C stops all three, children too.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createStore } from "@mcpgw/aws";
import { describe, expect, it } from "vitest";
import { isAlive, TINY_STDIO, withMarker } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv, signalGroup, startNpmDev } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

/** The pids of the runner processes `npm run dev` says it started. */
function runnerProcesses(output: string): number[] {
  const match = /\[dev\] 3 stdio runners \(processes ([\d, ]+)\)/.exec(output);
  return match?.[1] ? match[1].split(", ").map(Number) : [];
}

describe("RUNNERS=3 npm run dev", () => {
  it("runs a fleet of three runner processes registered in the table; Ctrl-C stops them and their children", async () => {
    const config = await createTestConfig();
    const { adminToken, env } = await devEnv(config);
    const { dev, url, output, interrupt } = await startNpmDev(
      ["--ephemeral"],
      { ...env, RUNNERS: "3" },
      90_000,
    );
    try {
      const pids = runnerProcesses(output());
      expect(pids).toHaveLength(3);
      for (const pid of pids)
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("runner/src/main.ts");
      const ready = await (await fetch(`${url}/readyz`)).json();
      expect(ready).toMatchObject({ ok: true, checks: { runner: "ok" } });
      const store = createStore(config);
      const now = Date.now();
      expect((await store.fleet.runners()).filter((runner) => runner.aliveUntil > now)).toHaveLength(3);

      const mark = `86397.${randomBytes(3).readUIntBE(0, 3)}`;
      const headers = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" };
      const name = uniqueName("fleet-dev");
      const created = await fetch(`${url}/v1/servers`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name, command: process.execPath, args: [TINY_STDIO, mark] }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const answer = await waitFor(
        async () =>
          fetch(`${url}/v1/tools/${name}__ping/call`, { method: "POST", headers, body: '{"arguments":{}}' }),
        (response) => response.status === 200,
        { timeoutMs: 20_000 },
      );
      expect(await answer.json()).toMatchObject({ text: "pong" });
      const owner = (await store.fleet.lease(id))?.owner;
      expect((await store.fleet.runners()).map((runner) => runner.id)).toContain(owner);
      const children = withMarker(mark);
      expect(children).toHaveLength(1);

      const status = await interrupt(30_000);
      expect(status).not.toBe("hung");
      expect(output()).toMatch(/^\[dev\] stopped$/m);
      await waitFor(
        async () => [...pids, ...children].filter(isAlive),
        (alive) => alive.length === 0,
        { timeoutMs: 10_000 },
      );
      // Each left the registry as it stopped, its lease given back.
      expect(await store.fleet.runners()).toEqual([]);
      expect(await store.fleet.lease(id)).toBeUndefined();
    } finally {
      signalGroup(dev, "SIGKILL");
    }
  }, 180_000);
});
