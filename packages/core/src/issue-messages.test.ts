import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asSentence, describeIssues, type FieldProblem } from "./errors";

/** What a person is told when `input` breaks `schema`. */
function told(schema: z.ZodType, input: unknown): FieldProblem[] {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error(`expected a refusal of ${JSON.stringify(input)}`);
  return describeIssues(parsed.error.issues);
}

const one = (schema: z.ZodType, input: unknown) => told(z.object({ field: schema }), { field: input });

describe("what a field is told when its schema gives no message", () => {
  it.each([
    ["a missing value", z.string(), undefined, "Required."],
    ["text for a number", z.number(), "30", "Must be a number, not text."],
    ["a fraction for a whole number", z.number().int(), 1.5, "Must be a whole number, not a number."],
    [
      "an overflowing number (1e400 reads as Infinity)",
      z.number(),
      JSON.parse("1e400"),
      "Must be a finite number.",
    ],
    ["a number for text", z.string(), 5, "Must be text, not a number."],
    ["text for a flag", z.boolean(), "yes", "Must be true or false, not text."],
    ["text for a list", z.array(z.string()), "a,b", "Must be a list, not text."],
    ["a list for an object", z.record(z.string(), z.string()), ["A=b"], "Must be an object, not a list."],
    ["empty text", z.string().min(1), "", "Must not be empty."],
    ["long text", z.string().max(3), "abcd", "Must be at most 3 characters."],
    ["short text", z.string().min(8), "abc", "Must be at least 8 characters."],
    ["a long list", z.array(z.number()).max(2), [1, 2, 3], "Must have at most 2 items."],
    ["an empty list", z.array(z.number()).min(1), [], "Must have at least one item."],
    ["a big number", z.number().max(900), 901, "Must be at most 900."],
    ["a number at an exclusive bound", z.number().lt(5), 5, "Must be less than 5."],
    ["a small number", z.number().positive(), 0, "Must be more than 0."],
    ["another option", z.enum(["project", "thread"]), "global", 'Must be one of "project", "thread".'],
    ["not the one value", z.literal("http"), "sse", 'Must be "http".'],
    ["no URL", z.url(), "not a url", "Must be a URL."],
    ["an odd number", z.number().multipleOf(5), 7, "Must be a multiple of 5."],
  ])("%s", (_label, schema, input, message) => {
    expect(one(schema, input)).toEqual([{ field: "field", message }]);
  });

  it("names each unknown field as a field of its own", () => {
    expect(told(z.strictObject({ name: z.string() }), { name: "a", nmae: "b", extra: 1 })).toEqual([
      { field: "nmae", message: "Not a field this request takes." },
      { field: "extra", message: "Not a field this request takes." },
    ]);
  });

  it("says what is wrong with a record's key after 'the name', in one sentence", () => {
    const Keys = z.record(z.string().regex(/^[A-Z]+$/, "Must be capital letters."), z.string());
    expect(one(Keys, { bad: "x" })).toEqual([
      { field: "field.bad", message: "The name must be capital letters." },
    ]);
  });

  it("keeps a schema's own message, as a sentence", () => {
    expect(one(z.string().min(1, "must name the team"), "")).toEqual([
      { field: "field", message: "Must name the team." },
    ]);
  });

  it("gives the whole body an empty field", () => {
    expect(told(z.object({}), "text")).toEqual([{ field: "", message: "Must be an object, not text." }]);
  });
});

describe("asSentence", () => {
  it("capitalises a first word in lower case, leaves a name as written, and ends with one full stop", () => {
    expect(asSentence("must not be empty")).toBe("Must not be empty.");
    expect(asSentence("clientSecret needs a clientId")).toBe("clientSecret needs a clientId.");
    expect(asSentence("Done already.")).toBe("Done already.");
    expect(asSentence("  is it?  ")).toBe("Is it?");
  });
});
