/**
 * The console adds a command-based (stdio) server — command, argument list, an env value — and sees it
 * connect through the runner; the env value comes back masked on edit and never reaches the page; its
 * isolation (one child per caller) is set on the form and shown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRunnerStack, TINY_STDIO } from "../runner/helpers";
import {
  type ConsoleSession,
  expectAccessible,
  expectNoSecrets,
  openConsole,
  signIn,
} from "../support/browser";

const ENV_SECRET = "sentinel-console-env-51c9";

describe("console: stdio servers", () => {
  let stack: Awaited<ReturnType<typeof startRunnerStack>>;
  let ui: ConsoleSession;

  beforeAll(async () => {
    stack = await startRunnerStack({}, { console: true });
    ui = await openConsole(stack.api.url);
    await signIn(ui.page);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.stop();
    await stack?.cleanup();
  });

  it("adds a stdio server with args and env, sees it connected with its tools, and the env value masked", async () => {
    const { page } = ui;
    await page.goto("/#/servers/new");
    await page.getByLabel("Command (stdio)").check();
    await page.getByLabel("Name").fill("tiny");
    await page.getByLabel("Command", { exact: true }).fill(process.execPath);
    await page.getByRole("button", { name: "Add argument" }).click();
    await page.getByLabel("argument 1", { exact: true }).fill(TINY_STDIO);
    await page.getByRole("button", { name: "Add env" }).click();
    await page.getByLabel("Environment 1 name").fill("API_KEY");
    await page.getByLabel("Environment 1 value").fill(ENV_SECRET);
    await page.getByLabel("Isolation").selectOption("per_caller");
    await expectAccessible(page, "add stdio server");
    await page.getByRole("button", { name: "Add server" }).click();

    await page.locator("h1 [data-state=connected]").waitFor({ timeout: 30_000 });
    await page.locator(`details[data-tool="tiny__ping"]`).waitFor();
    expect(await page.locator("[data-field=toolCount]").textContent()).not.toBe("0");
    await page.getByText("one child per caller").waitFor();
    const stored = (await stack.call("GET", "/v1/servers")).body.servers.find(
      (server: { name: string }) => server.name === "tiny",
    );
    expect(stored.isolation).toBe("per_caller");

    await page.getByRole("link", { name: "Edit" }).click();
    await expect.poll(() => page.getByLabel("Environment 1 value").inputValue()).toBe("[SECRET]");
    await expect.poll(() => page.getByLabel("argument 1", { exact: true }).inputValue()).toBe(TINY_STDIO);
    await expect.poll(() => page.getByLabel("Isolation").inputValue()).toBe("per_caller");
    await page.getByRole("link", { name: "Cancel" }).click();
    await expectNoSecrets(ui, [ENV_SECRET]);
  });

  it("shows why a stdio server failed: a typo'd script's stderr, scrubbed; a whole command line's hint", async () => {
    const { page } = ui;
    const typo = await stack.call("POST", "/v1/servers", {
      name: "typo",
      command: process.execPath,
      args: [`${TINY_STDIO}x`],
      env: { API_KEY: ENV_SECRET },
    });
    expect(typo.status).toBe(201);
    await page.goto("/#/servers/typo");
    await page.locator("h1", { hasText: "typo" }).locator("[data-state=failed]").waitFor({ timeout: 30_000 });
    const stderr = page.getByRole("figure", { name: "The child's stderr, last lines" });
    await expect
      .poll(() => stderr.locator("pre").textContent(), { timeout: 10_000 })
      .toContain("Cannot find module");
    expect(await page.locator("h1 .reason").textContent()).not.toMatch(/· failed$/);
    await expectAccessible(page, "stdio server failed, its stderr shown");
    await expectNoSecrets(ui, [ENV_SECRET]);

    const whole = await stack.call("POST", "/v1/servers", { name: "whole", command: "npx -y some-server" });
    expect(whole.status).toBe(201);
    await page.goto("/#/servers/whole");
    await page
      .locator("h1", { hasText: "whole" })
      .locator("[data-state=failed]")
      .waitFor({ timeout: 30_000 });
    expect(await page.locator("h1 .reason").textContent()).toBe(" · command not found");
    expect(await page.locator("[data-field=lastError]").textContent()).toContain(
      "put the program in command and each argument in args",
    );
  }, 60_000);
});
