/** The "Try it" form's reading of input schemas: controls, readable types, and the arguments sent. */
import { describe, expect, it } from "vitest";
import { buildArguments, kindOf, paramsOf, parseArgumentsJson, typeLabel } from "./tool-schema";
import type { JsonSchema } from "./types";

const SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    query: { type: "string", description: "What to look for" },
    limit: { type: "integer", minimum: 1 },
    ratio: { type: ["number", "null"] },
    exact: { type: "boolean" },
    strict: { type: "boolean", default: true },
    sort: { type: "string", enum: ["asc", "desc"] },
    level: { enum: [1, 2, 3] },
    tags: { type: "array", items: { type: "string" } },
    filter: { type: "object", properties: { owner: { type: "string" } } },
    either: { anyOf: [{ type: "string" }, { type: "number" }] },
  },
  required: ["query", "strict"],
};

describe("paramsOf / kindOf / typeLabel", () => {
  it("gives each property its control, in the schema's order, with what is required", () => {
    const params = paramsOf(SCHEMA) ?? [];
    expect(params.map((p) => [p.name, p.kind, p.required])).toEqual([
      ["query", "text", true],
      ["limit", "integer", false],
      ["ratio", "number", false],
      ["exact", "boolean", false],
      ["strict", "boolean", true],
      ["sort", "enum", false],
      ["level", "enum", false],
      ["tags", "json", false],
      ["filter", "json", false],
      ["either", "json", false],
    ]);
  });

  it("reads no schema or an object without properties as no parameters; other shapes as JSON", () => {
    expect(paramsOf(undefined)).toEqual([]);
    expect(paramsOf({ type: "object" })).toEqual([]);
    expect(paramsOf({ type: "object", additionalProperties: { type: "string" } })).toBeUndefined();
    expect(paramsOf({ type: "array" })).toBeUndefined();
    expect(kindOf({})).toBe("json");
  });

  it("words types as a person reads them", () => {
    const labels = Object.fromEntries((paramsOf(SCHEMA) ?? []).map((p) => [p.name, typeLabel(p.schema)]));
    expect(labels).toMatchObject({
      query: "string",
      ratio: "number | null",
      level: "enum",
      tags: "array of string",
      filter: "object (owner)",
      either: "string | number",
    });
  });
});

describe("buildArguments", () => {
  const params = paramsOf(SCHEMA) ?? [];

  it("types every filled field and leaves blank optional ones out", () => {
    const result = buildArguments(params, {
      query: "mcp",
      limit: "10",
      ratio: " 0.5 ",
      exact: true,
      sort: "1",
      level: "2",
      tags: '["a", "b"]',
      filter: '{"owner": "me"}',
      either: "",
    });
    expect(result).toEqual({
      ok: true,
      arguments: {
        query: "mcp",
        limit: 10,
        ratio: 0.5,
        exact: true,
        strict: true,
        sort: "desc",
        level: 3,
        tags: ["a", "b"],
        filter: { owner: "me" },
      },
    });
  });

  it("sends a required checkbox as shown, and an untouched optional one not at all", () => {
    expect(buildArguments(params, { query: "x" })).toEqual({
      ok: true,
      arguments: { query: "x", strict: true },
    });
    expect(buildArguments(params, { query: "x", strict: false, exact: false })).toEqual({
      ok: true,
      arguments: { query: "x", strict: false, exact: false },
    });
  });

  it("names what is wrong: a blank required field, a bad number, bad or mistyped JSON", () => {
    const result = buildArguments(params, {
      query: "",
      limit: "2.5",
      ratio: "many",
      tags: "[a",
      filter: "[1]",
      either: "null",
    });
    expect(result).toEqual({
      ok: false,
      errors: {
        query: "Required.",
        limit: "Enter a whole number.",
        ratio: "Enter a number.",
        tags: expect.stringMatching(/^Not valid JSON/),
        filter: expect.stringMatching(/JSON object/),
      },
    });
  });
});

describe("parseArgumentsJson", () => {
  it("takes a JSON object (blank is {}), and refuses anything else", () => {
    expect(parseArgumentsJson("")).toEqual({ ok: true, arguments: {} });
    expect(parseArgumentsJson('{"a": [1]}')).toEqual({ ok: true, arguments: { a: [1] } });
    expect(parseArgumentsJson("[1]")).toEqual({ ok: false, error: "The arguments must be a JSON object." });
    expect(parseArgumentsJson("{")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Not valid JSON/),
    });
  });
});
