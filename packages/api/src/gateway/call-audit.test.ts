import { AppError, type AuditEvent, runAfterAnswer } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { auditPrincipal } from "../audit-principal";
import { audited, callNote, errorOutcome, resultBytes } from "./call-audit";

describe("a call's audit event", () => {
  it("names the server and tool of a qualified name, else keeps what the caller named as the tool", () => {
    expect(callNote({ plane: "rest" }, "files__read")).toEqual({
      plane: "rest",
      serverName: "files",
      tool: "read",
    });
    expect(callNote({ plane: "mcp" }, "not qualified")).toEqual({ plane: "mcp", tool: "not qualified" });
    expect(callNote({ plane: "mcp" }, "x".repeat(500)).tool).toHaveLength(128);
  });

  it("clips every name a caller may choose: tool, server, tool set, source", async () => {
    const events: AuditEvent[] = [];
    const deps = { audit: { record: (event: AuditEvent) => events.push(event) } };
    const long = "n".repeat(1024 * 1024);
    const note = { plane: "mcp_set" as const, source: long, toolset: long, serverName: long, tool: long };
    await audited(deps, note, undefined, { [long]: 1 }, async () => ({ content: [] }));
    runAfterAnswer(); // recorded once the answer is written
    const [recorded] = events;
    for (const name of [recorded?.tool, recorded?.serverName, recorded?.toolset, recorded?.source])
      expect(name).toHaveLength(128);
    expect(recorded?.argumentKeys?.[0]).toHaveLength(128);
  });

  it("names a key by id and name, a user by subject, the admin as admin", () => {
    expect(auditPrincipal({ kind: "key", keyId: "k1", keyName: "ci", serverIds: null })).toEqual({
      kind: "key",
      keyId: "k1",
      keyName: "ci",
    });
    expect(auditPrincipal({ kind: "user", sub: "ada", serverIds: null })).toEqual({
      kind: "user",
      sub: "ada",
    });
    expect(auditPrincipal({ kind: "admin" })).toEqual({ kind: "admin" });
    expect(auditPrincipal({ kind: "admin", via: "console", sub: "ada" })).toEqual({
      kind: "admin",
      sub: "ada",
    });
  });

  it("ends with the error's code: the gateway's, an MCP error's data.code, else the JSON-RPC code", () => {
    expect(errorOutcome(new AppError("tool.not_found", "no"))).toBe("tool.not_found");
    expect(
      errorOutcome(Object.assign(new Error("x"), { code: -32602, data: { code: "tool.forbidden" } })),
    ).toBe("tool.forbidden");
    expect(errorOutcome(Object.assign(new Error("x"), { code: -32602 }))).toBe("rpc.-32602");
    expect(errorOutcome(new Error("x"))).toBe("internal");
  });

  it("sizes a result by its parts' lengths, without serialising text again", () => {
    const size = resultBytes({ content: [{ type: "text", text: "a".repeat(1000) }], isError: false });
    expect(size).toBeGreaterThanOrEqual(1000);
    expect(size).toBeLessThan(1100);
    expect(resultBytes({ resultType: "input_required" })).toBeUndefined();
  });

  it("records one event per call — ok, tool error, or the code it threw — with key names and no value", async () => {
    const events: AuditEvent[] = [];
    const deps = { audit: { record: (event: AuditEvent) => events.push(event) } };
    const note = () => callNote({ plane: "rest", source: "10.0.0.1" }, "files__read");
    const args = { path: "SECRET-VALUE", depth: 2 };
    await audited(deps, note(), undefined, args, async () => ({ content: [], isError: false }));
    await audited(deps, note(), undefined, args, async () => ({ content: [], isError: true }));
    await expect(
      audited(deps, note(), undefined, args, async () => {
        throw new AppError("upstream.timeout", "late");
      }),
    ).rejects.toThrow("late");
    expect(events).toEqual([]); // not before the answer is written
    runAfterAnswer();
    expect(events.map((e) => [e.outcome, e.argumentKeys, e.source, e.tool])).toEqual([
      ["ok", ["path", "depth"], "10.0.0.1", "read"],
      ["tool_error", ["path", "depth"], "10.0.0.1", "read"],
      ["upstream.timeout", ["path", "depth"], "10.0.0.1", "read"],
    ]);
    expect(JSON.stringify(events)).not.toContain("SECRET-VALUE");
    expect(events[0]?.requestBytes).toBe(JSON.stringify(args).length);
  });
});
