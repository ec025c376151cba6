import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { catalogBody, toCatalog } from "./statuses";

const tools = [{ name: "echo", inputSchema: { type: "object" } }];

/** A one-part catalogue head item as stored: `body` gzipped under `hash`. */
function head(body: string, hash: string): Record<string, unknown> {
  return { serverId: "s", updatedAt: "2026-01-01T00:00:00.000Z", hash, parts: 1, tools: gzipSync(body) };
}

describe("toCatalog", () => {
  it("treats a body that is not the one its hash names as damaged, with no tools (the hash is not trusted alone)", () => {
    const { json, hash } = catalogBody({ tools });
    expect(toCatalog([head(json, hash)])).toMatchObject({ serverId: "s", tools });
    expect(toCatalog([head(JSON.stringify({ tools: [] }), hash)])).toMatchObject({
      tools: [],
      damaged: true,
    });
  });

  it("treats a body that does not parse as tools as damaged, with no tools", () => {
    // Its own hash, but a tool without an input schema.
    const { json, hash } = catalogBody({ tools: [{ name: "echo" }] } as never);
    expect(toCatalog([head(json, hash)])).toMatchObject({ tools: [], damaged: true });
    expect(toCatalog([{ ...head(json, "x"), tools: Buffer.from("not gzip") }])).toMatchObject({
      tools: [],
      damaged: true,
    });
    expect(toCatalog([])).toBeUndefined();
  });
});
