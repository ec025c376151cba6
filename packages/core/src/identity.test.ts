import { describe, expect, it } from "vitest";
import { isIdentityName } from "./identity";

describe("identity names", () => {
  it("take the subs real providers issue", () => {
    for (const sub of [
      "0b1c5a7e-7f1e-4c56-9a57-3c3f0a5d2b9e", // Cognito, Entra oid
      "110169484474386276334", // Google
      "auth0|5f7c8ec7c33c6c004bbafe82", // Auth0
      "google-oauth2|1234567890", // Auth0 social
      "00u1abcd2EFGH3ijk4l5", // Okta
      "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", // Entra pairwise sub
      "ada@example.com",
      "Engineering Team",
      "a".repeat(255),
    ]) {
      expect(isIdentityName(sub), sub).toBe(true);
    }
  });

  it("refuse what would confuse a subject or a path: ':', '/', ',', edges of space, control characters", () => {
    for (const bad of ["", "user:ada", "a/b", "a,b", " ada", "ada ", "a\nb", "a\u0000b", "a".repeat(256)]) {
      expect(isIdentityName(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});
