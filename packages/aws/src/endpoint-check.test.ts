import { describe, expect, it } from "vitest";
import { endpointFailureOf } from "./endpoint-check";

/** An SDK error as the client throws it: a name, maybe a socket code, maybe the answer's status. */
const sdkError = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name}: x`), { name, ...extra });

describe("what an SDK error says of its endpoint", () => {
  it("nothing answered: the socket's reason in words", () => {
    expect(endpointFailureOf(sdkError("Error", { code: "ECONNREFUSED", $metadata: {} }))).toEqual({
      kind: "unreachable",
      reason: "connection refused",
    });
    expect(endpointFailureOf(sdkError("Error", { cause: { code: "ENOTFOUND" } }))).toEqual({
      kind: "unreachable",
      reason: "host not found",
    });
    expect(endpointFailureOf(sdkError("Error", { code: "ECONNRESET" })).reason).toBe("connection reset");
  });

  it("no answer in time", () => {
    expect(endpointFailureOf(sdkError("TimeoutError"), 5_000)).toEqual({
      kind: "timeout",
      reason: "no answer within 5 s",
    });
    expect(endpointFailureOf(sdkError("AbortError"), 2_500).kind).toBe("timeout");
  });

  it("an answer: its status, and its AWS error name when it has one", () => {
    const status = (code: number) => ({ $metadata: { httpStatusCode: code } });
    expect(endpointFailureOf(sdkError("SyntaxError", status(500)))).toEqual({
      kind: "error",
      reason: "HTTP 500",
    });
    expect(endpointFailureOf(sdkError("InternalFailure", status(503)))).toEqual({
      kind: "error",
      reason: "HTTP 503 InternalFailure",
    });
    expect(endpointFailureOf(sdkError("UnrecognizedClientException", status(400)))).toEqual({
      kind: "credentials",
      reason: "HTTP 400 UnrecognizedClientException",
    });
    expect(endpointFailureOf(sdkError("AccessDeniedException", status(403))).kind).toBe("credentials");
    expect(endpointFailureOf(sdkError("ResourceNotFoundException", status(400))).kind).toBe("error");
  });

  it("anything else: its code or message, bounded", () => {
    expect(endpointFailureOf(sdkError("Error", { code: "EPROTO" }))).toEqual({
      kind: "error",
      reason: "EPROTO",
    });
    expect(endpointFailureOf(new Error("x".repeat(1_000))).reason.length).toBe(200);
  });
});
