import { CallFailure } from "@mcpgw/upstream";
import { ProtocolError } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { MAX_ERROR_DATA_BYTES, toMcpError } from "./mcp-errors";

const upstreamError = (data: unknown) =>
  new CallFailure("rpc", "MCP error -32099: no", { cause: new ProtocolError(-32099, "no", data) });

describe("toMcpError of an upstream's JSON-RPC error", () => {
  it("passes its code, message and data on", () => {
    const wire = toMcpError(upstreamError({ reason: "because", detail: [1, 2] }));
    expect([wire.code, wire.message, wire.data]).toEqual([
      -32099,
      "no",
      { reason: "because", detail: [1, 2] },
    ]);
  });

  it(`leaves out data past ${MAX_ERROR_DATA_BYTES} bytes as JSON`, () => {
    expect(toMcpError(upstreamError({ blob: "x".repeat(MAX_ERROR_DATA_BYTES) })).data).toBeUndefined();
    expect(toMcpError(upstreamError({ blob: "x".repeat(MAX_ERROR_DATA_BYTES - 20) })).data).toBeDefined();
  });
});
