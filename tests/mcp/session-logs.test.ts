/**
 * What an upstream logs outside any call (`notifications/message` on its 2025 session's GET stream)
 * reaches the 2025 clients listening on `/mcp/{server}` — on their own GET stream — and no one else.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type SessionLogUpstream, startSessionLogUpstream } from "../fixtures/session-log-upstream";
import { createConnected, type Stack, sleep, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type CreatedKey, createKey } from "./helpers";

const TIMEOUT_MS = 10_000;

describe("session-level upstream logs", () => {
  let stack: Stack;
  let upstream: SessionLogUpstream;
  let key: CreatedKey;
  const name = uniqueName("slog");
  const clients: Client[] = [];

  /** A 2025-11-25 client of `path` that records the data of every log message it hears. */
  async function listener(path: string): Promise<{ client: Client; heard: unknown[] }> {
    const client = new Client({ name: "session-logs-e2e", version: "1.0.0" });
    clients.push(client);
    const heard: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      heard.push(notification.params.data);
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key.key}` } },
    });
    await client.connect(transport, { timeout: TIMEOUT_MS });
    return { client, heard };
  }

  beforeAll(async () => {
    [stack, upstream] = await Promise.all([startGatewayStack(), startSessionLogUpstream()]);
    await createConnected(stack, { name, url: upstream.url });
    key = await createKey(stack, "session logs");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await upstream?.close();
  });

  it("reach a 2025 client's GET stream on /mcp/{server} within 5 s; a client of /mcp hears none", async ({
    expect,
  }) => {
    const own = await listener(`/mcp/${name}`);
    const aggregate = await listener("/mcp");
    // A call warms the gateway's session with the upstream (which then opens its GET stream).
    const echoed = await own.client.callTool({ name: "echo", arguments: { text: "warm" } }, undefined, {
      timeout: TIMEOUT_MS,
    });
    expect(echoed.content).toEqual([{ type: "text", text: "warm" }]);

    // Both GET streams open asynchronously after connecting: log until one is heard.
    const sent: string[] = [];
    for (let attempt = 0; attempt < 25 && own.heard.length === 0; attempt++) {
      sent.push(`outside any call ${attempt}`);
      upstream.log(sent.at(-1) as string);
      await sleep(200);
    }
    expect(own.heard.length).toBeGreaterThan(0);
    expect(sent).toEqual(expect.arrayContaining(own.heard));
    expect(aggregate.heard).toEqual([]);
  });
});
