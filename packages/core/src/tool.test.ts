import { describe, expect, it } from "vitest";
import { asListed, requiresTask, type ToolInfo } from "./tool";

const tool = (execution?: Record<string, unknown>): ToolInfo => ({
  name: "t",
  inputSchema: { type: "object" },
  ...(execution ? { execution } : {}),
});

describe("asListed", () => {
  it("lists a tool that requires a task without its taskSupport, keeping the rest of execution", () => {
    expect(requiresTask(tool({ taskSupport: "required" }))).toBe(true);
    expect(asListed(tool({ taskSupport: "required" }))).toEqual(tool());
    expect(asListed(tool({ taskSupport: "required", other: 1 }))).toEqual(tool({ other: 1 }));
  });

  it("leaves every other tool whole", () => {
    for (const execution of [undefined, { taskSupport: "optional" }, { taskSupport: "forbidden" }]) {
      expect(requiresTask(tool(execution))).toBe(false);
      expect(asListed(tool(execution))).toEqual(tool(execution));
    }
  });
});
