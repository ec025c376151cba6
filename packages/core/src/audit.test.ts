import { describe, expect, it } from "vitest";
import { auditEventId } from "./audit";

describe("auditEventId", () => {
  it("sorts by time, and differs within one millisecond", () => {
    const a = auditEventId(1_700_000_000_000);
    const b = auditEventId(1_700_000_000_001);
    expect(a < b).toBe(true);
    const many = new Set(Array.from({ length: 10_000 }, () => auditEventId(7)));
    expect(many.size).toBe(10_000);
    expect(auditEventId(5)).not.toBe(auditEventId(5));
    expect(auditEventId(5)).toMatch(/^[0-9a-f]{28}$/);
  });
});
