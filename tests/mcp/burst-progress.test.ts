/**
 * Notifications sent in the same write as the result reach the caller: an upstream whose tool sends,
 * for each of 3 steps, a log line and a progress notification, then its result, all in one write
 * (tests/fixtures/burst-upstream.ts), in each era it may speak, called through the gateway by a
 * 2026-07-28 client and a 2025-11-25 client on `/mcp` and on `/mcp/{server}` — each hears 3 of 3
 * progress and every log line, in the order sent, before the result, as a client talking to the
 * upstream directly does.
 */
import {
  Client as ClientV2,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type BurstUpstream, burstMessage, startBurstUpstream } from "../fixtures/burst-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type CreatedKey, createKey } from "./helpers";

const ERAS = [
  { era: "modern", version: "2026-07-28", direct: "v2-modern" },
  { era: "legacy", version: "2025-11-25", direct: "v1" },
] as const;
type Flavour = "v2-modern" | "v1";
const FLAVOURS: Flavour[] = ["v2-modern", "v1"];
const COUNT = 3;
const TIMEOUT_MS = 10_000;
const CLIENT_INFO = { name: "burst-e2e", version: "1.0.0" };

/** What every caller must hear, in this order: each step's log line and progress, then the result. */
const EXPECTED = [
  ...Array.from({ length: COUNT }, (_, i) => [
    `log: log ${i + 1}`,
    `progress: ${i + 1}/${COUNT} ${burstMessage(i + 1, COUNT)}`,
  ]).flat(),
  `result: burst of ${COUNT}`,
];

/** A client that records what a call of `burst` brings, in the order it arrives. */
interface Recorder {
  burst(tool: string): Promise<string[]>;
  close(): Promise<void>;
}

function progressLine({ progress, total, message }: { progress: number; total?: number; message?: string }) {
  return `progress: ${progress}/${total} ${message}`;
}

function resultLine(result: object): string {
  const [first] = ((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>;
  return `result: ${first?.text}`;
}

/**
 * A 2026-07-28 client (SDK v2, pinned; asks for logs in its request's envelope) or a 2025-11-25 one
 * (SDK v1: the gateway logs to a 2025 session at `debug` until it sets a level).
 */
async function connectRecorder(flavour: Flavour, url: string, key?: string): Promise<Recorder> {
  const requestInit = key ? { headers: { authorization: `Bearer ${key}` } } : {};
  let heard: string[] = [];
  if (flavour === "v2-modern") {
    const client = new ClientV2(CLIENT_INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    client.setNotificationHandler("notifications/message", (notification) => {
      heard.push(`log: ${notification.params.data}`);
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }), {
      timeout: TIMEOUT_MS,
    });
    return {
      async burst(tool) {
        heard = [];
        const result = await client.callTool(
          { name: tool, arguments: { count: COUNT }, _meta: { [LOG_LEVEL_META_KEY]: "debug" } },
          { timeout: TIMEOUT_MS, onprogress: (progress) => heard.push(progressLine(progress)) },
        );
        return [...heard, resultLine(result)];
      },
      close: () => client.close(),
    };
  }
  const client = new ClientV1(CLIENT_INFO);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    heard.push(`log: ${notification.params.data}`);
  });
  await client.connect(new TransportV1(new URL(url), { requestInit }), { timeout: TIMEOUT_MS });
  return {
    async burst(tool) {
      heard = [];
      const result = await client.callTool({ name: tool, arguments: { count: COUNT } }, undefined, {
        timeout: TIMEOUT_MS,
        onprogress: (progress) => heard.push(progressLine(progress)),
      });
      return [...heard, resultLine(result)];
    },
    close: () => client.close(),
  };
}

describe("notifications in the same write as the result", () => {
  let stack: Stack;
  let key: CreatedKey;
  const started: BurstUpstream[] = [];
  const upstreams = new Map<string, { upstream: BurstUpstream; name: string; id: string }>();
  const recorders: Recorder[] = [];

  async function connect(flavour: Flavour, url: string, withKey = true): Promise<Recorder> {
    const recorder = await connectRecorder(flavour, url, withKey ? key.key : undefined);
    recorders.push(recorder);
    return recorder;
  }

  beforeAll(async () => {
    stack = await startGatewayStack();
    for (const { era } of ERAS) {
      const upstream = await startBurstUpstream(era);
      started.push(upstream);
      const name = uniqueName(`burst-${era}`);
      upstreams.set(era, { upstream, name, id: await createConnected(stack, { name, url: upstream.url }) });
    }
    key = await createKey(stack, "burst progress");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(recorders.map((recorder) => recorder.close()));
    await stack?.stop();
    await Promise.allSettled(started.map((upstream) => upstream.close()));
  });

  for (const { era, version, direct } of ERAS) {
    describe(`a ${version} upstream`, () => {
      it(`is spoken to in ${version}; a direct client hears it all, in order (the reference)`, async ({
        expect,
      }) => {
        const { upstream, id } = upstreams.get(era) as { upstream: BurstUpstream; id: string };
        const status = await stack.call("GET", `/v1/servers/${id}`);
        expect(status.body.status).toMatchObject({ state: "connected", protocolVersion: version });
        const client = await connect(direct, upstream.url, false);
        expect(await client.burst("burst")).toEqual(EXPECTED);
      });

      for (const flavour of FLAVOURS) {
        for (const endpoint of ["/mcp", "/mcp/{server}"]) {
          it(`${flavour} on ${endpoint}: 3 of 3 progress and every log line, in order, before the result`, async ({
            expect,
          }) => {
            const { name } = upstreams.get(era) as { name: string };
            const path = endpoint === "/mcp" ? "/mcp" : `/mcp/${name}`;
            const tool = endpoint === "/mcp" ? `${name}__burst` : "burst";
            const client = await connect(flavour, `${stack.api.url}${path}`);
            expect(await client.burst(tool)).toEqual(EXPECTED);
          });
        }
      }
    });
  }
});
