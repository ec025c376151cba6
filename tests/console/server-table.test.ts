/**
 * The servers table's filter and sort, a server's reconnect, the API's validation messages shown
 * next to the field they are about (once), and the form's own checks: what the API would refuse is
 * said beside its field in words and nothing is sent; a command line typed whole is split on request;
 * an edit that lost a race offers to reload.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSession, expectAccessible, openConsole, signIn } from "../support/browser";
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
    // Told once, beside the field, without the API's path in front; the box only says where to look.
    expect(await url.locator(".field-error").textContent()).toBe(
      "Must be an http(s) URL without credentials.",
    );
    expect(await page.locator(".problem").textContent()).toBe(
      "Nothing was saved: change the fields marked above.",
    );

    await page.getByLabel("URL").fill("https://example.com/mcp");
    await page.getByRole("button", { name: "Add server" }).click();
    const name = page.locator(".field.invalid", { has: page.getByLabel("Name") });
    await name.locator(".field-error").waitFor();
    expect(await name.locator(".field-error").textContent()).toContain("alpha");
  });

  it("says what the API would refuse beside each field, in words, and sends nothing", async () => {
    const { page } = ui;
    const sent: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() !== "GET" && request.url().includes("/v1/servers")) sent.push(request.url());
    };
    page.on("request", watch);
    try {
      await page.goto("/#/servers/new");
      await page.getByLabel("Name").fill("delta");
      await page.getByLabel("URL").fill("https://example.com/mcp");
      const rows = [
        ["X-Price", "5 €"],
        ["", "a value with no name"],
        ["Host", "evil.example.com"],
      ];
      for (const [index, [name, value]] of rows.entries()) {
        await page.getByRole("button", { name: "Add header" }).click();
        await page.getByLabel(`Headers ${index + 1} name`).fill(name ?? "");
        await page.getByLabel(`Headers ${index + 1} value`).fill(value ?? "");
      }
      await page.getByLabel("Timeout (seconds)").fill("1e400");
      await page.getByRole("button", { name: "Add server" }).click();

      const headers = page.locator("fieldset.invalid", { has: page.getByLabel("Headers 1 name") });
      await expect
        .poll(() => headers.locator(".field-error").allTextContents())
        .toEqual([
          expect.stringMatching(
            /^Header “X-Price”: the value must hold only characters an HTTP header can carry/,
          ),
          "Header row 2 has a value but no name: name it, or remove the row.",
          "Header “Host”: the name is one the gateway or the connection sets itself: it cannot be configured.",
        ]);
      const timeout = page.locator(".field.invalid", { has: page.getByLabel("Timeout (seconds)") });
      expect(await timeout.locator(".field-error").textContent()).toBe(
        "“1e400” is not a number of seconds: use 1 to 900.",
      );
      expect(await page.locator(".problem").textContent()).toBe(
        "Nothing was sent: change the fields marked above.",
      );
      // Header values are typed hidden, as secrets are, unless asked to show.
      expect(await page.getByLabel("Headers 1 value").getAttribute("type")).toBe("password");
      await expectAccessible(page, "server form, its own checks");
      expect(sent).toEqual([]);
    } finally {
      page.off("request", watch);
    }
  });

  it("splits a command line typed whole into Command on request", async () => {
    const { page } = ui;
    await page.goto("/#/servers/new");
    await page.getByLabel("Command (stdio)").check();
    await page.getByLabel("Command", { exact: true }).fill("npx -y @modelcontextprotocol/server-everything");
    await page.getByText("This looks like a whole command line").waitFor();
    await page.getByRole("button", { name: "Split into command and arguments" }).click();
    expect(await page.getByLabel("Command", { exact: true }).inputValue()).toBe("npx");
    expect(await page.getByLabel("argument 1", { exact: true }).inputValue()).toBe("-y");
    expect(await page.getByLabel("argument 2", { exact: true }).inputValue()).toBe(
      "@modelcontextprotocol/server-everything",
    );
    await page.getByText("This looks like a whole command line").waitFor({ state: "detached" });
  });

  it("offers to reload an edit that lost a race, and shows what is stored then", async () => {
    const { page } = ui;
    await page.goto("/#/servers/alpha/edit");
    const timeout = page.getByLabel("Timeout (seconds)");
    // Loaded (version 1) before it changes elsewhere.
    await page.getByRole("heading", { name: "Edit alpha" }).waitFor();
    await expect.poll(() => timeout.inputValue()).toBe("30");
    expect((await stack.call("PATCH", "/v1/servers/alpha", { timeoutSeconds: 77 })).status).toBe(200);
    await timeout.fill("45");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(/changed elsewhere/).waitFor();
    await page.getByRole("button", { name: "Reload the server" }).click();
    await expect.poll(() => timeout.inputValue()).toBe("77");
    expect(await page.locator(".problem").count()).toBe(0);
  });
});
