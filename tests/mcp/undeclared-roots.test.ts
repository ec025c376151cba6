/**
 * An upstream (server-everything, 2025 only) asks `roots/list` while a caller's long-running call is
 * under way — it asks each new session for its roots, 350 ms after it starts — and that caller, an SDK
 * v2 client on 2026-07-28, declared no roots capability: the gateway answers the upstream itself (no
 * roots; it declared roots to the upstream) and the call goes on, on `/mcp/{server}` as on `/mcp`.
 * Each case has a server of its own, so its call is the first on a fresh upstream session.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type CreatedKey, createKey } from "./helpers";

const LONG_CALL = "trigger-long-running-operation";

describe("an upstream's roots/list to a caller that declared no roots", () => {
  let stack: Stack;
  let everything: Everything;
  let key: CreatedKey;

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startGatewayStack(), startEverything()]);
    key = await createKey(stack, "no roots");
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
  });

  for (const endpoint of ["/mcp/{server}", "/mcp"] as const) {
    it(`an SDK v2 client's long-running call on ${endpoint} completes`, async ({ expect }) => {
      const name = uniqueName("roots");
      await createConnected(stack, { name, url: everything.url });
      const [path, tool] =
        endpoint === "/mcp" ? ["/mcp", `${name}__${LONG_CALL}`] : [`/mcp/${name}`, LONG_CALL];
      const client = new Client(
        { name: "no-roots", version: "1.0.0" },
        { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${key.key}` } },
        }),
      );
      try {
        const result = await client.callTool(
          { name: tool, arguments: { duration: 2, steps: 4 } },
          { timeout: 15_000 },
        );
        expect(result.content).toEqual([
          { type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 4." },
        ]);
      } finally {
        await client.close();
      }
    });
  }
});
