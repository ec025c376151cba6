/**
 * The console's server flows in headless Chromium against the stack and real upstreams: sign in, the
 * empty state, add a server and watch it connect without a reload, watch it fail and recover as its
 * upstream stops and starts, and edit it with the masked Authorization header kept.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseClaudeMcpAdd, shellWords } from "../docs/client-configs";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  type ConsoleSession,
  expectAccessible,
  expectNoSecrets,
  openConsole,
  signIn,
} from "../support/browser";
import { type Stack, startStack } from "../support/stack";

const SECRET = "Bearer sentinel-console-secret-7f3a";

/** The latency history chart's caption on a server's page: its legend and summary. */
function latencyCaption({ page }: ConsoleSession) {
  return page
    .locator("figure", { has: page.locator('svg[aria-label^="Latency history"]') })
    .locator("figcaption");
}

describe("console: servers", () => {
  let stack: Stack;
  let upstream: Upstream;
  let ui: ConsoleSession;

  beforeAll(async () => {
    stack = await startStack({ console: true, retryDelaySeconds: 1, callLatencyFlushMs: 200 });
    upstream = await startUpstream({ name: "docs", requireBearer: "sentinel-console-secret-7f3a" });
    ui = await openConsole(stack.api.url);
  });
  afterAll(async () => {
    await ui?.close();
    await upstream?.close();
    await stack?.stop();
  });

  it("signs in with the admin token and shows what to do with no servers", async () => {
    const { page } = ui;
    await expectAccessible(page, "sign-in");
    await signIn(page);
    await page.getByRole("heading", { name: "No servers yet" }).waitFor();
    await expectAccessible(page, "empty servers");
    const cookies = await ui.context.cookies();
    expect(cookies.find((cookie) => cookie.name === "mgw_console")).toMatchObject({
      httpOnly: true,
      sameSite: "Strict",
    });
  });

  it("adds an HTTP server and shows it connecting, then connected with its tool count, without a reload", async () => {
    const { page } = ui;
    await page.getByRole("link", { name: "Add a server" }).click();
    await page.getByLabel("Name").fill("docs");
    await page.getByLabel("URL").fill(upstream.url);
    await page.getByRole("button", { name: "Add header" }).click();
    await page.getByLabel("Headers 1 name").fill("Authorization");
    await page.getByLabel("Headers 1 value").fill(SECRET);
    await expectAccessible(page, "add server");
    // The worker's probe held back a moment: the page is seen connecting before it connects.
    stack.holdProbes();
    await page.getByRole("button", { name: "Add server" }).click();

    await page.getByRole("heading", { name: /docs/ }).waitFor();
    await page.locator("h1 [data-state=connecting]").waitFor();
    stack.releaseProbes();
    await page.locator("h1 [data-state=connected]").waitFor({ timeout: 20_000 });
    await page.getByRole("link", { name: "← Servers" }).click();
    const row = page.locator("tr[data-server=docs]");
    await row.locator("[data-state=connected]").waitFor();
    expect(Number(await row.locator("[data-col=tools]").textContent())).toBeGreaterThan(0);
    await expectAccessible(page, "servers");
  });

  it("shows a stopped upstream as failed / unreachable, and its recovery, without a reload", async () => {
    const { page } = ui;
    const port = upstream.port;
    await upstream.close();
    await stack.sweep();
    const row = page.locator("tr[data-server=docs]");
    await row.locator("[data-state=failed]").waitFor({ timeout: 20_000 });
    expect(await row.textContent()).toContain("unreachable");

    upstream = await startUpstream({ name: "docs", port, requireBearer: "sentinel-console-secret-7f3a" });
    await row.locator("[data-state=connected]").waitFor({ timeout: 20_000 });
  });

  it("edits the server with its masked Authorization header kept, and the upstream still gets the real one", async () => {
    const { page } = ui;
    await page.getByRole("link", { name: "docs" }).click();
    await page.getByRole("link", { name: "Edit" }).click();
    const value = page.getByLabel("Headers 1 value");
    await expect.poll(() => value.inputValue()).toBe("Bearer [SECRET]");
    await page.getByLabel("Timeout (seconds)").fill("45");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: /docs/ }).waitFor();
    await page.locator("h1 [data-state=connected]").waitFor({ timeout: 20_000 });

    const stored = await stack.call("GET", "/v1/servers/docs");
    expect(stored.body.timeoutSeconds).toBe(45);
    expect(upstream.lastHeaders?.authorization).toBe(SECRET);
    await expectNoSecrets(ui, [SECRET, "sentinel-console-secret-7f3a"]);
  });

  it("charts the server's recent latency: its probes and its calls", async () => {
    const { page } = ui;
    for (let i = 0; i < 3; i++) {
      const call = await stack.call("POST", "/v1/tools/docs__echo/call", { arguments: { text: `hi ${i}` } });
      expect(call.status).toBe(200);
    }
    await page.goto("/#/servers/docs");
    // Its probes: drawn failed where the server failed earlier in the same minute (a failure is kept).
    await page.locator("svg.chart circle:is(.probe, .failed)").first().waitFor();
    await page.locator("svg.chart circle.calls").first().waitFor({ timeout: 20_000 });
    // The calls ring's slot under way is written once it ends (10 s): three calls across a slot's edge
    // show as 1, then 3 when the next slot is written and the chart polls again (every 5 s).
    await expect
      .poll(() => latencyCaption(ui).textContent(), { timeout: 30_000 })
      .toMatch(/probes, median \d+ ms · 3 calls/);
    await expectAccessible(page, "server detail");
  }, 45_000);

  it("shows a server with clients failed within 10 s of its upstream dying (no sweep), and its chart keeps the failure after it recovers", async () => {
    const { page } = ui;
    // A client's call: the gateway holds a warm session with the server, which watches it.
    const call = await stack.call("POST", "/v1/tools/docs__echo/call", { arguments: { text: "warm" } });
    expect(call.status).toBe(200);
    await page.goto("/#/servers/docs");
    await page.locator("h1 [data-state=connected]").waitFor();
    const port = upstream.port;

    const killedAt = Date.now();
    await upstream.close();
    await page.locator("h1 [data-state=failed]").waitFor({ timeout: 10_000 });
    expect(Date.now() - killedAt).toBeLessThan(10_000);

    upstream = await startUpstream({ name: "docs", port, requireBearer: "sentinel-console-secret-7f3a" });
    await page.locator("h1 [data-state=connected]").waitFor({ timeout: 20_000 });
    // The failed check stays in the history after the recovery (in the same minute, most likely).
    await page.locator("svg.chart circle.failed").first().waitFor({ timeout: 15_000 });
    await expect.poll(() => latencyCaption(ui).textContent(), { timeout: 15_000 }).toMatch(/[1-9]\d* failed/);
    const legend = await page.locator(".chart-legend li").allTextContents();
    expect(legend.join(" | ")).toMatch(/probe.*\| calls.*\| failed/);
    await expectAccessible(page, "server detail after an outage");
  }, 60_000);

  it("shows the server's MCP URL and client configs: Claude Code's command, copied and given a key, connects to the server alone", async () => {
    const { page } = ui;
    await ui.context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.goto("/#/servers/docs");
    const connect = page.getByRole("region", { name: "Connect a client" });
    expect(await connect.getByLabel("MCP URL").inputValue()).toBe(`${stack.api.url}/mcp/docs`);
    await connect.locator("summary", { hasText: "Claude Code" }).click();
    await connect.getByRole("button", { name: "Copy Claude Code config", exact: true }).click();
    const command = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(command).toContain("<key>");
    await expectAccessible(page, "server detail, connect a client open");

    const created = await stack.call("POST", "/v1/keys", { name: "from-the-page" });
    expect(created.status).toBe(201);
    const added = parseClaudeMcpAdd(shellWords(command.replace("<key>", created.body.key as string)));
    expect(added).toMatchObject({ name: "docs", transport: "http", url: `${stack.api.url}/mcp/docs` });
    const client = new Client({ name: "console-config", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(added.url), { requestInit: { headers: added.headers } }),
    );
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain("echo");
      expect(names.some((name) => name.includes("__"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("exports the server as a .mcp.json entry with its secret header masked", async () => {
    const { page } = ui;
    await page.goto("/#/servers/docs");
    await page.locator("details.export summary").click();
    const exported = JSON.parse(await page.getByLabel(".mcp.json").inputValue());
    const stored = await stack.call("GET", "/v1/servers/docs");
    expect(exported).toEqual({
      mcpServers: {
        docs: {
          type: "http",
          url: upstream.url,
          headers: { Authorization: "Bearer [SECRET]" },
          pinning: stored.body.pinning,
        },
      },
    });
    await expectAccessible(page, "server detail, export open");
    await expectNoSecrets(ui, [SECRET, "sentinel-console-secret-7f3a"]);
  });
});
