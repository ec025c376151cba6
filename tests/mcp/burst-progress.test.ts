/**
 * Progress sent in the same write as the result reaches the caller: an upstream whose tool sends 3
 * progress notifications and its result in one write (tests/fixtures/burst-upstream.ts), in each era
 * it may speak, called through the gateway by a 2026-07-28 client and a 2025-11-25 client on `/mcp`
 * and on `/mcp/{server}` — each gets 3 of 3, in order, before the result, as a client talking to the
 * upstream directly does.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { type BurstUpstream, burstMessage, startBurstUpstream } from "../fixtures/burst-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type ClientFlavour, connectTestClient, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";

const ERAS = [
  { era: "modern", version: "2026-07-28", direct: "v2-modern" },
  { era: "legacy", version: "2025-11-25", direct: "v1" },
] as const;
const FLAVOURS = ["v2-modern", "v1"] as const satisfies readonly ClientFlavour[];
const COUNT = 3;
/** What every caller must see, in this order, before the result. */
const EXPECTED = Array.from({ length: COUNT }, (_, i) => ({
  progress: i + 1,
  total: COUNT,
  message: burstMessage(i + 1, COUNT),
}));

describe("progress in the same write as the result", () => {
  let stack: Stack;
  let key: CreatedKey;
  const started: BurstUpstream[] = [];
  const upstreams = new Map<string, { upstream: BurstUpstream; name: string; id: string }>();
  const clients: TestClient[] = [];

  async function connect(flavour: ClientFlavour, url: string, withKey = true): Promise<TestClient> {
    const client = await connectTestClient(flavour, url, withKey ? { key: key.key } : {});
    clients.push(client);
    return client;
  }

  /** Calls `burst` and returns the progress seen by the time the result arrived, and the result's text. */
  async function burst(client: TestClient, tool: string) {
    const { result, progress } = await client.callTool(tool, { count: COUNT });
    return { progress: [...progress], text: textOf(result) };
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
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await Promise.allSettled(started.map((upstream) => upstream.close()));
  });

  for (const { era, version, direct } of ERAS) {
    describe(`a ${version} upstream`, () => {
      it(`is spoken to in ${version}; a direct client gets 3 of 3 (the reference)`, async ({ expect }) => {
        const { upstream, id } = upstreams.get(era) as { upstream: BurstUpstream; id: string };
        const status = await stack.call("GET", `/v1/servers/${id}`);
        expect(status.body.status).toMatchObject({ state: "connected", protocolVersion: version });
        const client = await connect(direct, upstream.url, false);
        expect(await burst(client, "burst")).toEqual({ progress: EXPECTED, text: `burst of ${COUNT}` });
      });

      for (const flavour of FLAVOURS) {
        for (const endpoint of ["/mcp", "/mcp/{server}"]) {
          it(`${flavour} on ${endpoint}: 3 of 3, in order, before the result`, async ({ expect }) => {
            const { name } = upstreams.get(era) as { name: string };
            const path = endpoint === "/mcp" ? "/mcp" : `/mcp/${name}`;
            const tool = endpoint === "/mcp" ? `${name}__burst` : "burst";
            const client = await connect(flavour, `${stack.api.url}${path}`);
            expect(await burst(client, tool)).toEqual({ progress: EXPECTED, text: `burst of ${COUNT}` });
          });
        }
      }
    });
  }
});
