/**
 * The console's session in the browser: a reload stays signed in without the token kept anywhere,
 * sign-out returns to the sign-in page for good; the page fits 375 px and follows the system's dark
 * or light setting; the built JavaScript stays within its budget.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_DIST } from "../../scripts/lib/console";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { expectAccessible, expectNoSecrets, openConsole, signIn } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

/** The budget for the console's JavaScript, gzipped. */
const JS_BUDGET_BYTES = 150 * 1024;

describe("console: session, layout and budget", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ console: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("stays signed in across a reload with the token kept nowhere; signing out is for good", async () => {
    const ui = await openConsole(stack.api.url);
    try {
      const { page } = ui;
      await signIn(page);
      await page.reload();
      await page.getByRole("navigation", { name: "Sections" }).waitFor();
      await expectNoSecrets(ui, [TEST_ADMIN_TOKEN]);

      const cookie = (await ui.context.cookies()).find((c) => c.name === "mgw_console");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Admin token").waitFor();
      await page.reload();
      await page.getByLabel("Admin token").waitFor();
      const replayed = await fetch(`${stack.api.url}/v1/servers`, {
        headers: { cookie: `mgw_console=${cookie?.value}` },
      });
      expect(replayed.status).toBe(401);
    } finally {
      await ui.close();
    }
  });

  it("follows a navigation made the moment it appears, before its effects have run", async () => {
    const ui = await openConsole(stack.api.url);
    try {
      const { page } = ui;
      await signIn(page);
      // Effects run after paint; with animation frames held they wait for Preact's 100 ms fallback: a
      // window in which a hash change must not be lost (as a fast click or a test's goto can make).
      await page.addInitScript("window.requestAnimationFrame = () => 0;");
      await page.reload();
      await page.getByRole("navigation", { name: "Sections" }).waitFor();
      await page.evaluate("location.hash = '#/keys'");
      await page.getByRole("heading", { name: "API keys", exact: true }).waitFor({ timeout: 5_000 });
    } finally {
      await ui.close();
    }
  });

  it("fits a 375 px screen without sideways scrolling, in the system's dark scheme", async () => {
    const ui = await openConsole(stack.api.url, { width: 375, height: 740, colorScheme: "dark" });
    try {
      const { page } = ui;
      await signIn(page);
      await stack.call("POST", "/v1/servers", { name: "narrow", url: "http://127.0.0.1:9/mcp" });
      await page.locator("tr[data-server=narrow]").waitFor();
      const fits = await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth");
      expect(fits).toBe(true);
      const background = await page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
      expect(luminance(background)).toBeLessThan(0.2);
      await expectAccessible(page, "servers at 375 px, dark");
    } finally {
      await ui.close();
    }
  });

  it("is light when the system is light", async () => {
    const ui = await openConsole(stack.api.url, { colorScheme: "light" });
    try {
      const background = await ui.page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
      expect(luminance(background)).toBeGreaterThan(0.8);
    } finally {
      await ui.close();
    }
  });

  it("ships at most 150 kB of JavaScript, gzipped, in content-hashed files", () => {
    const assets = readdirSync(join(CONSOLE_DIST, "assets"));
    const scripts = assets.filter((name) => name.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    for (const name of assets) expect(name).toMatch(/-[\w-]{8}\.\w+$/);
    const gzipped = scripts.reduce(
      (sum, name) => sum + gzipSync(readFileSync(join(CONSOLE_DIST, "assets", name))).byteLength,
      0,
    );
    console.log(`[console] ${scripts.length} script(s), ${(gzipped / 1024).toFixed(1)} kB gzipped`);
    expect(gzipped).toBeLessThanOrEqual(JS_BUDGET_BYTES);
    // Production code, even when built under vitest (NODE_ENV=test): no dev JSX, no source paths.
    for (const name of scripts) {
      const code = readFileSync(join(CONSOLE_DIST, "assets", name), "utf8");
      expect(code).not.toMatch(/jsxDEV|fileName:|packages\/console\/src/);
    }
  });
});

/** Relative luminance (0–1) of a CSS `rgb(r, g, b)` colour. */
function luminance(color: string): number {
  const [r = 0, g = 0, b = 0] = (color.match(/\d+(\.\d+)?/g) ?? []).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}
