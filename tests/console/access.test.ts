/**
 * The console's Access page: map a user and a group to servers for OAuth sign-in, see the mappings,
 * remove one — each change confirmed by the API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSession, expectAccessible, openConsole, signIn } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

describe("console: access for OAuth sign-in", () => {
  let stack: Stack;
  let ui: ConsoleSession;
  beforeAll(async () => {
    stack = await startStack({ console: true, oauth: true });
    for (const name of ["docs", "files"]) {
      await stack.call("POST", "/v1/servers", { name, url: `http://127.0.0.1:9/${name}` });
    }
    ui = await openConsole(stack.api.url);
    await signIn(ui.page);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.stop();
  });

  it("maps a user to one server and a group to every server, lists them, and removes one", async () => {
    const { page } = ui;
    await page.goto("/#/access");
    await page.getByRole("heading", { name: "No one has access yet" }).waitFor();
    await expectAccessible(page, "access, empty");

    await page.getByLabel("Name", { exact: true }).fill("ada");
    await page.getByRole("checkbox", { name: "docs" }).check();
    await page.getByRole("button", { name: "Save access" }).click();
    await page.locator("tr[data-subject='user:ada']").waitFor();

    await page.getByLabel("User or group").selectOption("group");
    await page.getByLabel("Name", { exact: true }).fill("eng");
    await page.getByLabel("Every server (servers added later too)").check();
    await page.getByRole("button", { name: "Save access" }).click();
    await page.locator("tr[data-subject='group:eng']").waitFor();
    expect(await page.locator("tr[data-subject='group:eng']").textContent()).toContain("every server");

    const stored = (await stack.call("GET", "/v1/access")).body.access as Array<{
      subject: string;
      servers: unknown;
    }>;
    expect(stored).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ subject: "user:ada", servers: ["docs"] }),
        expect.objectContaining({ subject: "group:eng", servers: null }),
      ]),
    );
    await expectAccessible(page, "access");

    await page.getByRole("button", { name: "Remove user:ada" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
    await page.locator("tr[data-subject='user:ada']").waitFor({ state: "detached" });
    const after = (await stack.call("GET", "/v1/access")).body.access as Array<{ subject: string }>;
    expect(after.map((mapping) => mapping.subject)).toEqual(["group:eng"]);
  });

  it("refuses to save access to nothing, beside the servers, and wraps a long name in its row at 375 px", async () => {
    const { page } = ui;
    await page.goto("/#/access");
    let sent = 0;
    const count = (request: { method(): string; url(): string }) => {
      if (request.method() === "PUT" && request.url().includes("/v1/access/")) sent++;
    };
    page.on("request", count);
    try {
      await page.getByLabel("User or group").selectOption("user");
      await page.getByLabel("Name", { exact: true }).fill("nobody");
      await page.getByLabel("Only the servers chosen below").check({ timeout: 5_000 });
      await page.getByRole("button", { name: "Save access" }).click();
      await page
        .getByText("Choose at least one server or tool set, or let them reach every server.")
        .waitFor();
      expect(sent).toBe(0);
    } finally {
      page.off("request", count);
    }

    const long = `a-very-long-user-name-${"x".repeat(40)}`; // the form takes 64 characters
    await page.getByLabel("Name", { exact: true }).fill(long);
    await page.getByRole("checkbox", { name: "docs" }).check();
    await page.getByRole("button", { name: "Save access" }).click();
    await page.getByText(`user:${long} now reaches docs.`).waitFor({ timeout: 5_000 });
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
