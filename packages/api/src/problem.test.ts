import { createOutageLog } from "@mcpgw/aws";
import { AppError, createLogger } from "@mcpgw/core";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "./env";
import { onError, problemBody } from "./problem";

/** A tiny app whose one route throws `error`, rendered by the one error handler. */
function throwing(error: Error) {
  const lines: Array<Record<string, unknown>> = [];
  const outages = createOutageLog({ tableName: "t", queueName: "q", queueUrl: undefined, keyId: "k" });
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("requestId", "req-1");
    c.set("logger", createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) }));
    await next();
  });
  app.onError((e, c) => onError(e, c, outages));
  app.get("/v1/thing", () => {
    throw error;
  });
  return { request: () => app.request("/v1/thing"), lines };
}

/** An error as the AWS SDK throws it: a name and the `$metadata` of an answer. */
const awsError = (name: string) =>
  Object.assign(new Error(`${name}: gone`), { name, $metadata: { httpStatusCode: 400 } });

describe("problemBody", () => {
  it("has the RFC 9457 members, the stable code, the instance and the error's extra fields", () => {
    const error = new AppError("server.name_taken", "A server named 'docs' already exists.", {
      name: "docs",
    });

    expect(problemBody(error, "/v1/servers")).toEqual({
      type: "https://mcp-gateway.dev/problems/server.name_taken",
      title: "Server name taken",
      status: 409,
      detail: "A server named 'docs' already exists.",
      code: "server.name_taken",
      instance: "/v1/servers",
      name: "docs",
    });
  });
});

describe("onError: one renderer for every error", () => {
  it("renders an AppError as problem+json with its status", async () => {
    const response = await throwing(new AppError("server.not_found", "No server named 'x'.")).request();

    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ code: "server.not_found", instance: "/v1/thing" });
  });

  it("asks for a bearer token on 401, and says when to retry a 503", async () => {
    const unauthorized = await throwing(new AppError("auth.unauthorized", "Missing token.")).request();
    const notReady = await throwing(new AppError("service.not_ready", "Not ready.")).request();

    expect(unauthorized.headers.get("www-authenticate")).toBe('Bearer realm="mcp-gateway"');
    expect(notReady.headers.get("retry-after")).toBe("1");
  });

  it("maps Hono's HTTP errors to codes: malformed JSON, too large, not JSON, unauthorized, other 4xx", async () => {
    const cases: Array<[HTTPException, number, string]> = [
      [new HTTPException(400, { message: "Malformed JSON in request body" }), 400, "request.malformed_json"],
      [new HTTPException(413), 413, "request.too_large"],
      [new HTTPException(415, { message: "Unsupported Media Type" }), 415, "request.unsupported_media_type"],
      [new HTTPException(401), 401, "auth.unauthorized"],
      [new HTTPException(422, { message: "nope" }), 400, "request.invalid"],
    ];
    for (const [error, status, code] of cases) {
      const response = await throwing(error).request();
      expect({ status: response.status, body: await response.json() }).toMatchObject({
        status,
        body: { code },
      });
    }
  });

  it("a write the store did not make is 503 store.unavailable with a retry hint", async () => {
    const refused = Object.assign(new Error("The change was not saved (TimeoutError); nothing changed"), {
      name: "StoreError",
    });

    const response = await throwing(refused).request();

    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({
      code: "store.unavailable",
      detail: "The change was not saved (TimeoutError); nothing changed. Try again.",
      requestId: "req-1",
    });
  });

  it("anything else is a bare 500 with the request id: no message, no stack; logged in full", async () => {
    const { request, lines } = throwing(new Error("connect 10.0.0.7 failed: password=hunter2"));

    const response = await request();
    const text = await response.text();

    expect(response.status).toBe(500);
    expect(JSON.parse(text)).toMatchObject({ code: "internal", requestId: "req-1" });
    expect(text).not.toContain("hunter2");
    expect(text).not.toMatch(/\bat\s|\.ts:\d+/);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "error", msg: "request failed", errorMessage: expect.any(String) }),
    );
  });

  it("a missing resource is 503 store.unavailable, logged once through the outage log, not once per request", async () => {
    const { request, lines } = throwing(awsError("ResourceNotFoundException"));

    for (let i = 0; i < 3; i++) expect((await request()).status).toBe(503);

    expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      "table t does not exist; waiting for it",
    ]);
  });
});
