/**
 * The console by keyboard alone: sign in, reach a server, disable and enable it, and delete it through
 * its confirmation dialog (Escape cancels; the confirm button is reached with Tab).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { type ConsoleSession, openConsole } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

/** Presses Tab until the focused element has this accessible text, or this `#id` (bounded). */
async function tabTo(page: Page, text: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate<string>(
      "(() => { const e = document.activeElement; return e?.id ? '#' + e.id + ' ' + (e.getAttribute('aria-label') || e.textContent || '').trim() : (e?.getAttribute('aria-label') || e?.textContent || '').trim(); })()",
    );
    if (focused === text || focused.split(" ")[0] === text || focused.replace(/^#\S+ /, "") === text) return;
  }
  throw new Error(`no focusable "${text}" within 60 tabs`);
}

describe("console: keyboard only", () => {
  let stack: Stack;
  let ui: ConsoleSession;
  beforeAll(async () => {
    stack = await startStack({ console: true });
    await stack.call("POST", "/v1/servers", { name: "keys-only", url: "http://127.0.0.1:9/mcp" });
    ui = await openConsole(stack.api.url);
  });
  afterAll(async () => {
    await ui?.close();
    await stack?.stop();
  });

  it("signs in, disables and enables a server, and deletes it through the dialog", async () => {
    const { page } = ui;
    await page.getByLabel("Admin token").waitFor();
    await tabTo(page, "#token");
    await page.keyboard.type(TEST_ADMIN_TOKEN);
    await page.keyboard.press("Enter");
    await page.locator("tr[data-server=keys-only]").waitFor();

    await tabTo(page, "keys-only");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: /keys-only/ }).waitFor();

    await tabTo(page, "Disable");
    await page.keyboard.press("Enter");
    await page.locator("h1 [data-state=disabled]").waitFor();
    await page.getByRole("button", { name: "Enable" }).focus();
    await page.keyboard.press("Enter");
    await page.locator("h1 [data-state=disabled]").waitFor({ state: "detached" });

    await page.getByRole("button", { name: "Delete" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect((await stack.call("GET", "/v1/servers/keys-only")).status).toBe(200);

    await page.getByRole("button", { name: "Delete" }).focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    await tabTo(page, "Delete");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "No servers yet" }).waitFor();
    expect((await stack.call("GET", "/v1/servers/keys-only")).status).toBe(404);
  });
});
