/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector`, on Node 22) against `/mcp` and
 * `/mcp/{server}` with a client key sent through `--header`: `--method tools/list` and
 * `--method tools/call`, asserting on its JSON output.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { ensureNode22 } from "../../scripts/lib/node22";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Json, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type CreatedKey, createKey, type RunResult, runBounded } from "./helpers";

const RUN_TIMEOUT_MS = 45_000;

/** The Inspector's launcher (`--cli` selects its CLI client), resolved through its package.json. */
function inspectorEntry(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("@modelcontextprotocol/inspector/package.json");
  return join(dirname(manifest), "clients", "launcher", "build", "index.js");
}

describe.concurrent("MCP Inspector CLI against the gateway", () => {
  let stack: Stack;
  let alphaUpstream: Upstream;
  let betaUpstream: Upstream;
  const alpha = uniqueName("alpha");
  const beta = uniqueName("beta");
  let key: CreatedKey;
  let scopedKey: CreatedKey;
  let node22: string;
  let home: string;

  /** Runs the Inspector CLI with `args` (bounded), in a throwaway HOME so it writes nothing of ours. */
  function inspector(args: string[]): Promise<RunResult & { json: Json }> {
    return runBounded(node22, [inspectorEntry(), "--cli", ...args], {
      timeoutMs: RUN_TIMEOUT_MS,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        MCP_CATALOG_PATH: join(home, "catalog.json"),
        NO_COLOR: "1",
      },
    }).then((result) => {
      let json: Json;
      try {
        json = JSON.parse(result.stdout);
      } catch {
        json = undefined;
      }
      return { ...result, json };
    });
  }

  const auth = (token: string) => ["--header", `Authorization: Bearer ${token}`];

  beforeAll(async () => {
    node22 = ensureNode22();
    home = mkdtempSync(join(tmpdir(), "mcpgw-inspector-"));
    [stack, alphaUpstream, betaUpstream] = await Promise.all([
      startGatewayStack(),
      startUpstream({ name: "alpha-upstream" }),
      startUpstream({ name: "beta-upstream" }),
    ]);
    await Promise.all([
      createConnected(stack, { name: alpha, url: alphaUpstream.url }),
      createConnected(stack, { name: beta, url: betaUpstream.url }),
    ]);
    [key, scopedKey] = await Promise.all([createKey(stack, "inspector"), createKey(stack, "scoped", [beta])]);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled([alphaUpstream?.close(), betaUpstream?.close()]);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("/mcp: --method tools/list shows both servers' tools, qualified", { timeout: 60_000 }, async ({
    expect,
  }) => {
    const run = await inspector([`${stack.api.url}/mcp`, "--method", "tools/list", ...auth(key.key)]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const names = run.json.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual([
      `${alpha}__add`,
      `${alpha}__echo`,
      `${alpha}__fail`,
      `${alpha}__slow`,
      `${beta}__add`,
      `${beta}__echo`,
      `${beta}__fail`,
      `${beta}__slow`,
    ]);
    expect(run.json.tools.find((tool: { name: string }) => tool.name === `${beta}__add`)).toMatchObject({
      description: "Add two numbers",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    });
  });

  it("/mcp: --method tools/call with --tool-arg through --header auth", { timeout: 60_000 }, async ({
    expect,
  }) => {
    const run = await inspector([
      `${stack.api.url}/mcp`,
      "--transport",
      "http",
      "--method",
      "tools/call",
      "--tool-name",
      `${alpha}__add`,
      "--tool-arg",
      "a=2",
      "b=40",
      ...auth(key.key),
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.json).toMatchObject({
      content: [{ type: "text", text: "42" }],
      structuredContent: { sum: 42 },
    });
  });

  it("/mcp/{server}: tools/list shows its own names, tools/call works unprefixed", {
    timeout: 60_000,
  }, async ({ expect }) => {
    const url = `${stack.api.url}/mcp/${beta}`;
    const [list, call] = await Promise.all([
      // A URL not ending in /mcp: the transport cannot be guessed, so it is named.
      inspector([url, "--transport", "http", "--method", "tools/list", ...auth(scopedKey.key)]),
      inspector([
        url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "text=hello from the inspector",
        ...auth(scopedKey.key),
      ]),
    ]);
    expect(list.code, list.stderr + list.stdout).toBe(0);
    expect(list.json.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "add",
      "echo",
      "fail",
      "slow",
    ]);
    expect(call.code, call.stderr + call.stdout).toBe(0);
    expect(call.json).toMatchObject({
      content: [{ type: "text", text: "hello from the inspector" }],
      structuredContent: { text: "hello from the inspector" },
    });
  });

  it("a tool-level error comes back as an isError result", { timeout: 60_000 }, async ({ expect }) => {
    const run = await inspector([
      `${stack.api.url}/mcp/${alpha}`,
      "--transport",
      "http",
      "--method",
      "tools/call",
      "--tool-name",
      "fail",
      ...auth(key.key),
    ]);
    expect(run.json, run.stderr + run.stdout).toMatchObject({ isError: true, content: [{ text: "boom" }] });
  });

  it("a scoped key sees only its server on /mcp; a wrong key gets no tools", { timeout: 60_000 }, async ({
    expect,
  }) => {
    const [scoped, wrong] = await Promise.all([
      inspector([`${stack.api.url}/mcp`, "--method", "tools/list", ...auth(scopedKey.key)]),
      inspector([`${stack.api.url}/mcp`, "--method", "tools/list", ...auth(`mgw_${"x".repeat(43)}`)]),
    ]);
    expect(scoped.code, scoped.stderr + scoped.stdout).toBe(0);
    expect(scoped.json.tools.map((tool: { name: string }) => tool.name)).toEqual([
      `${beta}__add`,
      `${beta}__echo`,
      `${beta}__fail`,
      `${beta}__slow`,
    ]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.timedOut).toBe(false);
    expect(wrong.json?.tools).toBeUndefined();
    expect(wrong.stdout + wrong.stderr).toMatch(/401|auth|unauthori/i);
  });
});
