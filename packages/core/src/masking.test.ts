import { describe, expect, it } from "vitest";
import {
  isMaskedHeader,
  looksMasked,
  maskAuthorization,
  maskHeaders,
  mergeMaskedHeaders,
  SECRET_MASK,
} from "./masking";

describe("maskAuthorization", () => {
  it.each([
    ["Bearer abc", "Bearer [SECRET]"],
    ["Basic xyz", "Basic [SECRET]"],
    ["Basic dXNlcjpwYXNz==", "Basic [SECRET]"],
    ["bearer abc", "bearer [SECRET]"],
    ["Token abc def", "Token [SECRET]"],
    ["  Bearer    abc  ", "Bearer [SECRET]"],
    ["Bearer\tabc", "Bearer [SECRET]"],
    ["AWS4-HMAC-SHA256 Credential=AKIA/2025, Signature=abc", "AWS4-HMAC-SHA256 [SECRET]"],
    ["abc", "[SECRET]"],
    ["sk-live-0123456789", "[SECRET]"],
    ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "[SECRET]"],
    ["Bearer", "[SECRET]"],
    ["Bearer ", "[SECRET]"],
    ["", "[SECRET]"],
  ])("masks %j as %j", (value, expected) => {
    // Prepare / Act
    const masked = maskAuthorization(value);

    // Assess
    expect(masked).toBe(expected);
  });

  it.each([["Bearer ghp_s3ntinel"], ["Basic c2VudGluZWw="], ["s3ntinel-token"], ["Token a b c s3ntinel"]])(
    "never shows the credential of %j",
    (value) => {
      // Prepare
      const credential = value.split(" ").at(-1) ?? value;

      // Act
      const masked = maskAuthorization(value);

      // Assess
      expect(masked).not.toContain(credential);
      expect(masked.endsWith(SECRET_MASK)).toBe(true);
    },
  );

  it("produces a value that looks masked", () => {
    // Prepare / Act
    const masked = maskAuthorization("Bearer abc");

    // Assess
    expect(looksMasked(masked)).toBe(true);
  });
});

describe("maskHeaders", () => {
  it.each([["Authorization"], ["authorization"], ["AUTHORIZATION"], ["aUtHoRiZaTiOn"]])(
    "masks the %s header and leaves the others",
    (name) => {
      // Prepare
      const headers = { [name]: "Bearer abc", "X-Api-Key": "k3y", Accept: "application/json" };

      // Act
      const masked = maskHeaders(headers);

      // Assess
      expect(masked).toStrictEqual({
        [name]: "Bearer [SECRET]",
        "X-Api-Key": "k3y",
        Accept: "application/json",
      });
    },
  );

  it("returns an empty map for no headers", () => {
    // Prepare / Act
    const masked = maskHeaders({});

    // Assess
    expect(masked).toStrictEqual({});
  });

  it("does not modify its input", () => {
    // Prepare
    const headers = { Authorization: "Bearer abc" };

    // Act
    maskHeaders(headers);

    // Assess
    expect(headers).toStrictEqual({ Authorization: "Bearer abc" });
  });
});

describe("isMaskedHeader", () => {
  it.each([
    ["Authorization", true],
    ["authorization", true],
    ["X-Authorization", false],
    ["Authorization-Extra", false],
    ["X-Api-Key", false],
  ])("%s → %s", (name, expected) => {
    // Prepare / Act / Assess
    expect(isMaskedHeader(name)).toBe(expected);
  });
});

describe("looksMasked", () => {
  it.each([
    ["[SECRET]", true],
    ["Bearer [SECRET]", true],
    ["  Bearer [SECRET]  ", true],
    ["Bearer abc", false],
    ["[SECRET]x", false],
    ["", false],
  ])("%j → %s", (value, expected) => {
    // Prepare / Act / Assess
    expect(looksMasked(value)).toBe(expected);
  });
});

describe("mergeMaskedHeaders", () => {
  it("keeps the stored value for an unchanged mask and passes the rest through", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t", "X-Old": "gone" };
    const submitted = { authorization: "Bearer [SECRET]", "X-New": "[SECRET]" };

    // Act
    const result = mergeMaskedHeaders(stored, submitted);

    // Assess
    expect(result).toStrictEqual({
      headers: { authorization: "Bearer s3cr3t", "X-New": "[SECRET]" },
      unmatchedMasks: [],
    });
  });

  it("reports masks that match nothing stored", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t" };
    const submitted = { Authorization: "Basic [SECRET]" };

    // Act
    const result = mergeMaskedHeaders(stored, submitted);

    // Assess
    expect(result).toStrictEqual({ headers: {}, unmatchedMasks: ["Authorization"] });
  });

  it("takes a new, unmasked value as is", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t" };
    const submitted = { Authorization: "Bearer n3w" };

    // Act
    const result = mergeMaskedHeaders(stored, submitted);

    // Assess
    expect(result).toStrictEqual({ headers: { Authorization: "Bearer n3w" }, unmatchedMasks: [] });
  });
});
