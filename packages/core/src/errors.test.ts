import { describe, expect, it } from "vitest";
import { AppError, ERROR_CODES, type ErrorCode, RPC } from "./errors";

describe("the one error table", () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];

  it.each(codes)(
    "%s: a dotted code (or internal, rate_limited), an HTTP error status, a title and a JSON-RPC error code",
    (code) => {
      const [status, title, rpc] = ERROR_CODES[code];

      expect(code).toMatch(/^([a-z]+\.[a-z_]+|internal|rate_limited)$/);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
      expect(title.length).toBeGreaterThan(3);
      expect(Object.values(RPC)).toContain(rpc);
    },
  );

  it("server faults are internal errors on the wire; what the caller sent wrong is not", () => {
    for (const code of codes) {
      const [status, , rpc] = ERROR_CODES[code];
      if (status >= 500) expect(rpc, code).toBe(RPC.INTERNAL_ERROR);
    }
    expect(ERROR_CODES["request.malformed_json"][2]).toBe(RPC.PARSE_ERROR);
    expect(ERROR_CODES["tool.not_found"][2]).toBe(RPC.INVALID_PARAMS);
  });

  it("an AppError carries its row: status, title and JSON-RPC code", () => {
    const error = new AppError("tool.not_found", "No such tool.");

    expect([error.status, error.title, error.rpcCode]).toEqual(ERROR_CODES["tool.not_found"]);
  });
});
