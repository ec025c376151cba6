import { describe, expect, it } from "vitest";
import { loginBindingOf, newLoginBinding } from "./binding";

describe("the sign-in binding", () => {
  it("derives the same state, nonce and verifier from its cookie, and different ones for another", () => {
    const binding = newLoginBinding(600);
    const again = loginBindingOf(binding.cookie);
    const other = newLoginBinding(600);

    expect(again).toEqual(binding);
    expect(new Set([binding.state, binding.nonce, binding.verifier]).size).toBe(3);
    expect(binding.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(other.state).not.toBe(binding.state);
  });

  it("refuses an expired, malformed or missing cookie, and a changed end changes the state", () => {
    const binding = newLoginBinding(600, 1_000);
    const [end, random] = binding.cookie.split(".");
    const extended = loginBindingOf(`${Number(end) + 3_600}.${random}`, 1_000);

    expect(loginBindingOf(binding.cookie, 1_601)).toBeUndefined();
    expect(loginBindingOf(binding.cookie, 1_500)?.state).toBe(binding.state);
    expect(extended?.state).not.toBe(binding.state);
    expect(loginBindingOf("garbage")).toBeUndefined();
    expect(loginBindingOf(undefined)).toBeUndefined();
  });
});
