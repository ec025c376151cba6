/**
 * `npm run dev` that cannot start says so in one line — what is wrong, where, and what to do — and
 * exits 1 within seconds, leaving nothing running: an AWS endpoint where nothing listens, one that
 * answers 500 to everything, one that never answers, and its port in use (checked before anything
 * starts: no emulator, no data dir). A second stack on a running one's port is in two-stacks.test.ts.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, parkedPort } from "../../scripts/lib/processes";
import { withMarker } from "../runner/helpers";
import { runDevUntilExit } from "../support/dev-process";

/** Well past a failing start's few seconds (tsx's start on a busy machine), well short of SDK retries. */
const FAIL_WITHIN_MS = 20_000;

/** Runs `npm run dev` on `endpoint` (every service) and its own free port, until it exits. */
async function devOn(endpoint: string) {
  return runDevUntilExit(
    {
      AWS_ENDPOINT_URL: endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: "",
      AWS_ENDPOINT_URL_SQS: "",
      AWS_ENDPOINT_URL_KMS: "",
      PORT: String(await freePort()),
    },
    { timeoutMs: FAIL_WITHIN_MS + 10_000 },
  );
}

function listening(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`);
    }),
  );
}

describe("npm run dev's start-up errors are one line and exit 1", () => {
  const servers: Server[] = [];
  let scratch: string;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "startup-errors-"));
  });
  afterAll(async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
    rmSync(scratch, { recursive: true, force: true });
  });

  it("an AWS endpoint where nothing listens: named, with the next step", async () => {
    const endpoint = `http://127.0.0.1:${await parkedPort()}`;
    const run = await devOn(endpoint);
    expect(run.output.trim()).toBe(
      `[dev] AWS endpoint ${endpoint} (AWS_ENDPOINT_URL) is unreachable (connection refused): start the emulator there, or unset AWS_ENDPOINT_URL to let npm run dev start one`,
    );
    expect(run).toMatchObject({ code: 1, timedOut: false });
    expect(run.elapsedMs).toBeLessThan(FAIL_WITHIN_MS);
  }, 60_000);

  it("an AWS endpoint answering 500 to everything: named, with the status and the next step", async () => {
    const failing = createServer((_request, response) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end("Internal Server Error");
    });
    servers.push(failing);
    const endpoint = await listening(failing);
    const run = await devOn(endpoint);
    expect(run.output.trim()).toBe(
      `[dev] AWS endpoint ${endpoint} (AWS_ENDPOINT_URL) answered a DynamoDB call with HTTP 500: check that it is an AWS emulator (LocalStack, moto) and see its log, or unset AWS_ENDPOINT_URL to let npm run dev start one`,
    );
    expect(run).toMatchObject({ code: 1, timedOut: false });
    expect(run.elapsedMs).toBeLessThan(FAIL_WITHIN_MS);
  }, 60_000);

  it("an AWS endpoint that takes the connection and never answers: unreachable after 5 s, not a hang", async () => {
    const silent = createServer(() => {});
    servers.push(silent);
    const endpoint = await listening(silent);
    const run = await devOn(endpoint);
    expect(run.output.trim()).toBe(
      `[dev] AWS endpoint ${endpoint} (AWS_ENDPOINT_URL) is unreachable (no answer within 5 s): start the emulator there, or unset AWS_ENDPOINT_URL to let npm run dev start one`,
    );
    expect(run).toMatchObject({ code: 1, timedOut: false });
    expect(run.elapsedMs).toBeLessThan(FAIL_WITHIN_MS);
  }, 60_000);

  it("its port in use: one line before anything starts — no emulator, no data dir", async () => {
    const taken = createTcpServer((socket) => socket.destroy());
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, "127.0.0.1", () => resolve((taken.address() as { port: number }).port)),
    );
    const dataDir = join(scratch, "never-made");
    try {
      // No AWS_ENDPOINT_URL and a data dir: a start that got past the port would start moto on it.
      const run = await runDevUntilExit(
        {
          PORT: String(port),
          DEV_DATA_DIR: dataDir,
          AWS_ENDPOINT_URL: "",
          AWS_ENDPOINT_URL_DYNAMODB: "",
          AWS_ENDPOINT_URL_SQS: "",
          AWS_ENDPOINT_URL_KMS: "",
        },
        { args: [], timeoutMs: FAIL_WITHIN_MS + 10_000 },
      );
      expect(run.output.trim()).toBe(
        `[dev] port ${port} is in use (another npm run dev?): stop it or set PORT=<a free port>`,
      );
      expect(run).toMatchObject({ code: 1, timedOut: false });
      expect(run.elapsedMs).toBeLessThan(FAIL_WITHIN_MS);
      expect(existsSync(dataDir)).toBe(false);
      expect(withMarker(dataDir)).toEqual([]);
    } finally {
      await new Promise((done) => taken.close(done));
    }
  }, 60_000);
});
