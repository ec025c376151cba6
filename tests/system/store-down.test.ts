/**
 * Regression: with the store unreachable, lists and calls answered 500 (creates 503). Now every route
 * class — admin list/get/create/patch/delete, the gateway's list and call, and `/mcp` tools/list and
 * tools/call — answers 503 `store.unavailable` with `Retry-After`, and serves again once the store is
 * back. The stack reaches the emulator through a TCP link the test cuts (connections refused, open
 * ones reset): the real SDK clients meet a real network fault.
 */
import { loadAwsConfig } from "@mcpgw/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Json, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { createKey, rawRequest } from "../mcp/helpers";
import { type CuttableLink, startCuttableLink } from "../support/cuttable-link";
import { waitFor } from "../support/stack";

describe("every route while the store is unreachable", () => {
  let link: CuttableLink;
  let stack: Stack;
  let upstream: Upstream;
  let id: string;
  let key: string;
  const name = uniqueName("down");

  beforeAll(async () => {
    link = await startCuttableLink(loadAwsConfig().endpoint ?? "");
    stack = await startGatewayStack({ aws: { endpoint: link.endpoint } });
    upstream = await startUpstream({ name: "down" });
    id = await createConnected(stack, { name, url: upstream.url });
    key = (await createKey(stack, uniqueName("key"))).key;
  }, 60_000);
  afterAll(async () => {
    await link?.mend().catch(() => undefined);
    await stack?.stop();
    await upstream?.close();
    await link?.close();
  });

  /** A JSON-RPC request to `/mcp` with the client key (2025, no session: answered as JSON). */
  const mcp = (method: string, params: Json) =>
    rawRequest(`${stack.api.url}/mcp`, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: "application/json",
        "mcp-protocol-version": "2025-06-18",
      },
      body: { jsonrpc: "2.0", id: 9, method, params },
    });

  const routes: Array<[string, () => Promise<{ status: number; body: Json; headers: Json }>]> = [
    ["admin list", () => stack.request("GET", "/v1/servers")],
    ["admin get", () => stack.request("GET", `/v1/servers/${id}`)],
    [
      "admin create",
      () => stack.request("POST", "/v1/servers", { body: { name: uniqueName("new"), url: upstream.url } }),
    ],
    ["admin patch", () => stack.request("PATCH", `/v1/servers/${id}`, { body: { timeoutSeconds: 20 } })],
    ["admin delete", () => stack.request("DELETE", `/v1/servers/${id}`)],
    ["gateway list", () => stack.request("GET", "/v1/tools")],
    [
      "gateway call",
      () => stack.request("POST", `/v1/tools/${name}__echo/call`, { body: { arguments: { text: "hi" } } }),
    ],
    ["mcp tools/list", () => mcp("tools/list", {})],
    ["mcp tools/call", () => mcp("tools/call", { name: `${name}__echo`, arguments: { text: "hi" } })],
  ];

  it("answers 503 store.unavailable with Retry-After on every route class, never 500; then serves again", async () => {
    // Prepare: everything answers while the store does
    expect((await stack.request("GET", "/v1/tools")).status).toBe(200);

    // Act: the link to the store is cut
    await link.cut();

    // Assess: past the directory's staleness bound (2 s), every route class says the store is away
    await waitFor(
      () => stack.request("GET", "/v1/tools"),
      (r) => r.status !== 200,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    for (const [route, request] of routes) {
      const response = await request();
      const headers = response.headers as Headers | Record<string, string>;
      const retryAfter = headers instanceof Headers ? headers.get("retry-after") : headers["retry-after"];
      const code = response.body?.code ?? response.body?.error?.data?.code;
      expect({ route, status: response.status, code, retryAfter }).toEqual({
        route,
        status: 503,
        code: "store.unavailable",
        retryAfter: "1",
      });
    }

    // Not ready, and saying why; yet alive
    const readyz = await fetch(`${stack.api.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { checks: Record<string, string> }).checks).toMatchObject({
      table: "unreachable",
    });
    expect((await fetch(`${stack.api.url}/healthz`)).status).toBe(200);

    // Act: the link is mended
    await link.mend();

    // Assess: served again, the server untouched by the refused writes
    const back = await waitFor(
      () => stack.request("GET", `/v1/servers/${id}`),
      (r) => r.status === 200,
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(back.body.timeoutSeconds).not.toBe(20);
    const call = await waitFor(
      () => stack.callTool(`${name}__echo`, { text: "back" }),
      (r) => r.status === 200,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(call.body.content[0].text).toContain("back");
  }, 90_000);
});
