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

    const long = `a-very-long-user-name-${"x".repeat(40)}`; // the form takes 255 characters
    await page.getByLabel("Name", { exact: true }).fill(long);
    await page.getByRole("checkbox", { name: "docs" }).check();
    await page.getByRole("button", { name: "Save access" }).click();
    await page.getByText(`user:${long} now reaches docs.`).waitFor({ timeout: 5_000 });
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("says what the API would refuse beside each field of the access, key, secret and tool-set forms, and sends nothing", async () => {
    const { page } = ui;
    const sent: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() !== "GET" && /\/v1\/(access|keys|secrets|toolsets)/.test(request.url()))
        sent.push(`${request.method()} ${request.url()}`);
    };
    const saidBeside = (id: string) => page.locator(`#${id}-error`).textContent();
    const identity = /^Must be a name the sign-in gives: .*no ':', '\/' or ','/;
    page.on("request", watch);
    try {
      await page.goto("/#/access");
      await page.getByLabel("Name", { exact: true }).fill("eng/ops");
      await page.getByRole("button", { name: "Save access" }).click();
      await expect.poll(() => saidBeside("access-name")).toMatch(identity);
      await page.getByText("Nothing was sent: change the fields marked above.").waitFor();

      await page.goto("/#/keys");
      await page.getByLabel("Name", { exact: true }).fill(" ");
      await page.getByLabel("Owner", { exact: true }).selectOption("user");
      await page.getByLabel("Owner name").fill("user:ada");
      await page.getByRole("button", { name: "Create key" }).click();
      await expect.poll(() => saidBeside("key-name")).toBe("Give the key a name: who or what uses it.");
      expect(await saidBeside("key-owner-name")).toMatch(identity);

      await page.goto("/#/secrets");
      await page.getByLabel("Secret name").fill("my secret");
      await page.getByLabel("Key 1 name").fill("API KEY");
      await page.getByLabel("Key 1 value").fill("kept");
      await page.getByRole("button", { name: "Save secret" }).click();
      await expect
        .poll(() => saidBeside("secret-name"))
        .toBe("Must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit.");
      expect(await page.locator("fieldset.invalid .field-error").allTextContents()).toEqual([
        "Key “API KEY”: Must be 1-128 letters, digits, '_', '.' or '-'.",
      ]);
      // Nothing typed was dropped: the value is still there to fix the key's name.
      expect(await page.getByLabel("Key 1 value").inputValue()).toBe("kept");
      await expectAccessible(page, "secrets, the form's own checks");

      await page.goto("/#/toolsets");
      await page.getByLabel("Name", { exact: true }).fill("docs__set");
      await page.getByRole("button", { name: "Create tool set" }).click();
      await expect
        .poll(() => saidBeside("new-set-name"))
        .toBe("Must not contain '__': it separates server and tool names.");
      expect(sent).toEqual([]);
    } finally {
      page.off("request", watch);
    }
  });
});
