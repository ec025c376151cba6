/**
 * The servers table's filter and sort, a server's reconnect, and the API's validation messages shown
 * next to the field they are about.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSession, openConsole, signIn } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

describe("console: the servers table and the form's messages", () => {
  let stack: Stack;
  let ui: ConsoleSession;
  beforeAll(async () => {
    stack = await startStack({ console: true });
    for (const name of ["alpha", "bravo", "charlie"]) {
      await stack.call("POST", "/v1/servers", { name, url: `http://127.0.0.1:9/${name}` });
    }
    await stack.call("PATCH", "/v1/servers/bravo", { enabled: false });
    ui = await openConsole(stack.api.url);
    await signIn(ui.page);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.stop();
  });

  const names = () =>
    ui.page.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-server")));

  it("filters by text and by state, and sorts by a column both ways", async () => {
    const { page } = ui;
    await page.locator("tr[data-server=charlie]").waitFor();
    expect(await names()).toEqual(["alpha", "bravo", "charlie"]);

    await page.getByRole("button", { name: "Name" }).click();
    await expect.poll(names).toEqual(["charlie", "bravo", "alpha"]);
    await page.getByRole("button", { name: "Name" }).click();
    await expect.poll(names).toEqual(["alpha", "bravo", "charlie"]);

    await page.getByLabel("Filter").fill("char");
    await expect.poll(names).toEqual(["charlie"]);
    await page.getByLabel("Filter").fill("");
    await page.getByLabel("State").selectOption("disabled");
    await expect.poll(names).toEqual(["bravo"]);
    await page.getByLabel("Filter").fill("alpha");
    await page.getByText("No server matches the filter.").waitFor();
  });

  it("reconnects a server on request", async () => {
    const { page } = ui;
    const attempt = async () =>
      (await stack.call("GET", "/v1/servers/alpha")).body.status.lastConnectionAttemptAt;
    await expect.poll(attempt).not.toBeNull();
    const before = await attempt();
    await page.goto("/#/servers/alpha");
    await page.getByRole("button", { name: "Reconnect" }).click();
    await expect.poll(attempt).not.toBe(before);
  });

  it("shows the API's message next to the field it is about, and a taken name next to the name", async () => {
    const { page } = ui;
    await page.goto("/#/servers/new");
    await page.getByLabel("Name").fill("alpha");
    await page.getByLabel("URL").fill("ftp://example.com/mcp");
    await page.getByRole("button", { name: "Add server" }).click();
    const url = page.locator(".field.invalid", { has: page.getByLabel("URL") });
    await url.locator(".field-error").waitFor();
    expect(await url.locator(".field-error").textContent()).toMatch(/^url: /);

    await page.getByLabel("URL").fill("https://example.com/mcp");
    await page.getByRole("button", { name: "Add server" }).click();
    const name = page.locator(".field.invalid", { has: page.getByLabel("Name") });
    await name.locator(".field-error").waitFor();
    expect(await name.locator(".field-error").textContent()).toContain("alpha");
  });
});
