/**
 * The client configs of docs/clients.md (and the README's first call) connect: each is read from the
 * docs, parsed as its client parses it, given this stack's URL and a key made through `POST /v1/keys`,
 * and connected with the client's transport and exactly those headers — Claude Code, Cursor and VS Code
 * over streamable HTTP (the MCP SDK's client), Claude Desktop through the real `mcp-remote` spawned as
 * that config says (its bin from node_modules instead of `npx -y`) over stdio, and Python's `mcp`
 * client running the documented script. Each lists the tools and calls `everything__echo`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePythonMcp } from "../../scripts/lib/tools";
import { type Everything, startEverything } from "../fixtures/everything";
import { createConnected, type Stack, startGatewayStack } from "../gateway/helpers";
import { type CreatedKey, createKey, runBounded } from "../mcp/helpers";
import {
  blockUnder,
  codeBlocks,
  cursorEntry,
  desktopEntry,
  fillIn,
  type HttpConnection,
  mcpRemoteHeaders,
  npxPackageArgs,
  parseClaudeMcpAdd,
  shellWords,
  vscodeEntry,
} from "./client-configs";

const ROOT = resolve(import.meta.dirname, "../..");
const CLIENTS_DOC = readFileSync(join(ROOT, "docs", "clients.md"), "utf8");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
/** Bounds each client's connect, list and call. */
const STEP_TIMEOUT_MS = 20_000;
const TOOL = "everything__echo";

/** The `claude mcp add` lines of a markdown text's shell blocks. */
function claudeCommands(markdown: string): string[] {
  return codeBlocks(markdown, "sh").flatMap((block) =>
    block.split("\n").filter((line) => line.startsWith("claude mcp add ")),
  );
}

const MCP_REMOTE_MANIFEST = createRequire(import.meta.url).resolve("mcp-remote/package.json");
const MCP_REMOTE = JSON.parse(readFileSync(MCP_REMOTE_MANIFEST, "utf8")) as {
  version: string;
  bin: Record<string, string>;
};
/** The installed mcp-remote's version: the one docs/clients.md pins. */
const MCP_REMOTE_VERSION = MCP_REMOTE.version;

/** mcp-remote's `mcp-remote` bin, resolved through its package.json. */
function mcpRemoteBin(): string {
  return join(dirname(MCP_REMOTE_MANIFEST), MCP_REMOTE.bin["mcp-remote"] ?? "");
}

/**
 * SIGKILLs the mcp-remote child if it is still running (its command line names `bin`): after a failed
 * connect the SDK closes the transport on timers that do not keep this worker alive, so it could outlive
 * the test.
 */
function killIfRunning(pid: number | undefined | null, bin: string): void {
  if (!pid) return;
  let command: string;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return; // exited
  }
  if (command.includes(bin)) process.kill(pid, "SIGKILL");
}

