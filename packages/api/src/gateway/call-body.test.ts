import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { describeCallBodyIssues, unknownFieldsHint } from "./call-body";

const Body = z.strictObject({
  arguments: z.record(z.string(), z.unknown()).default({}),
  chat: z.string().optional(),
});
const problemsOf = (body: unknown) => describeCallBodyIssues(Body.safeParse(body).error?.issues ?? []);

describe("a refused tool-call body", () => {
  it("says where a tool's own field goes", () => {
    expect(problemsOf({ message: "hi" })).toEqual([
      {
        field: "",
        message:
          'Unknown field "message": put the tool\'s arguments under "arguments": {"arguments": {"message": …}}',
      },
    ]);
  });

  it("names several unknown fields, at most five, each cut short", () => {
    expect(problemsOf({ a: 1, b: 2 })).toEqual([
      {
        field: "",
        message:
          'Unknown fields "a", "b": put the tool\'s arguments under "arguments": {"arguments": {"a": …, "b": …}}',
      },
    ]);
    const hint = unknownFieldsHint(["k1", "k2", "k3", "k4", "k5", "k6", "x".repeat(1_000)]);
    expect(hint).toContain('"k5": …, …}}');
    expect(hint).not.toContain("k6");
    expect(unknownFieldsHint(["y".repeat(1_000)]).length).toBeLessThan(300);
  });

  it("keeps every other problem as its field's, in words", () => {
    expect(problemsOf({ arguments: "hi", chat: 3 })).toEqual([
      { field: "arguments", message: "Must be an object, not text." },
      { field: "chat", message: "Must be text, not a number." },
    ]);
  });
});
