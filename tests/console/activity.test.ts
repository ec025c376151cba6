/**
 * The console's Activity page and call charts in headless Chromium against the stack and a real
 * upstream: tool calls and admin changes (a change listing its changed field names) show in the audit
 * trail row for row, newest first, paged by "Load more";
 * filters by server and outcome; a row opens its trace summary (key names, never a value); the server's
 * page and a tool's view chart the calls with the right counts over the last hour and day; axe-clean.
 */

import type { AuditEvent } from "@mcpgw/core";
import { startTracing, type Tracing } from "@mcpgw/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type ConsoleSession, expectAccessible, openConsole, signIn } from "../support/browser";
import { createServer, reaches } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

/** Echo calls made: more than a page (50) of the trail. */
const ECHOES = 52;
const SENTINEL = "sentinel-activity-argument-51c2";

describe("console: activity", () => {
  let stack: Stack;
  let upstream: Upstream;
  let ui: ConsoleSession;
  let tracing: Tracing;

  beforeAll(async () => {
    // As every process does: each call runs in a trace, which its event names.
    tracing = startTracing({ service: "gateway", env: {} });
    stack = await startStack({ console: true });
    upstream = await startUpstream({ name: "docs" });
    await reaches(
      stack,
      await createServer(stack, { transport: "http", name: "docs", url: upstream.url }),
      "connected",
    );
    for (let i = 0; i < ECHOES; i++) {
      const call = await stack.call("POST", "/v1/tools/docs__echo/call", {
        arguments: { text: `${SENTINEL}-${i}` },
      });
      expect(call.status).toBe(200);
    }
    const failed = await stack.call("POST", "/v1/tools/docs__fail/call", { arguments: {} });
    expect(failed.body.isError).toBe(true);
    const edited = await stack.call("PATCH", "/v1/servers/docs", { timeoutSeconds: 20 });
    expect(edited.status).toBe(200);
    // The trail is written off the calls' path: every call and the edit are there before the page opens.
    await waitFor(
      () => stack.call("GET", "/v1/audit?server=docs&limit=100"),
      (trail) =>
        trail.status === 200 &&
        trail.body.events.filter((event: AuditEvent) => event.type === "call").length === ECHOES + 1 &&
        trail.body.events.some((event: AuditEvent) => event.action === "server.update"),
      { timeoutMs: 15_000 },
    );
    ui = await openConsole(stack.api.url);
  }, 90_000);
  afterAll(async () => {
    await ui?.close();
    await upstream?.close();
    await stack?.stop();
    await tracing?.shutdown();
  });

  const rows = () => ui.page.locator("table tbody tr[data-event]");

  it("lists the trail row for row, newest first, and loads more by cursor", async () => {
    const { page } = ui;
    await signIn(page);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Activity" }).click();
    await page.getByRole("heading", { name: "Activity", level: 1 }).waitFor();
    await rows().first().waitFor();
    // Row for row the trail's first page, newest first: the failed call, the echoes, and each admin
    // change the admin plane recorded (the edit) with the names of the fields it changed.
    const trail = (await stack.call("GET", "/v1/audit?limit=50")).body.events as AuditEvent[];
    const ids = () => rows().evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-event")));
    expect(await ids()).toEqual(trail.map((event) => event.id));
    const firstCall = trail.find((event) => event.type === "call");
    expect(firstCall).toMatchObject({ tool: "fail", outcome: "tool_error" });
    // The newest: the edit, shown as a change that names the one field it changed.
    expect(trail[0]).toMatchObject({ type: "change", action: "server.update", fields: ["timeoutSeconds"] });
    expect(await rows().first().locator("[data-col=event]").textContent()).toContain(
      "server.update docs · changed timeoutSeconds",
    );
    for (const change of trail.filter((event) => event.type === "change")) {
      const row = page.locator(`tr[data-event="${change.id}"]`);
      expect(await row.getAttribute("data-type")).toBe("change");
      expect(await row.locator("[data-col=event]").textContent()).toContain(
        `changed ${change.fields?.join(", ")}`,
      );
    }
    await page.getByRole("button", { name: "Load more" }).click();
    const all = (await stack.call("GET", "/v1/audit?limit=500")).body.events as AuditEvent[];
    await expect.poll(ids).toEqual(all.map((event) => event.id));
    expect(all.filter((event) => event.type === "call")).toHaveLength(ECHOES + 1);
    const times = await rows()
      .locator("time")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("datetime") ?? ""));
    expect(times).toEqual([...times].sort().reverse());
    await expectAccessible(page, "activity");
  });

  it("filters by server and outcome, and opens a row's trace summary", async () => {
    const { page } = ui;
    const filters = page.getByRole("form", { name: "Activity filters" });
    await filters.getByLabel("Server").fill("docs");
    await filters.getByLabel("Outcome").fill("tool_error");
    await filters.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    const row = rows().first();
    expect(await row.getAttribute("data-outcome")).toBe("tool_error");
    await row.getByRole("button", { name: /Details/ }).click();
    const detail = page.locator("#event-detail");
    await detail.waitFor();
    expect(await detail.locator("[data-field=plane]").textContent()).toBe("rest");
    expect(await detail.locator("[data-field=principal]").textContent()).toBe("admin");
    expect(await detail.locator("[data-field=tool]").textContent()).toBe("fail");
    expect(await detail.locator("[data-field=outcome]").textContent()).toBe("tool_error");
    const event = (await stack.call("GET", "/v1/audit?server=docs&outcome=tool_error")).body.events[0];
    expect(event.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await detail.getByLabel("Trace id").inputValue()).toBe(event.traceId);
    await expectAccessible(page, "activity, a trace summary");

    await filters.getByLabel("Tool").fill("echo");
    await filters.getByLabel("Outcome").fill("ok");
    await filters.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => rows().first().getAttribute("data-outcome")).toBe("ok");
    await rows()
      .first()
      .getByRole("button", { name: /Details/ })
      .click();
    expect(await detail.locator("[data-field=argumentKeys]").textContent()).toBe("text");
    expect(await page.locator("main").textContent()).not.toContain(SENTINEL);
  });

  it("charts a server's calls and a tool's on their pages, over the hour and the day", async () => {
    const { page } = ui;
    await page.goto("/#/servers/docs");
    const calls = page.locator(".call-stats");
    await expect
      .poll(() => calls.locator("[data-field=calls]").textContent(), { timeout: 10_000 })
      .toBe(String(ECHOES + 1));
    expect(await calls.locator("[data-field=errors]").textContent()).toBe("1 (1 tool errors)");
    expect(await calls.locator("svg.chart").count()).toBe(3);
    await calls.getByLabel("Last day").check();
    await page.locator(".call-stats[data-window=day] [data-field=calls]").waitFor();
    expect(await calls.locator("[data-field=calls]").textContent()).toBe(String(ECHOES + 1));
    await expectAccessible(page, "server calls");

    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Tools" }).click();
    await page.getByLabel("Filter").fill("docs__echo");
    await page.locator('details[data-tool="docs__echo"] > summary').click();
    const tool = page.locator('article[data-tool="docs__echo"] .call-stats');
    await expect
      .poll(() => tool.locator("[data-field=calls]").textContent(), { timeout: 10_000 })
      .toBe(String(ECHOES));
    expect(await tool.locator("[data-field=errorRate]").textContent()).toBe("0.0 %");
    expect(await tool.getByRole("img", { name: /^Calls per minute/ }).count()).toBe(1);
    await expectAccessible(page, "tool calls");
  });
});
