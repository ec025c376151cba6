/**
 * Ctrl-C on `npm run dev` — SIGINT to its whole process group, as a terminal sends it, through npm,
 * scripts/node22.mjs and tsx — stops the stack cleanly: the API, the poller and the runner stop, the
 * runner's stdio children with them, and it says it stopped (a second SIGINT passed on by a wrapper
 * would cut the shutdown short, leaving the children running).
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isAlive, TINY_STDIO, withMarker } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv, signalGroup, startNpmDev } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

describe("Ctrl-C on npm run dev", () => {
  it("stops the stack cleanly: exit 0, its stdio child gone", async () => {
    // Prepare: the stack as a newcomer starts it, with one stdio child running
    const { adminToken, env } = await devEnv(await createTestConfig());
    const { dev, url, output, interrupt } = await startNpmDev(["--ephemeral"], env, 60_000);
    try {
      const mark = `86396.${randomBytes(3).readUIntBE(0, 3)}`;
      const created = await fetch(`${url}/v1/servers`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({
          name: uniqueName("ctrlc"),
          command: process.execPath,
          args: [TINY_STDIO, "--ignore-stdin-eof", "--grandchild", mark],
        }),
      });
      expect(created.status).toBe(201);
      const children = await waitFor(
        async () => withMarker(mark),
        (found) => found.length >= 2,
        { timeoutMs: 20_000 },
      );

      // Act: Ctrl-C
      const status = await interrupt(20_000);

      // Assess (npm itself ends by the SIGINT it was sent, as it always does: the stack's own line tells)
      expect(status).not.toBe("hung");
      expect(output()).toMatch(/^\[dev\] stopped$/m);
      await waitFor(
        async () => children.filter(isAlive),
        (alive) => alive.length === 0,
        { timeoutMs: 10_000 },
      );
    } finally {
      signalGroup(dev, "SIGKILL");
    }
  }, 120_000);
});
