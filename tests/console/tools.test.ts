/**
 * The console's tools in headless Chromium against the stack and a real upstream: the empty
 * catalogue, the catalogue grouped by server with its filter, a tool's schema (a required field by its
 * label) and its "Try it" form on the Tools page and on the server's page, and a tool-level failure
 * (`isError`) shown as an error in words.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type ConsoleSession, expectAccessible, openConsole, signIn } from "../support/browser";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("console: tools", () => {
  let stack: Stack;
  let upstream: Upstream;
  let ui: ConsoleSession;
  let everything: Everything | undefined;

  beforeAll(async () => {
    stack = await startStack({ console: true });
    upstream = await startUpstream({ name: "docs" });
    ui = await openConsole(stack.api.url);
  });
  afterAll(async () => {
    await ui?.close();
    await everything?.stop();
    await upstream?.close();
    await stack?.stop();
  });

  /** The Tools page with one tool opened (filtered to it); its view. */
  async function openTool(name: string) {
    const { page } = ui;
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Tools" }).click();
    await page.getByLabel("Filter").fill(name);
    await page.locator(`details[data-tool="${name}"] > summary`).click();
    return page.locator(`article[data-tool="${name}"]`);
  }

  it("tells the admin to add a server while there are no tools", async () => {
    const { page } = ui;
    await signIn(page);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Tools" }).click();
    await page.getByRole("heading", { name: "No tools yet" }).waitFor();
    expect(await page.getByRole("link", { name: "Add a server" }).getAttribute("href")).toBe("#/servers/new");
    await expectAccessible(page, "empty tools");
  });

  it("lists the catalogue by server, filters it, and calls echo with its required field", async () => {
    const { page } = ui;
    const created = await stack.call("POST", "/v1/servers", {
      transport: "http",
      name: "docs",
      url: upstream.url,
    });
    expect(created.status).toBe(201);
    await waitFor(
      () => stack.call("GET", "/v1/servers/docs"),
      (server) => server.body.status.state === "connected",
    );
    // The data plane's view may lag the connection by up to 2 s: refreshed until the tools show.
    const group = page.locator("section.tool-group[data-server=docs]");
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return group.count();
        },
        { timeout: 10_000, interval: 500 },
      )
      .toBe(1);
    expect(await group.locator("details[data-tool]").count()).toBe(4);
    await page.getByLabel("Filter").fill("echo");
    expect(await group.locator("details[data-tool]").count()).toBe(1);

    const tool = await openTool("docs__echo");
    expect(await tool.getByRole("heading", { level: 3 }).textContent()).toBe("echo");
    expect(await tool.locator(".params li").textContent()).toMatch(/text\s*string\s*required/);
    const field = tool.getByLabel("text (required)");
    expect(await field.getAttribute("required")).not.toBeNull();
    // Blank, the required field is refused next to it before anything is sent.
    await tool.getByRole("button", { name: "Call" }).click();
    await tool.getByText("Required.").waitFor();
    expect(upstream.toolCalls).toBe(0);

    await field.fill("hello from the tools page");
    await tool.getByRole("button", { name: "Call" }).click();
    const result = tool.locator(".result[data-result=ok]");
    await result.waitFor();
    expect(await result.locator(".result-text").textContent()).toBe("hello from the tools page");
    expect(await result.locator(".result-json").textContent()).toContain(
      '"text": "hello from the tools page"',
    );
    await tool.getByText("Input schema as JSON").click();
    expect(await tool.locator("details.raw pre").first().textContent()).toContain('"required"');
    await expectAccessible(page, "tools, a tool tried");
  });

  it("shows a tool-level failure (isError) as an error, in words", async () => {
    const tool = await openTool("docs__fail");
    expect(await tool.textContent()).toContain("This tool takes no arguments.");
    await tool.getByRole("button", { name: "Call" }).click();
    const result = tool.locator(".result.is-error");
    await result.waitFor();
    expect(await result.getAttribute("data-result")).toBe("error");
    expect(await result.locator(".result-label").textContent()).toMatch(/^Error/);
    expect(await result.locator(".result-text").textContent()).toBe("boom");
    await expectAccessible(ui.page, "tools, a failed result");
  });

  it("tries a tool from its server's page: add with two numbers", async () => {
    const { page } = ui;
    await page.locator("section.tool-group[data-server=docs] h2").getByRole("link", { name: "docs" }).click();
    // Listed collapsed, as on the Tools page: filtered to it, then opened.
    await page.getByLabel("Filter").fill("add");
    await page.locator('details[data-tool="docs__add"] > summary').click();
    const tool = page.locator('article[data-tool="docs__add"]');
    await tool.waitFor({ timeout: 20_000 });
    expect(await tool.textContent()).toContain("Called as docs__add");
    await tool.getByLabel("a (required)").fill("2");
    await tool.getByLabel("b (required)").fill("3.5");
    await tool.getByRole("button", { name: "Call" }).click();
    const result = tool.locator(".result[data-result=ok]");
    await result.waitFor();
    expect(await result.locator(".result-text").textContent()).toBe("5.5");
    expect(await result.locator(".result-json").textContent()).toContain('"sum": 5.5');
    await expectAccessible(page, "server page, a tool tried");
  });

  it("fits a 375 px wide screen without scrolling sideways", async () => {
    const { page } = ui;
    await page.setViewportSize({ width: 375, height: 800 });
    const tool = await openTool("docs__echo");
    await tool.getByLabel("text (required)").fill("narrow ".repeat(40));
    await tool.getByRole("button", { name: "Call" }).click();
    await tool.locator(".result[data-result=ok]").waitFor();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
  });

  it("takes a real server's richer schema and results: an enum as a select, a boolean as a checkbox, an image", async () => {
    const { page } = ui;
    everything = await startEverything();
    const created = await stack.call("POST", "/v1/servers", {
      transport: "http",
      name: "every",
      url: everything.url,
    });
    expect(created.status).toBe(201);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto("/#/servers/every");
    await page.getByLabel("Filter").fill("get-annotated-message");
    await page
      .locator('details[data-tool="every__get-annotated-message"] > summary')
      .click({ timeout: 20_000 });
    const tool = page.locator('article[data-tool="every__get-annotated-message"]');
    await tool.waitFor({ timeout: 20_000 });
    await tool.getByLabel("messageType (required)").selectOption({ label: "success" });
    await tool.getByLabel("includeImage").check();
    await tool.getByRole("button", { name: "Call" }).click();
    const image = tool.locator(".result[data-result=ok] img");
    await image.waitFor();
    expect(await image.getAttribute("alt")).toMatch(
      /^Image \d+ returned by every__get-annotated-message \(image\/png\)$/,
    );
    // Decoded: the page's CSP lets a data: URL through for images.
    await expect
      .poll(() => page.evaluate<number>(`document.querySelector('.result[data-result=ok] img').naturalWidth`))
      .toBeGreaterThan(0);
    await expectAccessible(page, "server-everything's tools");
  });

  it("browses a real server's resources and prompts on its page, each read when opened, with a filter", async () => {
    const { page } = ui;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto("/#/servers/every");
    const resources = page.locator("details[data-browse=resources]");
    await resources.locator("summary").click({ timeout: 20_000 });
    const items = resources.locator(".browse-list li");
    await expect.poll(() => items.count(), { timeout: 20_000 }).toBeGreaterThan(1);
    expect(await items.first().textContent()).toMatch(/\w+:\/\//);
    await resources.getByLabel("Filter").fill("template");
    await expect.poll(() => items.count()).toBeGreaterThan(0);

    const prompts = page.locator("details[data-browse=prompts]");
    await prompts.locator("summary").click();
    await expect
      .poll(() => prompts.locator(".browse-list li").count(), { timeout: 20_000 })
      .toBeGreaterThan(0);
    await expectAccessible(page, "server page, resources and prompts open");
  });

  it("keeps a server of 60 tools under 2,000 px tall at 1280 px: listed collapsed, and the filter narrows it", async () => {
    const { page } = ui;
    const many = await startUpstream({ name: "many", extraTools: 56 }); // and its few built-in tools
    try {
      const created = await stack.call("POST", "/v1/servers", {
        transport: "http",
        name: "many",
        url: many.url,
      });
      expect(created.status).toBe(201);
      await waitFor(
        () => stack.call("GET", "/v1/servers/many"),
        (server) => server.body.status.state === "connected",
      );
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto("/#/servers/many");
      const listed = page.locator("details[data-tool]");
      const intro = page.locator("p[data-count]");
      await expect
        .poll(async () => Number(await intro.getAttribute("data-count")), { timeout: 20_000 })
        .toBeGreaterThanOrEqual(60);
      const count = Number(await intro.getAttribute("data-count"));
      const height = () => page.evaluate<number>("document.documentElement.scrollHeight");
      expect(await height()).toBeLessThan(2_000);
      await expectAccessible(page, "server page, 60 tools");
      await page.getByRole("button", { name: `Show ${count - 10} more tools` }).click();
      expect(await listed.count()).toBe(count);

      await page.getByLabel("Filter").fill("echo");
      await expect.poll(() => listed.count()).toBe(1);
      await page.getByLabel("Filter").fill("no tool is named this");
      await page.getByText("No tool matches the filter.").waitFor();
    } finally {
      await stack.call("DELETE", "/v1/servers/many");
      await many.close();
    }
  }, 60_000);
});
