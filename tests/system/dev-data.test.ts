/**
 * `npm run dev` with the emulator it starts for itself keeps its data in DEV_DATA_DIR across a restart:
 * servers, their secret headers (sealed with the emulator's KMS key, which is kept too: the upstream
 * still receives the header) and API keys. The snapshot is private (0600 in a 0700 directory). With
 * `--ephemeral` nothing is kept; an unreadable snapshot is set aside and the stack starts empty.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { createServer, reaches, uniqueName } from "../support/servers";

const SECRET = `kept-bearer-${Math.random().toString(36).slice(2)}`;
/** No emulator named: the stack starts its own, as `npm run dev` does. */
const OWN_EMULATOR = {
  AWS_ENDPOINT_URL: "",
  AWS_ENDPOINT_URL_DYNAMODB: "",
  AWS_ENDPOINT_URL_SQS: "",
  AWS_ENDPOINT_URL_KMS: "",
};
const START_MS = 90_000;
const SNAPSHOT = "emulator.snapshot";

type Dev = Awaited<ReturnType<typeof startDevProcess>>;

describe("npm run dev keeps its data across restarts", () => {
  let upstream: Upstream;
  let scratch: string;

  beforeAll(async () => {
    upstream = await startUpstream({ requireBearer: SECRET });
    scratch = mkdtempSync(join(tmpdir(), "dev-data-"));
  });
  afterAll(async () => {
    await upstream?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs `body` on a dev stack started with `args`, then stops it with SIGTERM (asserting a clean exit). */
  async function withDev(
    dataDir: string,
    args: string[],
    body: (dev: Dev) => Promise<void>,
    previous?: Dev,
  ): Promise<Dev> {
    const dev = await startDevProcess({ ...OWN_EMULATOR, DEV_DATA_DIR: dataDir }, previous, START_MS, args);
    try {
      await body(dev);
    } finally {
      const exit = await dev.stop();
      expect(exit, dev.logs()).toEqual({ code: 0, signal: null });
    }
    return dev;
  }

  /** The names of the servers the stack lists. */
  async function serverNames(dev: DevProcess): Promise<string[]> {
    const list = await dev.call("GET", "/v1/servers");
    expect(list.status).toBe(200);
    return list.body.servers.map((server: { name: string }) => server.name);
  }

  it(
    "a server, its sealed header and a key are there after SIGTERM and a start on the same data dir",
    async () => {
      const dataDir = join(scratch, "kept");
      const name = uniqueName("kept");
      let key = { id: "", key: "" };
      const first = await withDev(dataDir, [], async (dev) => {
        expect(dev.logs()).toContain(`data kept in ${dataDir}`);
        const id = await createServer(dev, {
          name,
          url: upstream.url,
          headers: { authorization: `Bearer ${SECRET}` },
        });
        await reaches(dev, id, "connected", 30_000);
        const created = await dev.call("POST", "/v1/keys", { name: "laptop" });
        expect(created.status).toBe(201);
        key = created.body;
      });
      // The snapshot is the user's alone: it holds the KMS key material.
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, SNAPSHOT)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dataDir, SNAPSHOT)).includes(SECRET)).toBe(false);

      await withDev(
        dataDir,
        [],
        async (dev) => {
          expect(dev.logs()).toContain(`restored ${join(dataDir, SNAPSHOT)}`);
          expect(await serverNames(dev)).toContain(name);
          const keys = await dev.call("GET", "/v1/keys");
          expect(keys.body.keys.map((listed: { id: string }) => listed.id)).toContain(key.id);
          // The key authenticates, and the header still opens: the upstream requires it.
          upstream.resetCounters();
          const call = await fetch(`${dev.url}/v1/tools/${name}__echo/call`, {
            method: "POST",
            headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
            body: JSON.stringify({ arguments: { text: "still here" } }),
          });
          const answer = (await call.json()) as { content: Array<{ text: string }> };
          expect(call.status, JSON.stringify(answer)).toBe(200);
          expect(answer.content[0]?.text).toBe("still here");
          expect(upstream.toolCalls).toBe(1);
        },
        first,
      );
    },
    3 * START_MS,
  );

  it(
    "--ephemeral keeps nothing: the next start on the same data dir is empty",
    async () => {
      const dataDir = join(scratch, "throwaway");
      const name = uniqueName("gone");
      const first = await withDev(dataDir, ["--ephemeral"], async (dev) => {
        expect(dev.logs()).toContain("throwaway run (--ephemeral)");
        await createServer(dev, { name, url: upstream.url, headers: { authorization: `Bearer ${SECRET}` } });
      });
      expect(() => statSync(dataDir)).toThrow(/ENOENT/);
      await withDev(
        dataDir,
        ["--ephemeral"],
        async (dev) => {
          expect(await serverNames(dev)).toEqual([]);
        },
        first,
      );
    },
    3 * START_MS,
  );

  it(
    "an unreadable snapshot does not stop it: it says so, sets the file aside and starts empty",
    async () => {
      const dataDir = join(scratch, "corrupt");
      mkdirSync(dataDir, { mode: 0o700 });
      const garbage = Buffer.from("\x80\x05not a snapshot at all");
      writeFileSync(join(dataDir, SNAPSHOT), garbage, { mode: 0o600 });
      const name = uniqueName("fresh");
      await withDev(dataDir, [], async (dev) => {
        expect(dev.logs()).toMatch(
          /the snapshot \S+ is unreadable \(\w+\): moved to \S+\.unreadable; starting empty/,
        );
        expect(await serverNames(dev)).toEqual([]);
        await createServer(dev, { name, url: upstream.url });
      });
      // The unreadable one is kept aside as it was; a good snapshot took its place.
      expect(readFileSync(join(dataDir, `${SNAPSHOT}.unreadable`))).toEqual(garbage);
      expect(readFileSync(join(dataDir, SNAPSHOT)).includes(Buffer.from(name))).toBe(true);
    },
    2 * START_MS,
  );
});
