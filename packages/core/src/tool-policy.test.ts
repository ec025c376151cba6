import { describe, expect, it } from "vitest";
import { effectiveHint, globMatches, matchingHints, policyRefusal, ruleMatches } from "./tool-policy";

const tool = (name: string, annotations?: Record<string, unknown>) => ({
  name,
  server: name.split("__")[0] ?? "",
  annotations,
});

describe("annotation hints under the spec's defaults", () => {
  it("a tool that says nothing is destructive and open-world, neither read-only nor idempotent", () => {
    expect(effectiveHint(undefined, "destructiveHint")).toBe(true);
    expect(effectiveHint(undefined, "openWorldHint")).toBe(true);
    expect(effectiveHint({}, "readOnlyHint")).toBe(false);
    expect(effectiveHint({}, "idempotentHint")).toBe(false);
  });

  it("a read-only tool is never destructive, whatever its destructiveHint says", () => {
    expect(effectiveHint({ readOnlyHint: true, destructiveHint: true }, "destructiveHint")).toBe(false);
    expect(effectiveHint({ readOnlyHint: false, destructiveHint: false }, "destructiveHint")).toBe(false);
    expect(effectiveHint({ openWorldHint: false }, "openWorldHint")).toBe(false);
  });

  it("non-boolean hints count as absent", () => {
    expect(effectiveHint({ destructiveHint: "no" }, "destructiveHint")).toBe(true);
    expect(effectiveHint({ readOnlyHint: "yes" }, "readOnlyHint")).toBe(false);
  });

  it("names the filter's hints that hold", () => {
    expect(matchingHints({}, { destructiveHint: true, readOnlyHint: true })).toEqual(["destructiveHint"]);
  });
});

describe("globs over qualified names", () => {
  it("* is any run, ? one character, everything else literal", () => {
    const cases: Array<[string, string, boolean]> = [
      ["fs__*", "fs__read_file", true],
      ["fs__*", "fsx__read", false],
      ["*__read_?ile", "fs__read_file", true],
      ["a.b", "axb", false],
      ["a+(b)", "a+(b)", true],
      ["fs__read", "fs__read_file", false],
      ["*", "", true],
      ["?", "", false],
      ["a*b*c", "axxbyyc", true],
      ["a*b*c", "axxbyyd", false],
      ["**x", "abx", true],
      ["a\nb", "a\nb", true],
      ["a?b", "a\nb", true],
    ];
    for (const [glob, name, matches] of cases)
      expect(globMatches(glob, name), `${glob} ~ ${name}`).toBe(matches);
  });

  it("matches a hostile glob against a long name in a few milliseconds", () => {
    const glob = `${"*a".repeat(12)}*b`;
    const name = "a".repeat(41);
    const started = performance.now();
    expect(globMatches(glob, name)).toBe(false);
    expect(globMatches(glob, `${name}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(20);
  });
});

describe("tool-set rules", () => {
  it("every given field must hold", () => {
    const read = tool("fs__read", { readOnlyHint: true });
    expect(ruleMatches({ server: "fs" }, read)).toBe(true);
    expect(ruleMatches({ server: "fs", annotations: { readOnlyHint: true } }, read)).toBe(true);
    expect(ruleMatches({ server: "fs", annotations: { destructiveHint: true } }, read)).toBe(false);
    expect(ruleMatches({ server: "gh", glob: "*" }, read)).toBe(false);
    expect(ruleMatches({ glob: "*__re*" }, read)).toBe(true);
  });

  it("a rule with no field matches nothing", () => {
    expect(ruleMatches({}, tool("fs__read"))).toBe(false);
    expect(ruleMatches({ annotations: {} }, tool("fs__read"))).toBe(false);
  });
});

describe("tool policies", () => {
  it("an allow-list lets through only what it names", () => {
    expect(policyRefusal({ allow: ["fs__read", "gh__*"] }, tool("fs__read"))).toBeUndefined();
    expect(policyRefusal({ allow: ["fs__read", "gh__*"] }, tool("gh__search"))).toBeUndefined();
    expect(policyRefusal({ allow: ["fs__read"] }, tool("fs__write"))).toBe("allow");
  });

  it("refuses by hint under the defaults, except what is exempt", () => {
    const policy = { refuse: { destructiveHint: true }, except: ["fs__delete"] };
    expect(policyRefusal(policy, tool("fs__write"))).toBe("destructiveHint");
    expect(policyRefusal(policy, tool("fs__write", { destructiveHint: false }))).toBeUndefined();
    expect(policyRefusal(policy, tool("fs__read", { readOnlyHint: true }))).toBeUndefined();
    expect(policyRefusal(policy, tool("fs__delete"))).toBeUndefined();
  });

  it("no policy refuses nothing", () => {
    expect(policyRefusal(null, tool("fs__write"))).toBeUndefined();
    expect(policyRefusal({}, tool("fs__write"))).toBeUndefined();
  });
});
