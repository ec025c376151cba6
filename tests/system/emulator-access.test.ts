/**
 * The emulator is not a back door: on `npm run dev` (as its own process, with the moto it starts for
 * itself), a hostile stdio child that knows the emulator's endpoint — and, the code being public, the
 * table's name and how secrets are sealed — reads and decrypts nothing: not unsigned, not with a
 * made-up key, not with moto's well-known defaults, not after asking moto's own API to turn
 * authentication off. Meanwhile the stack itself works: a server whose secret header must be unsealed
 * (KMS) to connect connects.
 */
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TINY_STDIO, testUidBase } from "../runner/helpers";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { createServer, reaches, uniqueName } from "../support/servers";

const HOSTILE = join(dirname(TINY_STDIO), "hostile-stdio.mjs");
const SECRET = `sentinel-bearer-${Math.random().toString(36).slice(2)}`;

// biome-ignore lint/suspicious/noExplicitAny: the child's report is asserted on, not typed
type Json = any;

describe("npm run dev: a stdio child cannot use the AWS emulator", () => {
  let dev: (DevProcess & { config: { tableName: string } }) | undefined;
  let upstream: Upstream | undefined;

  beforeAll(async () => {
    upstream = await startUpstream({ requireBearer: SECRET });
    // No emulator named: the stack starts its own, as `npm run dev` does.
    dev = await startDevProcess({
      AWS_ENDPOINT_URL: "",
      AWS_ENDPOINT_URL_DYNAMODB: "",
      AWS_ENDPOINT_URL_SQS: "",
      AWS_ENDPOINT_URL_KMS: "",
      RUNNER_UID_BASE: String(testUidBase()),
      RUNNER_UID_COUNT: "200",
    });
  }, 90_000);
  afterAll(async () => {
    await dev?.stop();
    await upstream?.close();
  });

  it("reads and decrypts nothing — unsigned, made-up key, moto's defaults — while the stack unseals its own", async () => {
    // Prepare: a server whose secret header the stack must unseal to connect; the hostile child's server
    const stack = dev!;
    const endpoint = /AWS endpoint (http:\/\/127\.0\.0\.1:\d+) \(moto, started for this run/.exec(
      stack.logs(),
    )?.[1];
    expect(endpoint, stack.logs()).toBeDefined();
    const guardedName = uniqueName("guarded");
    const guarded = await createServer(stack, {
      name: guardedName,
      url: upstream!.url,
      headers: { authorization: `Bearer ${SECRET}` },
    });
    const hostile = uniqueName("raider");
    const hostileId = await createServer(stack, {
      name: hostile,
      command: process.execPath,
      args: [HOSTILE],
    });
    await Promise.all([
      reaches(stack, guarded, "connected", 30_000),
      reaches(stack, hostileId, "connected", 30_000),
    ]);

    // Act: the child raids the emulator
    const call = await stack.call("POST", `/v1/tools/${hostile}__raid_emulator/call`, {
      arguments: { endpoint, table: stack.config.tableName },
    });

    // Assess: every attempt refused (403), nothing read, nothing opened; the secret appears nowhere
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    const text: string = call.body.content[0].text;
    const report: Json = JSON.parse(text);
    expect(text).not.toContain(SECRET);
    for (const attempt of Object.values(report.unsigned) as Json[]) expect(attempt.status).toBe(403);
    expect(Object.keys(report.signed)).toEqual(["made-up", "testing/testing", "test/test"]);
    for (const [key, attempt] of Object.entries(report.signed) as Array<[string, Json]>) {
      expect({ key, ...attempt }).toEqual({
        key,
        listKeys: expect.stringMatching(/^403 /),
        scan: expect.stringMatching(/^403 /),
        items: [],
        decryptOwnBlob: expect.stringMatching(/^403 /),
        opened: [],
      });
    }
    // The raid changed nothing for the stack: it still calls through the server with the secret header.
    const echo = await stack.call("POST", `/v1/tools/${guardedName}__echo/call`, {
      arguments: { text: "hi" },
    });
    expect(echo.status, JSON.stringify(echo.body)).toBe(200);
    expect(echo.body.content[0].text).toBe("hi");
  });
});
