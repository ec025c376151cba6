import { describe, expect, it } from "vitest";
import type { ResolvedSet } from "../toolsets";
import { decideTool, grantsOf, type ToolGrant } from "./tool-access";

const set = (members: string[], servers: string[]): ResolvedSet => ({
  members: new Map(members.map((name) => [name, {}])),
  servers: new Set(servers),
});
const sets = new Map([["picked", set(["fs__read"], ["id-fs"])]]);
const tool = (name: string, serverId: string, annotations?: Record<string, unknown>) => ({
  name,
  serverId,
  server: name.split("__")[0] ?? "",
  annotations,
});
const decide = (grants: ToolGrant[], decided: ReturnType<typeof tool>) =>
  decideTool(grants, sets, decided, "key's");

describe("the tool decision", () => {
  it("a grant with neither servers nor sets reaches every tool", () => {
    expect(decide([{ serverIds: null, toolsets: [] }], tool("gh__search", "id-gh"))).toEqual({ ok: true });
  });

  it("servers and sets together reach the union", () => {
    const grant = { serverIds: ["id-gh"], toolsets: ["picked"] };
    expect(decide([grant], tool("gh__search", "id-gh")).ok).toBe(true);
    expect(decide([grant], tool("fs__read", "id-fs")).ok).toBe(true);
  });

  it("a tool outside the sets on a server they reach is forbidden; elsewhere the server is not found", () => {
    const grant = { serverIds: null, toolsets: ["picked"] };
    expect(decide([grant], tool("fs__write", "id-fs"))).toMatchObject({
      code: "tool.forbidden",
      rule: "toolsets",
    });
    expect(decide([grant], tool("gh__search", "id-gh"))).toMatchObject({ code: "server.not_found" });
  });

  it("a set that is gone grants nothing", () => {
    expect(decide([{ serverIds: null, toolsets: ["gone"] }], tool("fs__read", "id-fs")).ok).toBe(false);
  });

  it("the policy names the rule that refuses", () => {
    const grant = { serverIds: null, toolsets: [], toolPolicy: { refuse: { destructiveHint: true } } };
    const refused = decide([grant], tool("fs__write", "id-fs"));
    expect(refused).toMatchObject({ code: "tool.forbidden", rule: "destructiveHint" });
    expect(!refused.ok && refused.detail).toContain("refused by the key's policy: destructiveHint");
    expect(decide([grant], tool("fs__read", "id-fs", { readOnlyHint: true })).ok).toBe(true);
  });

  it("a user's mappings: any one that allows the tool is enough", () => {
    const strict = { serverIds: null, toolsets: [], toolPolicy: { allow: ["gh__*"] } };
    const loose = { serverIds: ["id-fs"], toolsets: [] };
    expect(decide([strict, loose], tool("fs__write", "id-fs")).ok).toBe(true);
    expect(decide([strict], tool("fs__write", "id-fs"))).toMatchObject({ rule: "allow" });
  });

  it("grants of principals: none for the admin, one per key, a user's from their token or servers", () => {
    expect(grantsOf({ kind: "admin" })).toBeNull();
    expect(grantsOf({ kind: "key", keyId: "k", serverIds: ["a"], toolsets: ["s"] })).toEqual([
      { serverIds: ["a"], toolsets: ["s"], toolPolicy: undefined },
    ]);
    expect(grantsOf({ kind: "user", sub: "ada", serverIds: ["a"] })).toEqual([
      { serverIds: ["a"], toolsets: [] },
    ]);
  });
});
