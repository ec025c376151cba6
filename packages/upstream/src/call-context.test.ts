import { describe, expect, it } from "vitest";
import { declaresCapabilityFor } from "./call-context";

describe("declaresCapabilityFor", () => {
  const roots = { method: "roots/list" } as const;
  const sampling = { method: "sampling/createMessage" } as const;
  const form = { method: "elicitation/create", params: { message: "?" } } as const;
  const url = { method: "elicitation/create", params: { mode: "url", url: "https://x" } } as const;

  it("asks only for what the caller declared", () => {
    expect(declaresCapabilityFor(undefined, roots)).toBe(false);
    expect(declaresCapabilityFor({}, roots)).toBe(false);
    expect(declaresCapabilityFor({ roots: {} }, roots)).toBe(true);
    expect(declaresCapabilityFor({ roots: {} }, sampling)).toBe(false);
    expect(declaresCapabilityFor({ sampling: {} }, sampling)).toBe(true);
  });

  it("an elicitation needs its mode declared; a bare elicitation capability is form", () => {
    expect(declaresCapabilityFor({ elicitation: {} }, form)).toBe(true);
    expect(declaresCapabilityFor({ elicitation: {} }, url)).toBe(false);
    expect(declaresCapabilityFor({ elicitation: { url: {} } }, form)).toBe(false);
    expect(declaresCapabilityFor({ elicitation: { url: {} } }, url)).toBe(true);
    expect(declaresCapabilityFor({ elicitation: { form: {}, url: {} } }, form)).toBe(true);
  });
});
