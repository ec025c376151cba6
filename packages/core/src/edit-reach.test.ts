import { describe, expect, it } from "vitest";
import { editReachesUpstream } from "./edit-reach";
import { applyServerPatch, parseServerSpec } from "./server-edit";

const http = parseServerSpec({
  name: "remote",
  url: "https://mcp.example.com/mcp",
  headers: { "X-Team": "blue" },
});
const stdio = parseServerSpec({
  name: "local",
  command: "npx",
  args: ["-y", "@example/mcp"],
  env: { API_TOKEN: "t0k3n" },
});

describe("editReachesUpstream", () => {
  it.each([
    ["a rename", { name: "renamed" }],
    ["a call timeout", { timeoutSeconds: 90 }],
    ["a rename and a timeout", { name: "other", timeoutSeconds: 5 }],
    ["nothing", {}],
  ])("an http edit of %s does not reach the upstream", (_what, patch) => {
    expect(editReachesUpstream(http, applyServerPatch(http, patch))).toBe(false);
  });

  it.each([
    ["a timeout", { timeoutSeconds: 7 }],
    ["the scope", { scope: "thread" as const }],
    ["the isolation", { isolation: "per_caller" as const }],
  ])("a stdio edit of %s does not reach the upstream", (_what, patch) => {
    expect(editReachesUpstream(stdio, applyServerPatch(stdio, patch))).toBe(false);
  });

  it.each([
    ["the url", { url: "https://mcp.example.com/other" }],
    ["the headers", { headers: { "X-Team": "red" } }],
    ["a header removed", { headers: {} }],
    ["auth", { auth: { type: "oauth" as const, mode: "shared" as const } }],
    ["enabled", { enabled: false }],
  ])("an http edit of %s reaches the upstream", (_what, patch) => {
    expect(editReachesUpstream(http, applyServerPatch(http, patch))).toBe(true);
  });

  it.each([
    ["the command", { command: "node" }],
    ["the args", { args: ["-y", "@example/mcp@2"] }],
    ["the env", { env: { API_TOKEN: "n3w" } }],
    ["a secret reference", { secretRef: "github" }],
    ["limits", { limits: { memoryMiB: 256 } }],
  ])("a stdio edit of %s reaches the upstream", (_what, patch) => {
    expect(editReachesUpstream(stdio, applyServerPatch(stdio, patch))).toBe(true);
  });

  it("counts a field it does not know as reaching (never a missed reconnect)", () => {
    expect(editReachesUpstream(http, { ...http, later: true } as unknown as typeof http)).toBe(true);
  });
});
