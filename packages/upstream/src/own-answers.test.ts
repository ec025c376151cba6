import { describe, expect, it } from "vitest";
import { capabilitiesForUpstream, NO_ROOTS, splitQuestions } from "./own-answers";

describe("capabilitiesForUpstream", () => {
  it("declares roots for a caller without them, and leaves a caller's own as they are", () => {
    expect(capabilitiesForUpstream(undefined)).toEqual({ roots: {} });
    expect(capabilitiesForUpstream({ sampling: {} })).toEqual({ sampling: {}, roots: {} });
    const own = { roots: { listChanged: true }, elicitation: {} };
    expect(capabilitiesForUpstream(own)).toBe(own);
  });
});

describe("splitQuestions", () => {
  const questions = {
    client_roots: { method: "roots/list" },
    user_name: { method: "elicitation/create", params: { message: "Name?" } },
  };

  it("answers roots for a caller that declared none; the rest are the caller's", () => {
    expect(splitQuestions(questions, { elicitation: {} })).toEqual({
      answers: { client_roots: NO_ROOTS },
      rest: { user_name: questions.user_name },
    });
    expect(splitQuestions({ a: { method: "roots/list" }, b: { method: "roots/list" } }, undefined)).toEqual({
      answers: { a: NO_ROOTS, b: NO_ROOTS },
      rest: {},
    });
  });

  it("leaves every question to a caller that declared roots, and copes with none or odd ones", () => {
    expect(splitQuestions(questions, { roots: {} })).toEqual({ answers: {}, rest: questions });
    expect(splitQuestions(undefined, undefined)).toEqual({ answers: {}, rest: {} });
    expect(splitQuestions({ odd: null }, undefined)).toEqual({ answers: {}, rest: { odd: null } });
  });
});
