import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("connection lifecycle: connect", () => {
  let stack: Stack;
  let upstream: Upstream;
  beforeAll(async () => {
    stack = await startStack();
    upstream = await startUpstream({ name: "first" });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  const statusOf = (id: string) => async () => (await stack.call("GET", `/v1/servers/${id}`)).body.status;

  it("create → connected with the tool count and a latency; tools listed", async () => {
    const created = await stack.call("POST", "/v1/servers", { name: "first", url: upstream.url });
    expect(created.status).toBe(201);
    expect(created.body.status.state).toBe("connecting");

    const status = await waitFor(statusOf(created.body.id), (s) => s.state !== "connecting");

    expect(status).toMatchObject({ state: "connected", reason: null, toolCount: 4 });
    expect(status.lastConnectionLatencyMs).toBeGreaterThanOrEqual(0);
    expect(status.lastSuccessfulConnectionAt).toEqual(expect.any(String));
    const tools = await stack.call("GET", `/v1/servers/${created.body.id}/tools`);
    expect(tools.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      "add",
      "echo",
      "fail",
      "slow",
    ]);
  });
});
