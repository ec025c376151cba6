import { AppError } from "@mcpgw/core";
import { CallFailure } from "@mcpgw/upstream";
import { ProtocolErrorCode as ErrorCode, ProtocolError } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../env";
import { type McpOriginPolicy, originGuard } from "../origin-guard";
import { decodeCursor, encodeCursor, toMcpError } from "./mcp";

describe("the tools/list cursor", () => {
  it("round-trips an offset, and no cursor means the first page", () => {
    for (const offset of [0, 100, 12_300]) expect(decodeCursor(encodeCursor(offset))).toBe(offset);
    expect(decodeCursor(undefined)).toBe(0);
    expect(decodeCursor("")).toBe(0);
  });

  it("is opaque: base64url, no offset in sight", () => {
    expect(encodeCursor(100)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(encodeCursor(100)).not.toContain("100");
  });

  it("refuses anything that is not a whole offset ≥ 0 as invalid params", () => {
    const forged = (value: unknown) => Buffer.from(JSON.stringify({ o: value })).toString("base64url");
    for (const cursor of ["garbage!", "e30", forged(-1), forged(1.5), forged("10"), forged(null)]) {
      expect(() => decodeCursor(cursor), cursor).toThrow(
        expect.objectContaining({
          code: ErrorCode.InvalidParams,
          message: expect.stringContaining("invalid cursor"),
        }),
      );
    }
  });
});

describe("toMcpError: what crosses the wire as JSON-RPC", () => {
  it("passes an upstream's own JSON-RPC error code through, without doubled prefixes", () => {
    const upstream = new ProtocolError(-32042, "quota exceeded");
    const error = toMcpError(new CallFailure("rpc", upstream.message, { cause: upstream }));

    expect(error.code).toBe(-32042);
    expect(error.message).toBe("quota exceeded");
  });

  it("maps what the caller got wrong to invalid params, with the gateway's code in data", () => {
    for (const code of [
      "tool.not_found",
      "tool.invalid_name",
      "server.not_found",
      "server.unavailable",
    ] as const) {
      const error = toMcpError(new AppError(code, `detail of ${code}`));
      expect(error).toMatchObject({ code: ErrorCode.InvalidParams, data: { code } });
      expect(error.message).toContain(`detail of ${code}`);
    }
  });

  it("maps other user-visible errors to internal errors that keep their code", () => {
    const error = toMcpError(new AppError("upstream.timeout", "the upstream did not answer in 60 s"));

    expect(error).toMatchObject({ code: ErrorCode.InternalError, data: { code: "upstream.timeout" } });
  });

  it("says which kind of upstream failure it was; a too-large answer has its own code", () => {
    expect(toMcpError(new CallFailure("timeout", "no answer in 60 s"))).toMatchObject({
      code: ErrorCode.InternalError,
      message: expect.stringContaining("upstream timeout: no answer in 60 s"),
    });
    expect(toMcpError(new CallFailure("too_large", "the answer exceeds 16 MiB"))).toMatchObject({
      code: ErrorCode.InternalError,
      data: { code: "upstream.response_too_large" },
    });
  });

  it("never lets an unexpected error's text out", () => {
    const error = toMcpError(new Error("connect to 10.0.0.7:5432 failed: password=hunter2"));

    expect(error).toMatchObject({
      code: ErrorCode.InternalError,
      message: "internal error",
    });
    expect(error.data).toBeUndefined();
  });
});

describe("originGuard (DNS-rebinding protection)", () => {
  const guarded = (policy: McpOriginPolicy) =>
    new Hono<AppEnv>().use("/mcp", originGuard(policy)).post("/mcp", (c) => c.text("through"));
  const post = (app: Hono<AppEnv>, headers: Record<string, string>, url = "http://127.0.0.1:8787/mcp") =>
    app.request(url, { method: "POST", headers });

  it("lets through callers without an Origin (not a browser) and loopback origins", async () => {
    const app = guarded({});
    const callers: Array<Record<string, string>> = [
      {},
      { origin: "http://localhost:3000" },
      { origin: "http://127.0.0.1:6274" },
      { origin: "https://[::1]:8443" },
    ];
    for (const headers of callers) {
      expect((await post(app, headers)).status, JSON.stringify(headers)).toBe(200);
    }
  });

  it("refuses another origin with 403 auth.forbidden, unless it is allowed", async () => {
    const refused = await post(guarded({}), { origin: "https://evil.example" });
    const allowed = await post(guarded({ allowedOrigins: ["https://App.Example/"] }), {
      origin: "https://app.example",
    });

    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(await refused.json()).toMatchObject({ code: "auth.forbidden", instance: "/mcp" });
    expect(allowed.status).toBe(200);
  });

  it("refuses origins that only look like loopback", async () => {
    const app = guarded({});
    for (const origin of [
      "http://localhost.evil.example",
      "http://127.0.0.1.nip.io",
      "file://localhost",
      "null",
    ]) {
      expect((await post(app, { origin })).status, origin).toBe(403);
    }
  });

  it("on a loopback listener, requires a loopback Host header", async () => {
    const app = guarded({ loopbackOnly: true });

    for (const host of ["127.0.0.1:8787", "localhost", "LOCALHOST:80", "[::1]:8787"])
      expect((await post(app, { host })).status, host).toBe(200);
    for (const host of ["rebound.example:8787", "127.0.0.1.nip.io", ""])
      expect((await post(app, { host })).status, host).toBe(403);
    expect((await post(app, {})).status).toBe(403);
  });
});