describe("the documented client configs, against a running gateway", () => {
  let stack: Stack;
  let everything: Everything;
  let key: CreatedKey;
  let home: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "mcpgw-clients-"));
    // OAuth sign-in served, as `npm run dev` serves it: a client that sees the gateway's OAuth metadata
    // must still use the key and not sign in.
    [stack, everything] = await Promise.all([startGatewayStack({ oauth: true }), startEverything()]);
    await createConnected(stack, { name: "everything", url: everything.url });
    key = await createKey(stack, "docs clients");
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /**
   * Connects an SDK client over `transport`; it must list the echo tool and call it. Always closes.
   * `started` runs once the transport has started (a stdio child has its pid).
   */
  async function listsAndCalls(transport: Transport, started: () => void = () => {}): Promise<void> {
    const client = new Client({ name: "docs-clients-test", version: "1.0.0" });
    try {
      const connecting = client.connect(transport, { timeout: STEP_TIMEOUT_MS });
      started();
      await connecting;
      const { tools } = await client.listTools({}, { timeout: STEP_TIMEOUT_MS });
      expect(tools.map((tool) => tool.name)).toContain(TOOL);
      const result = await client.callTool({ name: TOOL, arguments: { message: "hi" } }, undefined, {
        timeout: STEP_TIMEOUT_MS,
      });
      expect(result.content).toEqual([{ type: "text", text: "Echo: hi" }]);
    } finally {
      await client.close();
    }
  }

  /** An HTTP config sends exactly the key's header, and a client with its URL and headers works. */
  async function httpConfigWorks(connection: HttpConnection): Promise<void> {
    expect(connection.headers).toEqual(bearer());
    const { url, headers } = connection;
    await listsAndCalls(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  }

  /** `Authorization: Bearer <the test's key>`. */
  const bearer = () => ({ Authorization: `Bearer ${key.key}` });
  const origin = () => stack.api.url;

  it("the README's first call and docs/clients.md each give a `claude mcp add` command", () => {
    expect(claudeCommands(README)).toHaveLength(1);
    expect(claudeCommands(CLIENTS_DOC)).toHaveLength(1);
    expect(README).toContain("(docs/clients.md)");
  });

  for (const [source, markdown] of [
    ["README.md", README],
    ["docs/clients.md", CLIENTS_DOC],
  ] as const) {
    it(`Claude Code (${source}): the claude mcp add argv over streamable HTTP`, {
      timeout: 60_000,
    }, async () => {
      const [line = ""] = claudeCommands(markdown);
      const added = parseClaudeMcpAdd(shellWords(fillIn(line, origin(), key.key)));
      expect(added).toMatchObject({ name: "gateway", transport: "http", url: `${origin()}/mcp` });
      await httpConfigWorks(added);
    });
  }

  it("Cursor: the mcpServers url entry over streamable HTTP with its headers", {
    timeout: 60_000,
  }, async () => {
    const json = fillIn(blockUnder(CLIENTS_DOC, "Cursor", "json"), origin(), key.key);
    await httpConfigWorks(cursorEntry(json, "gateway"));
  });

  it("VS Code: the http server entry, the key typed into its password input", {
    timeout: 60_000,
  }, async () => {
    const json = fillIn(blockUnder(CLIENTS_DOC, "VS Code", "json"), origin(), key.key, false);
    expect(json, "the workspace file holds no key").not.toContain("mgw_");
    const inputs = (JSON.parse(json) as { inputs: Array<{ id: string; password?: boolean }> }).inputs;
    expect(inputs.find((input) => input.id === "gateway-key")?.password, "the key is typed masked").toBe(
      true,
    );
    await httpConfigWorks(vscodeEntry(json, "gateway", { "gateway-key": key.key }));
  });

  it("Claude Desktop: mcp-remote spawned as configured, over stdio, with no OAuth sign-in", {
    timeout: 60_000,
  }, async () => {
    const json = fillIn(blockUnder(CLIENTS_DOC, "Claude Desktop", "json"), origin(), key.key);
    const entry = desktopEntry(json, "gateway");
    const args = npxPackageArgs(entry, "mcp-remote", MCP_REMOTE_VERSION);
    // Checked before mcp-remote runs: with a header the gateway refuses, it would start an OAuth
    // sign-in and open a browser.
    expect(mcpRemoteHeaders(args, entry.env)).toEqual(bearer());
    // As Claude Desktop spawns it: the SDK's default environment plus the entry's env; HOME (where
    // mcp-remote keeps ~/.mcp-auth) and the working directory in a throwaway directory.
    const bin = mcpRemoteBin();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, ...args],
      env: { ...entry.env, HOME: home },
      cwd: home,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    let pid: number | null = null;
    await listsAndCalls(transport, () => {
      pid = transport.pid;
    })
      .catch((error: Error) => {
        throw new Error(`${error.message}; mcp-remote said:\n${stderr}`);
      })
      .finally(() => killIfRunning(pid, bin));
    // mcp-remote filled the header from env, saw the gateway's OAuth metadata, and connected over
    // streamable HTTP without signing in: no OAuth callback listener, no authorization URL, no browser.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote's log names the placeholder literally
    expect(stderr).toContain("Replacing ${AUTH_HEADER} with environment value in header 'Authorization'");
    expect(stderr).toContain("Discovered authorization server");
    expect(stderr).toContain("Connected to remote server using StreamableHTTPClientTransport");
    expect(stderr).not.toMatch(/callback server|sign-in|authorize|browser/i);
    expect(stderr, "the key stays out of mcp-remote's log").not.toContain(key.key);
  });

  it("Python: the documented script with PyPI mcp lists the tools and calls one", {
    timeout: 180_000,
  }, async () => {
    const python = ensurePythonMcp(); // first run only: mcp from PyPI into .venv-mcp
    const script = join(home, "first_call.py");
    writeFileSync(script, fillIn(blockUnder(CLIENTS_DOC, "Python", "python"), origin(), key.key));
    const run = await runBounded(python, [script], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const [listed = "", echoed] = run.stdout.trim().split("\n");
    expect(listed).toContain(`'${TOOL}'`);
    expect(echoed).toBe("Echo: hi");
  });
});

describe("reading a config as its client does", () => {
  it("shell words: quotes group, expansions and redirections are refused", () => {
    expect(shellWords(`claude mcp add -H "A: b c" 'd e'f`)).toEqual([
      "claude",
      "mcp",
      "add",
      "-H",
      "A: b c",
      "d ef",
    ]);
    expect(() => shellWords(`--header Authorization: Bearer <key>`)).toThrow(/shell would act on </);
    expect(() => shellWords(`--header "Authorization: Bearer $KEY"`)).toThrow(/expand/);
  });

  it("claude mcp add: --header is variadic, so a name after it is read as a header", () => {
    const words = shellWords(`claude mcp add --transport http --header "A: b" gateway http://h/mcp`);
    expect(() => parseClaudeMcpAdd(words)).toThrow(/header/);
    expect(parseClaudeMcpAdd(shellWords(`claude mcp add -t http g http://h/mcp -H "A: b" "C:d"`))).toEqual({
      name: "g",
      transport: "http",
      url: "http://h/mcp",
      headers: { A: "b", C: "d" },
    });
  });

  it("VS Code: an input the file does not declare is an error, not an empty value", () => {
    const json = JSON.stringify({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own placeholder syntax
      servers: { g: { type: "http", url: "http://h/mcp", headers: { A: "Bearer ${input:other}" } } },
    });
    expect(() => vscodeEntry(json, "g", { other: "x" })).toThrow(/not a declared input/);
  });
});
