import { AppError, type AuditEvent, runAfterAnswer } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { audited, callNote } from "./call-audit";
import { restResult } from "./routes";

describe("a REST tool call's answer", () => {
  it("a tool asking for input is the tool.input_required error, and audited with that code", async () => {
    const events: AuditEvent[] = [];
    const deps = { audit: { record: (event: AuditEvent) => events.push(event) } };
    const asking = { resultType: "input_required" as const, inputRequests: { name: {} } };
    const call = audited(deps, callNote({ plane: "rest" }, "files__ask"), undefined, {}, async () =>
      restResult(asking),
    );
    const error = await call.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AppError);
    expect([(error as AppError).code, (error as AppError).extra]).toEqual([
      "tool.input_required",
      { inputRequests: ["name"] },
    ]);
    runAfterAnswer();
    expect(events.map((event) => event.outcome)).toEqual(["tool.input_required"]);

    const result = { content: [], isError: false };
    expect(restResult(result)).toBe(result);
  });
});
