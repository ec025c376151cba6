import { describe, expect, it } from "vitest";
import { describeNotReady } from "./health";

describe("describeNotReady", () => {
  it("names every dependency that is not ok, and how", () => {
    expect(describeNotReady({ table: "missing", queue: "ok", key: "ok", runner: "ok" })).toBe(
      "Not ready: the table is missing.",
    );
    expect(
      describeNotReady({ table: "missing", queue: "missing", key: "unusable", runner: "unreachable" }),
    ).toBe(
      "Not ready: the table is missing, the job queue is missing, the KMS key is disabled or pending deletion and the stdio runner is unreachable.",
    );
    expect(describeNotReady({ table: "ok", queue: "timeout", key: "error" })).toBe(
      "Not ready: the job queue is not answering in time and the KMS key is refusing the check.",
    );
  });
});
