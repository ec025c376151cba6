/**
 * The admin console in a real headless Chromium (`@sparticuz/chromium`, unpacked by the global setup;
 * driven by playwright-core): a page on a stack's console, everything the console received kept for
 * the secret scans, axe-core for accessibility.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect, inject } from "vitest";
import { TEST_ADMIN_TOKEN } from "./app";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** One response the console got. */
export interface SeenResponse {
  method: string;
  /** The URL's path (no query). */
  path: string;
  body: string;
}

/** A browser page on the console, and what it saw. */
export interface ConsoleSession {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Every response the console got (for the secret scans): request method, URL path, body. */
  responses: SeenResponse[];
  /** Resolves once every response so far is in `responses` (bodies are read as they come). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the console of the stack at `baseUrl` (not signed in yet). */
export async function openConsole(
  baseUrl: string,
  options: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {},
): Promise<ConsoleSession> {
  const browser = await chromium.launch({ executablePath: inject("chromiumPath"), headless: true });
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? "light",
    baseURL: baseUrl,
  });
  const page = await context.newPage();
  const responses: SeenResponse[] = [];
  const pending: Array<Promise<void>> = [];
  page.on("response", (response) => {
    const method = response.request().method();
    const path = new URL(response.url()).pathname;
    pending.push(
      response
        .text()
        .then((body) => void responses.push({ method, path, body }))
        .catch(() => undefined),
    );
  });
  const failures: string[] = [];
  page.on("pageerror", (error) => failures.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && !/Failed to load resource/.test(message.text()))
      failures.push(message.text());
  });
  await page.goto("/");
  return {
    browser,
    context,
    page,
    responses,
    async settled() {
      await Promise.all(pending);
    },
    async close() {
      await Promise.all(pending);
      await browser.close();
      expect(failures, "errors in the console's page").toEqual([]);
    },
  };
}

/** Signs in with the admin token through the sign-in form. */
export async function signIn(page: Page, token = TEST_ADMIN_TOKEN): Promise<void> {
  await page.getByLabel("Admin token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Sections" }).waitFor();
}

/**
 * No sentinel anywhere the console keeps or shows things: the DOM (with form values), every response
 * it received, localStorage, sessionStorage and the cookies its scripts can read.
 *
 * `shownOnceBy` is for material the API shows exactly once, in the answer to the request that made it
 * (a new API key: `{ method: "POST", path: "/v1/keys" }`): the sentinels must then be in exactly one
 * response, that request's — so that one response is left out of the scan, and every other is scanned.
 */
export async function expectNoSecrets(
  session: ConsoleSession,
  sentinels: string[],
  options: { shownOnceBy?: { method: string; path: string } } = {},
): Promise<void> {
  const { page } = session;
  await session.settled();
  // Page-side code as source text: this program has no DOM types, and needs none.
  const dom = await page.evaluate<string>(`(() => {
    const values = [...document.querySelectorAll("input, textarea, select")].map((element) => element.value);
    return document.documentElement.outerHTML + "\\n" + values.join("\\n");
  })()`);
  const storage = await page.evaluate<string>(`(() => {
    const all = (store) => Object.keys(store).map((key) => key + "=" + store.getItem(key));
    return [...all(localStorage), ...all(sessionStorage), document.cookie].join("\\n");
  })()`);
  let responses = session.responses;
  const once = options.shownOnceBy;
  if (once) {
    const showing = responses.filter((response) =>
      sentinels.some((sentinel) => response.body.includes(sentinel)),
    );
    expect(
      showing.map(({ method, path }) => `${method} ${path}`),
      "the one response allowed to show the secret",
    ).toEqual([`${once.method} ${once.path}`]);
    responses = responses.filter((response) => !showing.includes(response));
  }
  const places = { dom, storage, responses: responses.map((response) => response.body).join("\n") };
  for (const sentinel of sentinels) {
    for (const [place, text] of Object.entries(places)) {
      expect(text.includes(sentinel), `a secret in the console's ${place}`).toBe(false);
    }
  }
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // Evaluated through the DevTools protocol: the console's CSP (rightly) refuses an injected <script>.
  if (!(await page.evaluate<boolean>(`"axe" in window`))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map((violation) => violation.id + " (" + violation.impact + "): " + violation.help + " — " +
        violation.nodes.slice(0, 3).map((node) => node.target.join(" ")).join(", "));
  })()`);
  expect(violations, `axe on ${label}`).toEqual([]);
}
