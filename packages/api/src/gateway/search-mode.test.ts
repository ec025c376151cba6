import { AppError } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { callToolArguments, chooseToolMode, parseToolMode, searchTools, ToolIndexCache } from "./search-mode";

describe("parseToolMode", () => {
  it("takes search, full or nothing; anything else is request.invalid", () => {
    expect(parseToolMode(undefined)).toBeUndefined();
    expect(parseToolMode("search")).toBe("search");
    expect(parseToolMode("full")).toBe("full");
    expect(() => parseToolMode("compact")).toThrow(AppError);
  });
});

describe("chooseToolMode", () => {
  const base = { automatic: true, tools: 10, threshold: 64 };
  it("a session's fixed mode, then the client's ask, then the threshold where the endpoint switches itself", () => {
    expect(chooseToolMode(base)).toBe("full");
    expect(chooseToolMode({ ...base, tools: 64 })).toBe("full");
    expect(chooseToolMode({ ...base, tools: 65 })).toBe("search");
    expect(chooseToolMode({ ...base, tools: 65, automatic: false })).toBe("full");
    expect(chooseToolMode({ ...base, tools: 65, requested: "full" })).toBe("full");
    expect(chooseToolMode({ ...base, requested: "search" })).toBe("search");
    expect(chooseToolMode({ ...base, requested: "search", fixed: "full" })).toBe("full");
  });
});

describe("callToolArguments", () => {
  it("needs a name; arguments default to {} and must be an object", () => {
    expect(callToolArguments({ name: "a__b" })).toEqual({ name: "a__b", arguments: {} });
    expect(callToolArguments({ name: "a__b", arguments: { x: 1 } })).toEqual({
      name: "a__b",
      arguments: { x: 1 },
    });
    expect(() => callToolArguments({})).toThrow(AppError);
    expect(() => callToolArguments({ name: "a__b", arguments: [1] })).toThrow(AppError);
  });
});

describe("searchTools", () => {
  const tools = [
    { name: "ev__echo", description: "Echoes back the input. Handy.", inputSchema: { type: "object" } },
    { name: "ev__get-sum", description: "Returns the sum of two numbers", inputSchema: { type: "object" } },
  ];

  it("answers names, first sentences and schemas as text and structured content", async () => {
    const result = await searchTools(new ToolIndexCache(), tools, { query: "echo the input", limit: 1 });
    expect(result.structuredContent).toEqual({
      tools: [{ name: "ev__echo", description: "Echoes back the input.", inputSchema: { type: "object" } }],
    });
    expect(JSON.parse(result.content[0]?.text ?? "")).toEqual(result.structuredContent);
  });

  it("refuses a missing or oversized query and a limit outside 1..20", async () => {
    const cache = new ToolIndexCache();
    for (const args of [
      {},
      { query: " " },
      { query: "x".repeat(513) },
      { query: "sum", limit: 21 },
      { query: "sum", limit: 0 },
    ])
      await expect(searchTools(cache, tools, args)).rejects.toThrow(AppError);
  });

  it("builds one index per catalogue, not one per search; the same tools read again reuse it", async () => {
    const cache = new ToolIndexCache();
    await searchTools(cache, tools, { query: "sum" });
    await searchTools(cache, tools, { query: "echo" });
    expect(cache.built).toBe(1);
    // Another scope (fewer tools): an index of its own.
    await searchTools(cache, tools.slice(1), { query: "sum" });
    expect(cache.built).toBe(2);
    // The same tools read again (a new snapshot's objects): no new index; a changed description: a new one.
    await searchTools(cache, structuredClone(tools), { query: "sum" });
    expect(cache.built).toBe(2);
    const changed = [{ ...tools[0]!, description: "Says it again." }, tools[1]!];
    const again = await searchTools(cache, changed, { query: "says again" });
    expect(cache.built).toBe(3);
    expect(again.structuredContent.tools[0]).toMatchObject({
      name: "ev__echo",
      description: "Says it again.",
    });
  });

  it("never answers from another catalogue's index: a name given to another tool is indexed again", async () => {
    // A tool set's edit gives the listed name `do_it` another tool: same name, other text and schema.
    const cache = new ToolIndexCache();
    const before = [
      {
        name: "do_it",
        description: "Harmless: creates a record.",
        inputSchema: { type: "object", properties: { email: { type: "string" } } },
      },
    ];
    const after = [
      {
        name: "do_it",
        description: "Deletes a record permanently.",
        inputSchema: { type: "object", properties: { contact_id: { type: "string" } } },
      },
    ];
    await searchTools(cache, before, { query: "record" });
    const found = await searchTools(cache, after, { query: "record" });
    expect(found.structuredContent.tools).toEqual([
      { name: "do_it", description: "Deletes a record permanently.", inputSchema: after[0]!.inputSchema },
    ]);
  });
});
