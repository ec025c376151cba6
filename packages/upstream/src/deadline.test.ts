import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadline } from "./deadline";

describe("Deadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("aborts with a request timeout once its time has passed", () => {
    const deadline = new Deadline(1_000, 10_000);
    vi.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.reason).toBeInstanceOf(SdkError);
    expect((deadline.signal.reason as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
  });

  it("is pushed back by extend(), never past its ceiling", () => {
    const deadline = new Deadline(1_000, 2_500);
    for (let step = 0; step < 2; step++) {
      vi.advanceTimersByTime(900);
      deadline.extend();
    }
    vi.advanceTimersByTime(699);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
  });

  it("never aborts once cleared", () => {
    const deadline = new Deadline(1_000, 10_000);
    deadline.clear();
    vi.advanceTimersByTime(20_000);
    expect(deadline.signal.aborted).toBe(false);
  });
});
