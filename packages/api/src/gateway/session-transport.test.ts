import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { plainLegacyRequest } from "./session-transport";

const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } };
const BODIES: unknown[] = [
  call,
  { ...call, id: "a" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
  { jsonrpc: "2.0", id: 3, method: "ping", params: {} },
  { ...call, params: { ...call.params, _meta: { progressToken: "p" } } },
  { ...call, params: { ...call.params, _meta: { progressToken: 1.5 } } },
  { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" } } },
  { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: 7 } } },
  { ...call, params: { ...call.params, _meta: "x" } },
  { ...call, params: [] },
  { ...call, extra: true },
  { ...call, id: null },
  { ...call, id: 1.5 },
  { ...call, jsonrpc: "1.0" },
  { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25" } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 4, result: {} },
  [call, { ...call, id: 2 }],
  "not json-rpc",
];
const VERSIONS = [
  undefined,
  "2025-11-25",
  "2025-06-18",
  "2024-11-05",
  "2026-07-28",
  "2099-01-01",
  "nonsense",
];

function post(body: unknown, version: string | undefined): Request {
  return new Request("http://gateway.test/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(version ? { "mcp-protocol-version": version } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe("plainLegacyRequest", () => {
  it("never calls a request 2025-era that the SDK's classification would not", async () => {
    let sure = 0;
    for (const body of BODIES)
      for (const version of VERSIONS) {
        if (!plainLegacyRequest(post(body, version), body)) continue;
        sure++;
        expect(await isLegacyRequest(post(body, version), body), JSON.stringify({ body, version })).toBe(
          true,
        );
      }
    // It is sure of the plain requests under no header or a 2025 one, not of nothing.
    expect(sure).toBe(5 * 4);
  });

  it("leaves to the SDK initialize, a 2026 claim or header, batches, notifications and answers", () => {
    expect(plainLegacyRequest(post(call, "2026-07-28"), call)).toBe(false);
    for (const body of BODIES.slice(6)) expect(plainLegacyRequest(post(body, undefined), body)).toBe(false);
    const get = new Request("http://gateway.test/mcp", { method: "GET" });
    expect(plainLegacyRequest(get, call)).toBe(false);
  });
});
