import { describe, expect, it } from "vitest";
import { targetOf } from "./target";

const runner = { url: "http://127.0.0.1:9000/", token: "runner-token" };
const stdio = { transport: "stdio" as const, id: "srv-1" };

describe("targetOf", () => {
  it("names a stdio server's caller to the runner, under its thread when there is one", () => {
    expect(targetOf(stdio, runner, undefined, "user:ann@example.com")?.url).toBe(
      "http://127.0.0.1:9000/servers/srv-1/callers/user%3Aann%40example.com/mcp",
    );
    expect(targetOf(stdio, runner, "t/1", "key:k1")?.url).toBe(
      "http://127.0.0.1:9000/servers/srv-1/threads/t%2F1/callers/key%3Ak1/mcp",
    );
  });

  it("names nobody for a probe, and carries the runner token either way", () => {
    const probe = targetOf(stdio, runner);
    expect(probe?.url).toBe("http://127.0.0.1:9000/servers/srv-1/mcp");
    expect(probe?.headers).toEqual({ authorization: "Bearer runner-token" });
    expect(targetOf(stdio, runner, undefined, "admin")?.headers).toEqual(probe?.headers);
  });

  it("tells a runner of the fleet it was asked again after another refused, beside the generation", () => {
    expect(targetOf({ ...stdio, generation: 3 }, { ...runner, followed: true })?.url).toBe(
      "http://127.0.0.1:9000/servers/srv-1/mcp?generation=3&placement=followed",
    );
    expect(targetOf({ ...stdio, generation: 3 }, runner)?.url).toBe(
      "http://127.0.0.1:9000/servers/srv-1/mcp?generation=3",
    );
  });
});
