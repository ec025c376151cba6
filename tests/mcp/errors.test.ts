/**
 * One error map: an upstream's JSON-RPC error on tools/call reaches the MCP client with the upstream's
 * own code and message (scrubbed of the credentials the gateway sent it), on `/mcp` and `/mcp/{server}`
 * alike; the gateway's own problems carry the JSON-RPC code of the one error table, with their dotted
 * code in `data.code`.
 */
import { ERROR_CODES } from "@mcpgw/core";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { connectClient, createKey } from "./helpers";

const TOKEN = "sk-upstream-secret-7e1f";

describe("MCP errors through the gateway", () => {
  let stack: Stack;
  let upstream: Upstream;
  const name = uniqueName("rejecting");

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstream = await startUpstream({
      name: "rejecting",
      requireBearer: TOKEN,
      rejectWith: { code: -32042, message: `quota exceeded for Bearer ${TOKEN}` },
    });
    await createConnected(stack, { name, url: upstream.url, headers: { Authorization: `Bearer ${TOKEN}` } });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it.each(["/mcp", "/mcp/{server}"])(
    "%s: the upstream's JSON-RPC error on tools/call arrives with its code, scrubbed",
    async (endpoint) => {
      const key = await createKey(stack, uniqueName("errors"));
      const path = endpoint === "/mcp" ? "/mcp" : `/mcp/${name}`;
      const client = await connectClient(`${stack.api.url}${path}`, key.key);
      try {
        const failure = await client
          .callTool({ name: endpoint === "/mcp" ? `${name}__reject` : "reject", arguments: {} })
          .catch((error: unknown) => error);

        expect(failure).toBeInstanceOf(McpError);
        expect((failure as McpError).code).toBe(-32042);
        expect((failure as McpError).message).toContain("quota exceeded for [REDACTED]");
        expect((failure as McpError).message).not.toContain(TOKEN);
      } finally {
        await client.close();
      }
    },
  );

  it("a gateway problem carries the table's JSON-RPC code and its dotted code", async () => {
    const key = await createKey(stack, uniqueName("errors"));
    const client = await connectClient(`${stack.api.url}/mcp`, key.key);
    try {
      const failure = (await client
        .callTool({ name: `${name}__missing_tool`, arguments: {} })
        .catch((error: unknown) => error)) as McpError;

      expect(failure.code).toBe(ERROR_CODES["tool.not_found"][2]);
      expect(failure.data).toMatchObject({ code: "tool.not_found" });
    } finally {
      await client.close();
    }
  });
});
