/**
 * The console's keys, secrets, threads and chats pages in headless Chromium against a stack with the
 * stdio runner: a new key is shown once and gone from the page once dismissed (or left), works, and
 * is refused once revoked; a secret's value is never in the page, its responses or its storage; a
 * thread started through the API shows with its instance and is stopped from the console; a chat's
 * switch round-trips. Every page passes axe, at desktop width and at 375 px in the dark scheme — and
 * axe is shown to fail on a page that breaks a rule.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cursorEntry, type HttpConnection } from "../docs/client-configs";
import {
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
} from "../runner/helpers";
import {
  type ConsoleSession,
  expectAccessible,
  expectNoSecrets,
  openConsole,
  signIn,
} from "../support/browser";

const SECRET_VALUE = "sentinel-console-secret-value-c41e";
const REPLACED_VALUE = "sentinel-console-replaced-value-9b07";

describe("console: keys, secrets, threads, chats", () => {
  let stack: RunnerStack;
  let ui: ConsoleSession;
  let worktree: string;
  const project = uniqueName("proj");
  const perThread = uniqueName("per-thread");
  let perThreadId: string;

  beforeAll(async () => {
    stack = await startRunnerStack({}, { console: true });
    worktree = stack.worktree("console");
    const [projectId, threadId] = await Promise.all([
      createServer(stack, { name: project, command: process.execPath, args: [TINY_STDIO] }),
      createServer(stack, {
        name: perThread,
        command: process.execPath,
        args: [TINY_STDIO],
        scope: "thread",
      }),
    ]);
    perThreadId = threadId;
    await Promise.all([
      reaches(stack, projectId, "connected", 30_000),
      reaches(stack, perThreadId, "connected", 30_000),
    ]);
    ui = await openConsole(stack.api.url);
    await ui.context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await signIn(ui.page);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.cleanup();
  });

  /** The tool names an MCP client lists through `connection` (the SDK's client, as a config would make it). */
  async function toolsThrough(connection: HttpConnection): Promise<string[]> {
    const client = new Client({ name: "console-config", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(connection.url), {
        requestInit: { headers: connection.headers },
      }),
    );
    try {
      return (await client.listTools()).tools.map((tool) => tool.name);
    } finally {
      await client.close();
    }
  }

  /** A data-plane request with a client key. */
  async function withKey(key: string, path: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${stack.api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  }

  it("creates a scoped key, shows it once with a copy button, and forgets it when dismissed", async () => {
    const { page } = ui;
    await page.goto("/#/keys");
    await page.getByRole("heading", { name: "No API keys yet" }).waitFor();
    await expectAccessible(page, "keys (empty)");

    await page.getByLabel("Name", { exact: true }).fill("laptop");
    await page.getByLabel("Only the servers chosen below").check();
    await page.getByRole("checkbox", { name: project }).check();
    await page.getByRole("button", { name: "Create key" }).click();

    const field = page.getByLabel("API key");
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^mgw_/);
    expect(await field.getAttribute("readonly")).not.toBeNull();
    await expect.poll(() => page.locator(".reveal").textContent()).toContain("will not be shown again");
    await expectAccessible(page, "keys (new key shown)");

    await page.getByRole("button", { name: "Copy API key", exact: true }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(key);

    // Its Cursor config, key filled in, copied from the page, connects an MCP client within its scope.
    await page.locator(".reveal summary", { hasText: "Cursor" }).click();
    await page.getByRole("button", { name: "Copy Cursor config", exact: true }).click();
    const cursor = cursorEntry(await page.evaluate<string>("navigator.clipboard.readText()"), "gateway");
    expect(cursor).toEqual({ url: `${stack.api.url}/mcp`, headers: { Authorization: `Bearer ${key}` } });
    expect(await toolsThrough(cursor)).toContain(`${project}__ping`);

    // While shown, the scan finds it (in the field): the scan after dismissal means something.
    await expect(
      expectNoSecrets(ui, [key], { shownOnceBy: { method: "POST", path: "/v1/keys" } }),
    ).rejects.toThrow(/dom/);
    await page.getByRole("button", { name: "Done — hide the key" }).click();
    await field.waitFor({ state: "detached" });
    const row = page.locator("tr[data-key=laptop]");
    expect(await row.locator("[data-col=scope]").textContent()).toContain(project);
    // The key was in the one answer that created it, and nowhere else: not the page, not storage.
    await expectNoSecrets(ui, [key], { shownOnceBy: { method: "POST", path: "/v1/keys" } });

    // It works, within its scope…
    const tools = await withKey(key, "/v1/tools");
    expect(tools.status).toBe(200);
    const names = (tools.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.startsWith(`${project}__`))).toBe(true);

    // …until it is revoked (confirmed first).
    await row.getByRole("button", { name: "Revoke" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("cannot be undone").waitFor();
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await row.waitFor({ state: "detached" });
    await page.getByText("Revoked laptop").waitFor();
    expect((await withKey(key, "/v1/tools")).status).toBe(401);
    expect((await stack.call("GET", "/v1/keys")).body.keys).toEqual([]);
  });

  it("drops a shown key when the admin navigates away", async () => {
    const { page } = ui;
    await page.getByLabel("Name", { exact: true }).fill("ci");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.getByLabel("API key").inputValue();
    expect(key).toMatch(/^mgw_/);
    await page.getByRole("link", { name: "Servers" }).first().click();
    await page.getByRole("heading", { name: "Servers" }).waitFor();
    await page.getByRole("link", { name: "Keys" }).click();
    await page.locator("tr[data-key=ci]").waitFor();
    expect(await page.locator("tr[data-key=ci] [data-col=scope]").textContent()).toContain("every server");
    expect(await page.getByLabel("API key").count()).toBe(0);
    await expectNoSecrets(ui, [key], { shownOnceBy: { method: "POST", path: "/v1/keys" } });
  });

  it("creates a key with an owner (who signs in for its per_user links) and shows it in the list", async () => {
    const { page } = ui;
    await page.goto("/#/keys");
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("eng-ci");
    await page.getByLabel("Owner", { exact: true }).selectOption("group");
    // A name the sign-in never gives is refused next to the field.
    await page.getByLabel("Owner name").fill("eng:ci");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator("#key-owner-name-error").waitFor();
    expect(await page.getByLabel("API key").count()).toBe(0);
    await page.getByLabel("Owner name").fill("engineering");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByLabel("API key").waitFor();
    await expectAccessible(page, "keys (owner chosen)");
    await page.getByRole("button", { name: "Done — hide the key" }).click();
    const row = page.locator("tr[data-key=eng-ci]");
    expect(await row.locator("[data-col=owner]").textContent()).toContain("group:engineering");
    const listed = (await stack.call("GET", "/v1/keys")).body.keys as Array<{ name: string; owner: unknown }>;
    expect(listed.find((key) => key.name === "eng-ci")?.owner).toBe("group:engineering");
    expect(listed.find((key) => key.name === "ci")?.owner).toBeNull();
  });

  it("sets a secret and shows only its names; replaces and deletes it; its values never reach the page", async () => {
    const { page } = ui;
    await page.goto("/#/secrets");
    await page.getByRole("heading", { name: "No secrets yet" }).waitFor();
    await expectAccessible(page, "secrets (empty)");

    await page.getByLabel("Secret name").fill("db");
    await page.getByLabel("Key 1 name").fill("PASSWORD");
    await page.getByLabel("Key 1 value").fill(SECRET_VALUE);
    expect(await page.getByLabel("Key 1 value").getAttribute("type")).toBe("password");
    await page.getByRole("button", { name: "Add key" }).click();
    await page.getByLabel("Key 2 name").fill("USER");
    await page.getByLabel("Key 2 value").fill("reader");
    await page.getByRole("button", { name: "Save secret" }).click();

    const row = page.locator("tr[data-secret=db]");
    await page.getByText("Saved db (2 keys).").waitFor();
    await expect
      .poll(() => row.locator("[data-col=keys] li").allTextContents())
      .toEqual(["PASSWORD", "USER"]);
    // The form starts afresh: no value left in it.
    expect(await page.getByLabel("Secret name").inputValue()).toBe("");
    expect(await page.getByLabel("Key 1 value").inputValue()).toBe("");
    expect(await stack.store.secrets.get("db")).toEqual({ PASSWORD: SECRET_VALUE, USER: "reader" });
    await expectAccessible(page, "secrets");
    await expectNoSecrets(ui, [SECRET_VALUE]);

    // Replace: the names come filled in, the values do not; a removed key is dropped.
    await row.getByRole("button", { name: "Replace db" }).click();
    await page.getByRole("heading", { name: "Replace db" }).waitFor();
    expect(await page.getByLabel("Secret name").inputValue()).toBe("db");
    expect(await page.getByLabel("Key 1 name").inputValue()).toBe("PASSWORD");
    expect(await page.getByLabel("Key 1 value").inputValue()).toBe("");
    await expectAccessible(page, "secrets (replace)");
    await page.getByRole("button", { name: "Remove key USER" }).click();
    await page.getByLabel("Key 1 value").fill(REPLACED_VALUE);
    await page.getByRole("button", { name: "Replace secret" }).click();
    await page.getByText("Saved db (1 key).").waitFor();
    await expect.poll(() => row.locator("[data-col=keys] li").allTextContents()).toEqual(["PASSWORD"]);
    expect(await stack.store.secrets.get("db")).toEqual({ PASSWORD: REPLACED_VALUE });
    await expectNoSecrets(ui, [SECRET_VALUE, REPLACED_VALUE]);

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    expect((await stack.call("GET", "/v1/secrets")).body.secrets).toEqual([]);
  });

  it("shows a thread started through the API with its instance, and stops it from the console", async () => {
    const { page } = ui;
    await page.goto("/#/threads");
    await page.getByRole("heading", { name: "No threads running" }).waitFor();
    await expectAccessible(page, "threads (empty)");

    const threadId = uniqueName("thread");
    const started = await stack.call("POST", `/v1/threads/${threadId}/servers/${perThreadId}`, {
      worktreeRoot: worktree,
    });
    expect(started.status).toBe(201);
    const card = page.locator(`article[data-thread="${threadId}"]`);
    await card.waitFor({ timeout: 15_000 }); // the page polls: no reload
    const instance = card.locator(`tr[data-instance="${perThread}"]`);
    expect(await instance.locator("[data-col=worktree]").textContent()).toContain(worktree);
    await instance.locator("[data-state=connected]").waitFor();
    await expectAccessible(page, "threads");

    await card.getByRole("button", { name: "Stop thread" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Stop" }).click();
    await page.getByText(`Stopped thread ${threadId}: 1 instance ended.`).waitFor();
    await card.waitFor({ state: "detached" });
    expect((await stack.call("GET", `/v1/threads/${threadId}`)).status).toBe(404);
    expect((await stack.instances()).filter((i) => i.threadId === threadId)).toEqual([]);
  });

  it("starts an instance of a thread-scoped server from the console", async () => {
    const { page } = ui;
    const threadId = uniqueName("form-thread");
    await page.getByLabel("Server", { exact: true }).selectOption(perThread);
    // No id yet: said beside the field, and nothing is sent (no /v1/threads//servers/… request).
    await page.getByRole("button", { name: "Start instance" }).click();
    await page.getByText("Enter a thread id: letters, digits").waitFor();
    await page.getByLabel("Thread id").fill(threadId);
    // A directory serves one thread: this one gets a worktree of its own.
    const own = stack.worktree("console-form");
    await page.getByLabel("Worktree root").fill(own);
    await page.getByRole("button", { name: "Start instance" }).click();
    await page.locator(`article[data-thread="${threadId}"] tr[data-instance="${perThread}"]`).waitFor();
    const thread = await stack.call("GET", `/v1/threads/${threadId}`);
    expect(thread.body.instances).toEqual([
      expect.objectContaining({ server: perThread, worktreeRoot: own }),
    ]);
    expect((await stack.call("DELETE", `/v1/threads/${threadId}`)).status).toBe(200);
  });

  it("takes a chat id with a slash in it, and switches within that chat alone", async () => {
    const { page } = ui;
    const chat = `team/${uniqueName("chat")}`;
    await page.goto("/#/chats");
    await page.getByLabel("Chat id").fill(chat);
    await page.getByRole("button", { name: "Show servers" }).click();
    const toggle = page.getByRole("switch", { name: project });
    await toggle.waitFor({ timeout: 10_000 });
    await toggle.uncheck();
    await page.getByText(`${project} is hidden from chat ${chat}.`).waitFor();
    const stored = await stack.call("GET", `/v1/chats/${encodeURIComponent(chat)}/servers`);
    expect(stored.body.servers.find((server: { name: string }) => server.name === project)?.enabled).toBe(
      false,
    );
    await toggle.check();
    await page.getByText(`${project} is shown in chat ${chat}.`).waitFor();
  });

  it("switches a server off for a chat and back on; the API keeps the switch", async () => {
    const { page } = ui;
    const chat = uniqueName("chat");
    await page.goto("/#/chats");
    await expectAccessible(page, "chats");
    await page.getByLabel("Chat id").fill(chat);
    await page.getByRole("button", { name: "Show servers" }).click();
    await expect.poll(() => page.evaluate<string>("location.hash")).toBe(`#/chats/${chat}`);
    const toggle = page.getByRole("switch", { name: project });
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(true);
    await expectAccessible(page, "chat servers");

    const stored = async () =>
      (
        (await stack.call("GET", `/v1/chats/${chat}/servers`)).body.servers as Array<{
          name: string;
          enabled: boolean;
        }>
      ).find((server) => server.name === project)?.enabled;
    await toggle.uncheck();
    await page.getByText(`${project} is hidden from chat ${chat}.`).waitFor();
    expect(await stored()).toBe(false);
    const tools = await stack.call("GET", `/v1/tools?chat=${chat}`);
    expect(tools.body.tools.some((tool: { server: string }) => tool.server === project)).toBe(false);

    await page.reload();
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    await page.getByText(`${project} is shown in chat ${chat}.`).waitFor();
    expect(await stored()).toBe(true);
  });

  it("fails the accessibility check on a page that breaks a rule", async () => {
    const { page } = ui;
    await page.goto("/#/keys");
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.evaluate(`(() => {
      const input = document.createElement("input");
      input.type = "text";
      input.id = "unlabelled-on-purpose";
      document.querySelector("main").append(input);
    })()`);
    await expect(expectAccessible(page, "an unlabelled input")).rejects.toThrow(/label/);
    await page.evaluate(`document.getElementById("unlabelled-on-purpose").remove()`);
    await expectAccessible(page, "keys, fixed again");
  });

  it("every page fits 375 px in the dark scheme and passes axe there", { timeout: 120_000 }, async () => {
    const narrow = await openConsole(stack.api.url, { width: 375, height: 800, colorScheme: "dark" });
    // A step that does not happen fails with its name, within the test's time (a loaded CI machine
    // has taken over 15 s to open a page here).
    narrow.context.setDefaultTimeout(30_000);
    // A long name wraps in its row (the longest a secret may have).
    const long = `${"a-long-secret-name-".repeat(6)}end`;
    expect((await stack.call("PUT", `/v1/secrets/${long}`, { values: { K: "v" } })).status).toBe(200);
    try {
      await signIn(narrow.page);
      for (const [route, heading] of [
        ["keys", "API keys"],
        ["secrets", "Secrets"],
        ["threads", "Threads"],
        ["chats", "Chats"],
      ] as const) {
        await narrow.page.goto(`/#/${route}`);
        await narrow.page.getByRole("heading", { name: heading, exact: true }).waitFor();
        await expect.poll(() => narrow.page.locator(".loading").count(), { timeout: 30_000 }).toBe(0);
        const overflow = await narrow.page.evaluate<number>(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        expect(overflow, `${route} wider than the screen`).toBeLessThanOrEqual(0);
        await expectAccessible(narrow.page, `${route} at 375 px, dark`);
      }
    } finally {
      await narrow.close();
    }
  });
});
