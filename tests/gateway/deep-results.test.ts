/**
 * A hostile upstream's deeply nested answer fails only its call, as the upstream's error: a tool
 * result nested 100,000 deep (in `structuredContent` or inside a content part) is 502 `upstream.error`
 * on the REST call path and a JSON-RPC error on `/mcp` — never a 500 — and the server stays connected,
 * answering the next call.
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHuge } from "../fixtures/huge-upstream-process";
import { connectClient } from "../mcp/helpers";
import {
  createConnected,
  type Stack,
  startGatewayStack,
  statusReader,
  TEST_ADMIN_TOKEN,
  uniqueName,
} from "./helpers";

describe("gateway: deeply nested results", () => {
  let stack: Stack;
  let upstream: ChildProcess;
  let id: string;
  const name = uniqueName("deep");

  beforeAll(async () => {
    stack = await startGatewayStack();
    const huge = await startHuge([]);
    upstream = huge.child;
    id = await createConnected(stack, { name, url: huge.url });
  }, 30_000);
  afterAll(async () => {
    await stack?.stop();
    upstream?.kill("SIGKILL");
  });

  it("a result nested 100,000 deep is 502 upstream.error on REST, the server still connected; 200 deep passes", async () => {
    for (const where of ["structured", "content"]) {
      const response = await stack.callTool(`${name}__deep`, { levels: 100_000, where });
      expect(response.status, JSON.stringify(response.body)).toBe(502);
      expect(response.body).toMatchObject({ code: "upstream.error", status: 502 });
      expect(response.body.detail).toMatch(/nest/);
    }
    const small = await stack.callTool(`${name}__small`);
    expect(small.status).toBe(200);
    expect(small.body.text).toBe("small");
    expect((await statusReader(stack, id)()).state).toBe("connected");
    // A result inside the bound passes whole.
    const inside = await stack.callTool(`${name}__deep`, { levels: 200 });
    expect(inside.status).toBe(200);
    let depth = 0;
    for (let value = inside.body.structuredContent; typeof value === "object"; value = value.a) depth++;
    expect(depth).toBe(200);
  });

  it("on /mcp the deep result is the call's JSON-RPC error, and the session goes on", async () => {
    const client = await connectClient(`${stack.api.url}/mcp`, TEST_ADMIN_TOKEN);
    try {
      await expect(
        client.callTool({ name: `${name}__deep`, arguments: { levels: 100_000 } }),
      ).rejects.toThrow(/nest/);
      const small = await client.callTool({ name: `${name}__small`, arguments: {} });
      expect(small.content).toEqual([{ type: "text", text: "small" }]);
    } finally {
      await client.close();
    }
  });
});
