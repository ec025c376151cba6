/**
 * An upstream that takes OAuth, from the console: added with "Sign in with OAuth", its page says it
 * needs an authorization; Authorize opens the upstream's authorization server in a new tab, which
 * comes back to the gateway's callback, and the page shows the server connected and authorized.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthUpstream, startOAuthUpstream } from "../fixtures/oauth-upstream";
import { type ConsoleSession, expectAccessible, openConsole, signIn } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

describe("console: an upstream that needs OAuth", () => {
  let stack: Stack;
  let upstream: OAuthUpstream;
  let ui: ConsoleSession;
  beforeAll(async () => {
    stack = await startStack({ console: true });
    upstream = await startOAuthUpstream();
    ui = await openConsole(stack.api.url);
    await signIn(ui.page);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.stop();
    await upstream?.close();
  });

  it("is added with OAuth, authorized from its page in a new tab, and connects", async () => {
    const { page } = ui;
    await page.goto("/#/servers/new");
    await page.getByLabel("Name").fill("guarded");
    await page.getByLabel("URL").fill(upstream.url);
    await page.getByLabel("Sign in with OAuth").check();
    await page.getByRole("button", { name: "Add server" }).click();

    await page.getByText("guarded needs an authorization.").waitFor({ timeout: 20_000 });
    expect(await page.locator("[data-field=authorization]").textContent()).toBe("authorization required");
    await expectAccessible(page, "server needing authorization");

    const popup = page.waitForEvent("popup");
    await page.getByRole("button", { name: "Authorize" }).click();
    const tab = await popup;
    await tab.waitForURL(/\/oauth\/upstream\/callback/);
    expect(await tab.textContent("body")).toContain("authorized");
    await tab.close();

    await page.locator("h1 [data-state=connected]").waitFor({ timeout: 20_000 });
    await expect
      .poll(() => page.locator("[data-field=authorization]").textContent())
      .toMatch(/^authorized, until /);
    const server = await stack.call("GET", "/v1/servers/guarded");
    expect(server.body.auth).toEqual({ type: "oauth", mode: "shared" });
  });

  it("is added per user: the admin's authorization is their own connection, and the mode is shown", async () => {
    const { page } = ui;
    await page.goto("/#/servers/new");
    await page.getByLabel("Name").fill("mine");
    await page.getByLabel("URL").fill(upstream.url);
    await page.getByLabel("Sign in with OAuth").check();
    await page.getByLabel("OAuth connection").selectOption("per_user");
    await page.getByRole("button", { name: "Add server" }).click();
    await page.getByText("mine needs an authorization.").waitFor({ timeout: 20_000 });
    expect(await page.locator("form.notice").textContent()).toContain("this is your own connection");
    expect(await page.getByText("per user: each caller's own connection").count()).toBe(1);
    const server = await stack.call("GET", "/v1/servers/mine");
    expect(server.body.auth).toEqual({ type: "oauth", mode: "per_user" });
    await expectAccessible(page, "per-user server needing authorization");
  });
});
