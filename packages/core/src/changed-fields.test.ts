import { describe, expect, it } from "vitest";
import { changedFields } from "./changed-fields";

describe("changedFields", () => {
  it("names the top-level fields whose values differ, sorted", () => {
    expect(changedFields({ a: 1, b: "x", c: true }, { a: 2, b: "x", c: false })).toEqual(["a", "c"]);
  });

  it("names fields added and removed", () => {
    expect(changedFields({ kept: 1, gone: 2 }, { kept: 1, added: 3 })).toEqual(["added", "gone"]);
  });

  it("walks nested objects down to the leaf that differs", () => {
    const before = { auth: { type: "oauth", clientId: "a", scopes: ["x"] }, timeoutMs: 1 };
    const after = { auth: { type: "oauth", clientId: "b", scopes: ["x"] }, timeoutMs: 1 };
    expect(changedFields(before, after)).toEqual(["auth.clientId"]);
  });

  it("names each leaf of an object that appears or goes", () => {
    expect(changedFields({}, { rateLimit: { perMinute: 5, perDay: 9 } })).toEqual([
      "rateLimit.perDay",
      "rateLimit.perMinute",
    ]);
    expect(changedFields({ rateLimit: { perMinute: 5 } }, {})).toEqual(["rateLimit.perMinute"]);
  });

  it("compares arrays whole, by their contents and order", () => {
    expect(changedFields({ args: ["a", "b"] }, { args: ["a", "b"] })).toEqual([]);
    expect(changedFields({ args: ["a", "b"] }, { args: ["b", "a"] })).toEqual(["args"]);
    expect(changedFields({ args: ["a"] }, { args: ["a", "b"] })).toEqual(["args"]);
    expect(changedFields({ rules: [{ tool: "x", on: true }] }, { rules: [{ tool: "x", on: true }] })).toEqual(
      [],
    );
    expect(changedFields({ rules: [{ tool: "x" }] }, { rules: [{ tool: "y" }] })).toEqual(["rules"]);
    expect(changedFields({ args: [] }, {})).toEqual(["args"]);
  });

  it("names secrets by their entry, never their values", () => {
    const before = { headers: { Authorization: "Bearer old-secret", "X-Team": "[SECRET]" }, env: {} };
    const after = {
      headers: { Authorization: "Bearer new-secret", "X-Team": "[SECRET]", "X-New": "planted" },
      env: { API_KEY: "sentinel" },
    };
    const fields = changedFields(before, after);
    expect(fields).toEqual(["env.API_KEY", "headers.Authorization", "headers.X-New"]);
    expect(JSON.stringify(fields)).not.toMatch(/secret|planted|sentinel/);
    expect(changedFields({ headers: { Gone: "v" } }, { headers: {} })).toEqual(["headers.Gone"]);
  });

  it("takes a key holding undefined as absent, and null as a value", () => {
    expect(changedFields({ a: undefined, b: 1 }, { b: 1 })).toEqual([]);
    expect(changedFields({ b: 1 }, { a: undefined, b: 1 })).toEqual([]);
    expect(changedFields({ nested: { a: undefined } }, {})).toEqual([]);
    expect(changedFields({ owner: null }, {})).toEqual(["owner"]);
    expect(changedFields({ owner: null }, { owner: null })).toEqual([]);
    expect(changedFields({ owner: null }, { owner: { id: 1 } })).toEqual(["owner"]);
  });

  it("names a field whose kind changes (value to object, object to array)", () => {
    expect(changedFields({ a: "x" }, { a: { b: 1 } })).toEqual(["a"]);
    expect(changedFields({ a: { b: 1 } }, { a: [1] })).toEqual(["a"]);
    expect(changedFields({ a: { b: 1 } }, { a: "x" })).toEqual(["a"]);
    expect(changedFields({ a: "x" }, { a: {} })).toEqual(["a"]);
  });

  it("names every set field of a record made from nothing", () => {
    expect(changedFields(undefined, { name: "n", headers: { A: "1" }, args: [] })).toEqual([
      "args",
      "headers.A",
      "name",
    ]);
    expect(changedFields(undefined, undefined)).toEqual([]);
  });
});
