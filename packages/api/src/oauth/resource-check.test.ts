import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { grantsFit, MAX_GRANTS_BYTES, reachFits } from "./resource-check";

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

  it("a reach fits only with its server ids counted too: grants near their bound and 100 servers do not", () => {
    const ids = (count: number) => Array.from({ length: count }, () => randomUUID());
    const grant = (servers: number) => ({
      serverIds: ids(servers),
      toolsets: [],
      toolPolicy: { refuse: { destructiveHint: true } },
    });
    expect(reachFits({ ids: ids(10), grants: [grant(10)] })).toBe(true);
    expect(reachFits({ ids: null })).toBe(true);
    // The grant alone fits its bound; with the same 100 ids in `servers` the token would pass 8 KiB.
    const wide = grant(100);
    expect(grantsFit([wide])).toBe(true);
    expect(reachFits({ ids: wide.serverIds, grants: [wide] })).toBe(false);
  });
});
