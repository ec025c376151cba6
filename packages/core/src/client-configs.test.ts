import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blockUnder } from "../../../tests/docs/client-configs";
import { clientConfigs, MCP_REMOTE } from "./client-configs";

const DOCS = readFileSync(new URL("../../../docs/clients.md", import.meta.url), "utf8");

describe("client configs", () => {
  it("are what docs/clients.md shows, for npm run dev's /mcp and a <key> placeholder", () => {
    const configs = clientConfigs({ url: "http://127.0.0.1:8787/mcp", name: "gateway", key: "<key>" });
    expect(configs.map((config) => config.title)).toEqual([
      "Claude Code",
      "Claude Desktop",
      "Cursor",
      "VS Code",
    ]);
    for (const config of configs)
      expect(`${config.text}\n`).toBe(blockUnder(DOCS, config.title, config.language));
  });

  it("pin the mcp-remote release the docs' tests install", () => {
    const manifest = JSON.parse(
      readFileSync(new URL("../../../node_modules/mcp-remote/package.json", import.meta.url), "utf8"),
    ) as { version: string };
    expect(MCP_REMOTE).toBe(`mcp-remote@${manifest.version}`);
  });

  it("fill in a server's URL and a real key as valid JSON and one shell line", () => {
    const target = { url: "https://gw.example.com/mcp/docs", name: "docs", key: "mgw_abc-123_XYZ" };
    const [code, desktop, cursor, vscode] = clientConfigs(target);
    expect(code?.text).toBe(
      'claude mcp add --transport http docs https://gw.example.com/mcp/docs --header "Authorization: Bearer mgw_abc-123_XYZ"',
    );
    expect(JSON.parse(desktop?.text ?? "").mcpServers.docs).toEqual({
      command: "npx",
      args: ["-y", MCP_REMOTE, target.url, "--header", `Authorization:${"$"}{AUTH_HEADER}`],
      env: { AUTH_HEADER: `Bearer ${target.key}` },
    });
    expect(JSON.parse(cursor?.text ?? "").mcpServers.docs).toEqual({
      url: target.url,
      headers: { Authorization: `Bearer ${target.key}` },
    });
    const vs = JSON.parse(vscode?.text ?? "");
    expect(vs.servers.docs.headers.Authorization).toBe(`Bearer ${"$"}{input:docs-key}`);
    expect(vscode?.text).not.toContain(target.key);
  });
});
