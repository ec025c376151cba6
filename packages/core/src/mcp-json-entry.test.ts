import { describe, expect, it } from "vitest";
import { parseMcpJson } from "./mcp-json";
import { mcpJsonDocument, mcpJsonEntry } from "./mcp-json-entry";

describe("a server as a .mcp.json entry", () => {
  it("reads back through the import as the same server, HTTP and stdio", () => {
    const http = {
      transport: "http" as const,
      url: "https://docs.example.com/mcp",
      headers: { "X-Team": "docs" },
      enabled: false,
      relaySessionLogs: true,
      pinning: "off",
    };
    const stdio = {
      transport: "stdio" as const,
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
      env: { LOG_FORMAT: "json" },
      enabled: true,
      isolation: "per_caller",
    };
    const document = {
      mcpServers: { docs: mcpJsonEntry(http), every: mcpJsonEntry(stdio) },
    };
    expect(parseMcpJson(JSON.parse(JSON.stringify(document)))).toEqual([
      expect.objectContaining({ name: "docs", ...http }),
      expect.objectContaining({ name: "every", ...stdio }),
    ]);
  });

  it("leaves defaults out, and keeps masked values masked: the import refuses them until replaced", () => {
    const text = mcpJsonDocument("docs", {
      transport: "http",
      url: "https://docs.example.com/mcp",
      headers: { Authorization: "Bearer [SECRET]" },
      enabled: true,
    });
    expect(JSON.parse(text)).toEqual({
      mcpServers: {
        docs: {
          type: "http",
          url: "https://docs.example.com/mcp",
          headers: { Authorization: "Bearer [SECRET]" },
        },
      },
    });
    expect(() => parseMcpJson(JSON.parse(text))).toThrow(/SECRET|mask/i);
    expect(
      mcpJsonEntry({
        transport: "stdio",
        command: "node",
        args: [],
        env: {},
        enabled: true,
        isolation: "shared",
      }),
    ).toEqual({
      command: "node",
    });
  });
});
