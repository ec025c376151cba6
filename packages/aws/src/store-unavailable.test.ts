import { AppError } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { StoreError } from "./dynamo";
import { isStoreUnavailable, storeUnavailable } from "./store-unavailable";
import { UnreadableAnswer } from "./unreadable-answers";

/** An error as an AWS SDK client throws it: named, with its `$metadata`. */
function sdkError(name: string, metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return Object.assign(new Error(name), { name, $metadata: metadata, ...extra });
}

describe("isStoreUnavailable", () => {
  it("nothing answered, 5xx, throttling, unreadable answers, missing resources and unmade writes count", () => {
    const refused = Object.assign(sdkError("Error", { attempts: 3 }), { code: "ECONNREFUSED" });
    expect(isStoreUnavailable(refused)).toBe(true);
    expect(isStoreUnavailable(sdkError("InternalServerError", { httpStatusCode: 500 }))).toBe(true);
    expect(isStoreUnavailable(sdkError("ThrottlingException", { httpStatusCode: 400 }))).toBe(true);
    expect(
      isStoreUnavailable(sdkError("ProvisionedThroughputExceededException", { httpStatusCode: 400 })),
    ).toBe(true);
    expect(isStoreUnavailable(sdkError("ResourceNotFoundException", { httpStatusCode: 400 }))).toBe(true);
    expect(isStoreUnavailable(Object.assign(new UnreadableAnswer("cut short"), { $metadata: {} }))).toBe(
      true,
    );
    expect(isStoreUnavailable(new StoreError("Server was not saved"))).toBe(true);
    // Wrapped (a sealing or queue error around the SDK's) counts too.
    expect(isStoreUnavailable(new Error("seal failed", { cause: refused }))).toBe(true);
  });

  it("a refusal of the request itself, an error that never met the SDK, or missing credentials do not", () => {
    expect(isStoreUnavailable(sdkError("ValidationException", { httpStatusCode: 400 }))).toBe(false);
    expect(isStoreUnavailable(sdkError("AccessDeniedException", { httpStatusCode: 400 }))).toBe(false);
    expect(isStoreUnavailable(sdkError("CredentialsProviderError", {}))).toBe(false);
    expect(isStoreUnavailable(new Error("ECONNREFUSED"))).toBe(false);
    expect(isStoreUnavailable(new AppError("server.not_found", "No server."))).toBe(false);
    expect(isStoreUnavailable("text")).toBe(false);
  });
});

describe("storeUnavailable", () => {
  it("is the 503 problem with retryAfter and the caller's fields; it never repeats the AWS error's text", () => {
    const problem = storeUnavailable(sdkError("InternalServerError", { httpStatusCode: 500 }), {
      requestId: "r1",
    });
    expect(problem).toMatchObject({
      code: "store.unavailable",
      status: 503,
      extra: { retryAfter: 1, requestId: "r1" },
    });
    expect(problem?.detail).not.toContain("InternalServerError");
    expect(storeUnavailable(new StoreError("Server 'a' was not saved (X); nothing changed"))?.detail).toBe(
      "Server 'a' was not saved (X); nothing changed. Try again.",
    );
    expect(storeUnavailable(new Error("bug"))).toBeUndefined();
  });
});
