import { describe, expect, it } from "vitest";
import { s256, verifierMatches } from "./pkce";

describe("PKCE S256", () => {
  it("matches RFC 7636 appendix B's example", () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    expect(s256(verifier)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(verifierMatches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")).toBe(true);
  });

  it("refuses a wrong, short or malformed verifier", () => {
    const challenge = s256("a".repeat(43));
    expect(verifierMatches("b".repeat(43), challenge)).toBe(false);
    expect(verifierMatches("a".repeat(42), s256("a".repeat(42)))).toBe(false);
    expect(verifierMatches(`${"a".repeat(42)} `, challenge)).toBe(false);
    expect(verifierMatches("a".repeat(43), "")).toBe(false);
  });
});
