import { describe, expect, it } from "vitest";
import { auditEventId } from "./audit";

describe("auditEventId", () => {
  it("sorts by time, and differs within one millisecond", () => {
    const a = auditEventId(1_700_000_000_000, Buffer.alloc(8, 0xff));
    const b = auditEventId(1_700_000_000_001, Buffer.alloc(8, 0));
    expect(a < b).toBe(true);
    expect(auditEventId(5)).not.toBe(auditEventId(5));
    expect(auditEventId(5)).toMatch(/^[0-9a-f]{28}$/);
  });
});
