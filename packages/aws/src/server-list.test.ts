import { describe, expect, it } from "vitest";
import {
  decodeListCursor,
  encodeListCursor,
  pairListItems,
  positionOf,
  startKeyOf,
  statusListSort,
} from "./server-list";

const A = "00000000-0000-4000-8000-00000000000a";
const B = "00000000-0000-4000-8000-00000000000b";
const C = "00000000-0000-4000-8000-00000000000c";
const config = (id: string, name: string) => ({ pk: `SERVER#${id}`, sk: "CONFIG", id, kindSort: name });
const status = (id: string, name: string) => ({
  pk: `SERVER#${id}`,
  sk: "STATUS",
  serverId: id,
  kindSort: statusListSort(name),
});

describe("list cursors", () => {
  it("round-trip a position, and resume right after the item it names", () => {
    const position = positionOf(status(A, "alpha"));

    expect(decodeListCursor(encodeListCursor(position))).toEqual({ kindSort: "alpha#STATUS", serverId: A });
    expect(startKeyOf(position)).toEqual({
      kind: "SERVER",
      kindSort: "alpha#STATUS",
      pk: `SERVER#${A}`,
      sk: "STATUS",
    });
    expect(startKeyOf(positionOf(config(B, "beta")))).toMatchObject({ kindSort: "beta", sk: "CONFIG" });
  });

  it("refuses anything else as request.invalid, never as a query that fails", () => {
    const bad = [
      "",
      "!!",
      "bm90IGpzb24",
      Buffer.from("{}").toString("base64url"),
      Buffer.from(JSON.stringify(["alpha", "not-a-uuid"])).toString("base64url"),
      Buffer.from(JSON.stringify(["al pha", A])).toString("base64url"),
      Buffer.from(JSON.stringify(["a".repeat(65), A])).toString("base64url"),
      Buffer.from(JSON.stringify(["alpha", A, 1])).toString("base64url"),
    ];
    for (const cursor of bad)
      expect(() => decodeListCursor(cursor)).toThrow(expect.objectContaining({ code: "request.invalid" }));
  });

  it("sorts a status right after its server and before every other name", () => {
    const sorted = ["a-b", "a", statusListSort("a"), "a0", "aB", "a_", statusListSort("a-b")].sort();

    expect(sorted.indexOf(statusListSort("a"))).toBe(sorted.indexOf("a") + 1);
    expect(sorted.indexOf(statusListSort("a-b"))).toBe(sorted.indexOf("a-b") + 1);
  });
});

describe("pairListItems", () => {
  it("pairs each config with the status beside it, and stops at a config past the limit", () => {
    const items = [config(A, "a"), status(A, "a"), config(B, "b"), status(B, "b"), config(C, "c")];

    const page = pairListItems(items, 2);

    expect(page.pairs.map((pair) => [pair.config.id, pair.status?.serverId])).toEqual([
      [A, A],
      [B, B],
    ]);
    expect(page).toMatchObject({ more: true, last: status(B, "b") });
    expect(pairListItems(items, 3)).toMatchObject({ more: false, last: config(C, "c") });
  });

  it("leaves a config without its status when it is kept apart, and skips a status whose config came before", () => {
    const items = [status(A, "a"), config(B, "b"), config(C, "c"), status(C, "c")];

    const { pairs } = pairListItems(items, 10);

    expect(pairs.map((pair) => [pair.config.id, pair.status?.serverId])).toEqual([
      [B, undefined],
      [C, C],
    ]);
  });
});
