import { describe, expect, it } from "vitest";
import { grantsFit, MAX_GRANTS_BYTES } from "./resource-check";

describe("grants in a token", () => {
  const policy = (names: number) => ({
    serverIds: null,
    toolsets: [],
    toolPolicy: { allow: Array.from({ length: names }, (_, at) => `github__tool_number_${at}`) },
  });

  it("a short policy fits; a 200-name allow-list does not", () => {
    expect(grantsFit(undefined)).toBe(true);
    expect(grantsFit([policy(20)])).toBe(true);
    expect(JSON.stringify([policy(200)]).length).toBeGreaterThan(MAX_GRANTS_BYTES);
    expect(grantsFit([policy(200)])).toBe(false);
  });

  it("several mappings count together", () => {
    expect(grantsFit([policy(80)])).toBe(true);
    expect(grantsFit([policy(80), policy(80)])).toBe(false);
  });
});
