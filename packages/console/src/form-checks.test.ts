import { NAME_SAYS } from "@mcpgw/core/name-rules";
import { describe, expect, it } from "vitest";
import {
  keyProblems,
  scopeProblems,
  secretProblems,
  subjectProblems,
  threadProblems,
  toolsetProblems,
} from "./form-checks";

describe("a secret's checks", () => {
  it("passes a good name with good keys, trimmed", () => {
    expect(secretProblems(" github.token ", ["API_KEY", " other-key "])).toEqual({});
  });

  it("says what the API would refuse of the name and of each key, beside each", () => {
    expect(secretProblems("my secret", ["API KEY", "", "A", "A"])).toEqual({
      name: [NAME_SAYS.secret],
      values: [
        "Every row needs a key name (remove the empty ones).",
        `Key “API KEY”: ${NAME_SAYS.secretKey}`,
        "Each key name may appear once.",
      ],
    });
    expect(secretProblems("  ", [])).toEqual({
      name: ["Give the secret a name."],
      values: ["Add at least one key."],
    });
  });
});

describe("a key's checks", () => {
  it("asks for a name, and an owner's name the sign-in could give when an owner is chosen", () => {
    expect(keyProblems("ci", undefined)).toEqual({});
    expect(keyProblems("ci", "engineering team")).toEqual({});
    expect(keyProblems(" ", "eng:ci")).toEqual({
      name: ["Give the key a name: who or what uses it."],
      owner: [NAME_SAYS.identity],
    });
    expect(keyProblems("ci", "  ")).toEqual({ owner: ["Give the owner's name, as the sign-in names them."] });
  });
});

describe("an access mapping's checks", () => {
  it("holds the name to the sign-in's names: no ':', '/' or ','", () => {
    expect(subjectProblems("ada")).toEqual({});
    expect(subjectProblems("auth0|5f7c8ec7")).toEqual({});
    for (const name of ["a/b", "user:ada", "a,b"])
      expect(subjectProblems(name)).toEqual({ subject: [NAME_SAYS.identity] });
  });
});

describe("a tool set's checks", () => {
  it("holds a new set's name to the server-name rule and each override's name to the alias rule", () => {
    expect(toolsetProblems("docs", { docs__read: "read", docs__write: undefined })).toEqual({});
    expect(toolsetProblems("a__b", { docs__read: "read it" })).toEqual({
      name: [NAME_SAYS.separator],
      "overrides.docs__read.name": [NAME_SAYS.toolAlias],
    });
    expect(toolsetProblems("-docs", {})).toEqual({ name: [NAME_SAYS.server] });
    expect(toolsetProblems(undefined, {})).toEqual({});
  });
});

describe("a scope's and a thread's checks", () => {
  it("refuses a scope of nothing chosen, and a thread id the API would not take", () => {
    expect(scopeProblems(true, 0, "them reach")).toEqual({
      servers: ["Choose at least one server or tool set, or let them reach every server."],
    });
    expect(scopeProblems(true, 1, "them reach")).toEqual({});
    expect(scopeProblems(false, 0, "them reach")).toEqual({});
    expect(threadProblems(" feature-1 ")).toEqual({});
    expect(threadProblems("")).toEqual({ threadId: [expect.stringMatching(/^Enter a thread id/)] });
    expect(threadProblems("a/b")).toEqual({ threadId: [NAME_SAYS.thread] });
  });
});
