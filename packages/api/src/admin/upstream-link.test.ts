import { describe, expect, it } from "vitest";
import { type LinkPerson, opensLink } from "./upstream-link";

const person = (sub: string | undefined, groups: string[] = [], admin = false): LinkPerson => ({
  ...(sub === undefined ? {} : { sub }),
  groups,
  admin,
  label: sub ?? "admin",
});

describe("who may open a per_user authorization link", () => {
  it("a user's link: that user only", () => {
    expect(opensLink("user:alice", person("alice"))).toBe(true);
    expect(opensLink("user:alice", person("bob", ["alice"]))).toBe(false);
    expect(opensLink("user:alice", person("alice-2"))).toBe(false);
    expect(opensLink("user:alice", person(undefined, [], true))).toBe(false);
  });

  it("a group owner's link: any member, and no one else", () => {
    expect(opensLink("group:devs", person("carol", ["devs", "ops"]))).toBe(true);
    expect(opensLink("group:devs", person("dan", ["ops"]))).toBe(false);
    expect(opensLink("group:devs", person("devs"))).toBe(false);
  });

  it("the admin's link: the admin (console session, or a console admin at the provider)", () => {
    expect(opensLink("admin", person(undefined, [], true))).toBe(true);
    expect(opensLink("admin", person("ada", ["admins"], true))).toBe(true);
    expect(opensLink("admin", person("admin"))).toBe(false);
  });

  it("anything else opens for no one", () => {
    expect(opensLink("key:1234", person("1234"))).toBe(false);
    expect(opensLink("", person(""))).toBe(false);
  });
});
