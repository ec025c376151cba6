/**
 * The console's import in headless Chromium against the stack and a real upstream: an invalid
 * document shows the API's message; a pasted `.mcp.json` with an http entry and a name conflict is
 * previewed (created / skipped, then replaced), imported, and its servers connect with the imported
 * Authorization header — which never shows anywhere the console keeps things; an uploaded file is read
 * into the document.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  type ConsoleSession,
  expectAccessible,
  expectNoSecrets,
  openConsole,
  signIn,
} from "../support/browser";
import { type Stack, startStack } from "../support/stack";

const TOKEN = "sentinel-import-4b7e21c9";

/** The names a preview (or the import's report) lists under `outcome`. */
async function listed(page: Page, section: string, outcome: string): Promise<string[]> {
  return page.locator(`${section} [data-outcome=${outcome}] li`).allTextContents();
}

describe("console: import", () => {
  let stack: Stack;
  let upstream: Upstream;
  let ui: ConsoleSession;

  beforeAll(async () => {
    stack = await startStack({ console: true, retryDelaySeconds: 1 });
    upstream = await startUpstream({ name: "imported", requireBearer: TOKEN });
    // Taken before the import, pointing nowhere: the document's `legacy` clashes with it.
    const legacy = await stack.call("POST", "/v1/servers", {
      transport: "http",
      name: "legacy",
      url: "http://127.0.0.1:9/mcp",
    });
    expect(legacy.status).toBe(201);
    ui = await openConsole(stack.api.url);
  });
  afterAll(async () => {
    await ui?.close();
    await upstream?.close();
    await stack?.stop();
  });

  it("shows the API's message for an invalid document, and its own for text that is not JSON", async () => {
    const { page } = ui;
    await signIn(page);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Import" }).click();
    await page.getByRole("heading", { name: "Import a .mcp.json" }).waitFor();
    await expectAccessible(page, "import");

    const documentField = page.getByLabel("Document (JSON)");
    await documentField.fill(JSON.stringify({ mcpServers: { broken: { args: ["--flag"] } } }));
    await page.getByRole("button", { name: "Preview" }).click();
    const problem = page.locator(".problem");
    await problem.waitFor();
    const text = await problem.textContent();
    expect(text).toContain("broken: Needs either `command` (stdio) or `url` (HTTP).");
    expect(text).toContain("import.invalid_entry");
    expect(await page.locator(".import-preview").count()).toBe(0);
    await expectAccessible(page, "import, a problem");

    await documentField.fill('{"mcpServers": {');
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator(".problem", { hasText: "not valid JSON" }).waitFor();
  });

  it("previews created, skipped and replaced servers, imports them, and they connect; the token never shows", async () => {
    const { page } = ui;
    const entry = { type: "http", url: upstream.url, headers: { Authorization: `Bearer ${TOKEN}` } };
    await page
      .getByLabel("Document (JSON)")
      .fill(JSON.stringify({ mcpServers: { docs: entry, legacy: { ...entry, type: undefined } } }, null, 2));
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator(".import-preview").waitFor();
    expect(await listed(page, ".import-preview", "created")).toEqual(["docs"]);
    expect(await listed(page, ".import-preview", "skipped")).toEqual(["legacy"]);
    expect(await listed(page, ".import-preview", "replaced")).toEqual([]);
    expect(await page.getByRole("button", { name: "Import 1 server" }).isVisible()).toBe(true);

    await page.getByRole("radio", { name: /Replace it/ }).check();
    await page.getByRole("button", { name: "Import 2 servers" }).waitFor();
    expect(await listed(page, ".import-preview", "replaced")).toEqual(["legacy"]);
    expect(await listed(page, ".import-preview", "skipped")).toEqual([]);
    expect(await listed(page, ".import-preview", "created")).toEqual(["docs"]);
    const stored = await stack.call("GET", "/v1/servers?limit=100");
    expect(stored.body.servers.map((server: { name: string }) => server.name)).toEqual(["legacy"]);
    await expectAccessible(page, "import preview");

    await page.getByRole("button", { name: "Import 2 servers" }).click();
    await page.locator(".import-done").waitFor();
    expect(await listed(page, ".import-done", "created")).toEqual(["docs"]);
    expect(await listed(page, ".import-done", "replaced")).toEqual(["legacy"]);
    expect(await page.getByLabel("Document (JSON)").inputValue()).toBe("");

    await page.getByRole("link", { name: "Go to the servers" }).click();
    for (const name of ["docs", "legacy"]) {
      await page.locator(`tr[data-server=${name}] [data-state=connected]`).waitFor({ timeout: 20_000 });
    }
    expect(upstream.lastHeaders?.authorization).toBe(`Bearer ${TOKEN}`);
    const legacy = await stack.call("GET", "/v1/servers/legacy");
    expect(legacy.body).toMatchObject({ url: upstream.url, version: 2 });

    await page.getByRole("link", { name: "docs" }).click();
    await page.getByText("Authorization: Bearer [SECRET]").waitFor();
    await expectNoSecrets(ui, [TOKEN]);
  });

  it("reads an uploaded file into the document, previews it, and clears it", async () => {
    const { page } = ui;
    await page.setViewportSize({ width: 375, height: 800 });
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Import" }).click();
    const vsCode = { servers: { "from-file": { type: "http", url: upstream.url } } };
    await page.getByLabel("Upload a file").setInputFiles({
      name: "mcp.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(vsCode)),
    });
    const documentField = page.getByLabel("Document (JSON)");
    await expect.poll(() => documentField.inputValue()).toContain("from-file");
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator(".import-preview").waitFor();
    expect(await listed(page, ".import-preview", "created")).toEqual(["from-file"]);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);

    await page.getByRole("button", { name: "Clear" }).click();
    expect(await documentField.inputValue()).toBe("");
    expect(await page.locator(".import-preview").count()).toBe(0);
    expect((await stack.call("GET", "/v1/servers/from-file")).status).toBe(404);
  });
});
