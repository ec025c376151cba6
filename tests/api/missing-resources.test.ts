/**
 * Regression: with the table gone, every list answered 500 and logged its own error line. A request
 * still fails (503 `store.unavailable`, with its request id), but the missing resource is one clear
 * line per interval in the logs, not one per request; a queue gone while servers are created is logged
 * the same way.
 */
import { createApp } from "@mcpgw/api";
import { createStore } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { createTestConfig, removeResource } from "../support/aws";
import { expectProblem } from "./helpers";

/** An app over fresh resources whose outage log repeats a line every `intervalMs`. */
async function appWithOutageInterval(intervalMs: number) {
  const config = await createTestConfig();
  const lines: Array<Record<string, unknown>> = [];
  const app = createApp({
    store: createStore(config, { outageLogIntervalMs: intervalMs }),
    logger: createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) }),
    adminToken: TEST_ADMIN_TOKEN,
    allowPrivateUpstreams: true,
  });
  const call = (method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const errors = () => lines.filter((l) => l.level === "error").map((l) => l.msg);
  return { config, call, lines, errors };
}

describe("a missing table in the API", () => {
  it("fails each request with 503 store.unavailable and its request id, and logs one line per interval", async () => {
    // Prepare
    const { config, call, lines, errors } = await appWithOutageInterval(400);
    await removeResource(config, "table");

    // Act: a request every ~50 ms for ~1.2 s
    const started = Date.now();
    const statuses: number[] = [];
    const requestIds: unknown[] = [];
    while (Date.now() - started < 1_200) {
      const response = await call("GET", "/v1/servers");
      requestIds.push((await expectProblem(response, 503, "store.unavailable")).requestId);
      statuses.push(response.status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const elapsed = Date.now() - started;

    // Assess
    expect(statuses.length).toBeGreaterThanOrEqual(8);
    const waiting = `table ${config.tableName} does not exist; waiting for it`;
    expect(errors().every((msg) => msg === waiting)).toBe(true);
    expect(errors().length).toBeGreaterThanOrEqual(2);
    expect(errors().length).toBeLessThanOrEqual(Math.ceil(elapsed / 400) + 1);
    // Every request id still leads to its lines (the access line, the failure at debug).
    for (const id of requestIds) {
      expect(lines.filter((l) => l.requestId === id).map((l) => l.msg)).toEqual(
        expect.arrayContaining(["request", "request failed"]),
      );
    }
  });
});

describe("a missing job queue in the API", () => {
  it("still creates servers (the sweep picks them up later) and logs the queue once", async () => {
    const { config, call, errors } = await appWithOutageInterval(30_000);
    await removeResource(config, "queue");

    for (let i = 0; i < 5; i++) {
      const response = await call("POST", "/v1/servers", {
        name: `queueless-${i}`,
        url: "https://example.com/mcp",
      });
      expect(response.status).toBe(201);
    }

    expect(errors()).toEqual([`job queue ${config.queueName} does not exist; waiting for it`]);
  });
});
