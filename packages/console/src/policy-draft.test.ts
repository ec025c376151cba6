import { describe, expect, it } from "vitest";
import { NO_POLICY, policyOf, toolScopeText } from "./policy-draft";

describe("policyOf", () => {
  it("is undefined when the draft limits nothing (an except list alone limits nothing)", () => {
    expect(policyOf(NO_POLICY)).toBeUndefined();
    expect(policyOf({ ...NO_POLICY, except: "files__delete" })).toBeUndefined();
  });

  it("reads lists one a line or comma-separated, trimmed, blanks dropped", () => {
    expect(policyOf({ ...NO_POLICY, allow: " docs__search,\nfiles__read_* \n\n" })).toEqual({
      allow: ["docs__search", "files__read_*"],
    });
  });

  it("refuses the chosen hints with their exceptions", () => {
    expect(
      policyOf({ allow: "", refuseDestructive: true, refuseOpenWorld: true, except: "files__delete" }),
    ).toEqual({ refuse: { destructiveHint: true, openWorldHint: true }, except: ["files__delete"] });
  });
});

describe("toolScopeText", () => {
  it("names sets, allow-list and refusals; nothing when there are none", () => {
    expect(toolScopeText({})).toBe("");
    expect(
      toolScopeText({
        toolsets: ["ro"],
        toolPolicy: { allow: ["docs__*"], refuse: { destructiveHint: true }, except: ["docs__wipe"] },
      }),
    ).toBe("tool sets ro; only docs__*; refuses destructive tools except docs__wipe");
  });
});
