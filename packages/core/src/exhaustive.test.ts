import { describe, expect, it } from "vitest";
import { assertNever } from "./exhaustive";

describe("assertNever", () => {
  it("throws naming a value no case handled (one the types said could not come)", () => {
    // Prepare: a value outside the union, as untyped input could bring at run time.
    const kind = "sse" as never;

    // Act / Assess
    expect(() => assertNever(kind)).toThrow('unhandled case: "sse"');
  });
});
