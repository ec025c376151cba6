import { describe, expect, it } from "vitest";
import {
  ENV_MASKS,
  HEADER_MASKS,
  isAuthorizationHeader,
  looksMasked,
  maskAuthorization,
  maskEnv,
  maskedKeys,
  maskHeaders,
  maskMap,
  mergeMasked,
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
    "masks the %s header with its scheme and every other header as [SECRET]",
    (name) => {
      // Prepare
      const headers = { [name]: "Bearer abc", "X-Api-Key": "k3y", Accept: "application/json" };

      // Act
      const masked = maskHeaders(headers);

      // Assess
      expect(masked).toStrictEqual({
        [name]: "Bearer [SECRET]",
        "X-Api-Key": "[SECRET]",
        Accept: "[SECRET]",
      });
    },
  );

  it.each([["X-Api-Key"], ["X-Authorization"], ["Proxy-Authorization"], ["Cookie"]])(
    "never shows the value of %s, not even its scheme",
    (name) => {
      // Prepare
      const headers = { [name]: "Bearer s3ntinel" };

      // Act
      const masked = maskHeaders(headers);

      // Assess
      expect(masked).toStrictEqual({ [name]: SECRET_MASK });
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
    const headers = { Authorization: "Bearer abc", "X-Team": "blue" };

    // Act
    maskHeaders(headers);

    // Assess
    expect(headers).toStrictEqual({ Authorization: "Bearer abc", "X-Team": "blue" });
  });
});

describe("maskEnv", () => {
  it("masks every value as [SECRET], whatever the key (even one named Authorization)", () => {
    // Prepare
    const env = { API_TOKEN: "t0k3n", LOG_LEVEL: "debug", Authorization: "Bearer abc", EMPTY: "" };

    // Act
    const masked = maskEnv(env);

    // Assess
    expect(masked).toStrictEqual({
      API_TOKEN: "[SECRET]",
      LOG_LEVEL: "[SECRET]",
      Authorization: "[SECRET]",
      EMPTY: "[SECRET]",
    });
  });

  it("is maskMap under the env rule", () => {
    // Prepare
    const env = { A: "1", B: "2" };

    // Act / Assess
    expect(maskEnv(env)).toStrictEqual(maskMap(env, ENV_MASKS));
    expect(maskHeaders(env)).toStrictEqual(maskMap(env, HEADER_MASKS));
  });
});

describe("isAuthorizationHeader", () => {
  it.each([
    ["Authorization", true],
    ["authorization", true],
    ["X-Authorization", false],
    ["Authorization-Extra", false],
    ["X-Api-Key", false],
  ])("%s → %s", (name, expected) => {
    // Prepare / Act / Assess
    expect(isAuthorizationHeader(name)).toBe(expected);
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

describe("maskedKeys", () => {
  it("names every key whose value is a mask", () => {
    // Prepare
    const map = { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]", "X-Real": "blue" };

    // Act
    const keys = maskedKeys(map);

    // Assess
    expect(keys).toStrictEqual(["Authorization", "X-Team"]);
  });
});

describe("mergeMasked (headers)", () => {
  it("keeps the stored value for an unchanged mask of any header and passes real values through", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t", "X-Api-Key": "k3y", "X-Old": "gone" };
    const submitted = { authorization: "Bearer [SECRET]", "x-api-key": "[SECRET]", "X-New": "fresh" };

    // Act
    const result = mergeMasked(stored, submitted, HEADER_MASKS);

    // Assess
    expect(result).toStrictEqual({
      values: { authorization: "Bearer s3cr3t", "x-api-key": "k3y", "X-New": "fresh" },
      unmatchedMasks: [],
    });
  });

  it("reports masks that match nothing stored", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t", "X-Team": "blue" };
    const submitted = { Authorization: "Basic [SECRET]", "X-Team": "Bearer [SECRET]", "X-New": "[SECRET]" };

    // Act
    const result = mergeMasked(stored, submitted, HEADER_MASKS);

    // Assess
    expect(result).toStrictEqual({ values: {}, unmatchedMasks: ["Authorization", "X-Team", "X-New"] });
  });

  it("takes a new, unmasked value as is", () => {
    // Prepare
    const stored = { Authorization: "Bearer s3cr3t", "X-Team": "blue" };
    const submitted = { Authorization: "Bearer n3w", "X-Team": "red" };

    // Act
    const result = mergeMasked(stored, submitted, HEADER_MASKS);

    // Assess
    expect(result).toStrictEqual({ values: submitted, unmatchedMasks: [] });
  });
});

describe("mergeMasked (env)", () => {
  it("keeps per key: an unchanged mask keeps, an omitted key is gone, another value replaces", () => {
    // Prepare
    const stored = { API_TOKEN: "t0k3n", MODE: "fast", OLD: "x" };
    const submitted = { API_TOKEN: "[SECRET]", MODE: "slow", NEW: "y" };

    // Act
    const result = mergeMasked(stored, submitted, ENV_MASKS);

    // Assess
    expect(result).toStrictEqual({
      values: { API_TOKEN: "t0k3n", MODE: "slow", NEW: "y" },
      unmatchedMasks: [],
    });
  });

  it("matches env names case-sensitively", () => {
    // Prepare
    const stored = { API_TOKEN: "t0k3n" };
    const submitted = { api_token: "[SECRET]" };

    // Act
    const result = mergeMasked(stored, submitted, ENV_MASKS);

    // Assess
    expect(result).toStrictEqual({ values: {}, unmatchedMasks: ["api_token"] });
  });

  it("refuses a scheme'd mask for an env value (env masks are always bare)", () => {
    // Prepare
    const stored = { AUTH: "Bearer t0k3n" };
    const submitted = { AUTH: "Bearer [SECRET]" };

    // Act
    const result = mergeMasked(stored, submitted, ENV_MASKS);

    // Assess
    expect(result).toStrictEqual({ values: {}, unmatchedMasks: ["AUTH"] });
  });
});
