import { describe, expect, it } from "vitest";
import { type PlacementCandidate, placementKey, placeOn } from "./placement";

const keys = Array.from({ length: 3_000 }, (_, i) => `server-${i}`);
const runners = (ids: string[], weight = 10): PlacementCandidate[] => ids.map((id) => ({ id, weight }));

function spread(candidates: PlacementCandidate[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) {
    const id = placeOn(key, candidates) ?? "none";
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe("placeOn", () => {
  it("gives the same answer for the same fleet, whatever its order", () => {
    const fleet = runners(["a", "b", "c"]);
    const reversed = [...fleet].reverse();
    for (const key of keys.slice(0, 200)) expect(placeOn(key, reversed)).toBe(placeOn(key, fleet));
  });

  it("spreads instances evenly over runners of equal weight", () => {
    const counts = spread(runners(["a", "b", "c"]));
    for (const id of ["a", "b", "c"]) expect(counts.get(id)).toBeGreaterThan(keys.length * 0.28);
  });

  it("places by weight: a runner with twice the room takes about twice the share", () => {
    const counts = spread([
      { id: "big", weight: 20 },
      { id: "small", weight: 10 },
    ]);
    const share = (counts.get("big") ?? 0) / keys.length;
    expect(share).toBeGreaterThan(0.62);
    expect(share).toBeLessThan(0.72);
  });

  it("moves only the instances a new runner wins: about a quarter when a fourth joins three", () => {
    const before = runners(["a", "b", "c"]);
    const after = runners(["a", "b", "c", "d"]);
    let moved = 0;
    for (const key of keys) {
      const was = placeOn(key, before);
      const now = placeOn(key, after);
      if (was !== now) {
        moved++;
        expect(now).toBe("d"); // nothing moves between the runners that stayed
      }
    }
    expect(moved / keys.length).toBeGreaterThan(0.2);
    expect(moved / keys.length).toBeLessThan(0.3);
  });

  it("moves only the instances of a runner that leaves", () => {
    const before = runners(["a", "b", "c"]);
    const after = runners(["a", "c"]);
    for (const key of keys) {
      const was = placeOn(key, before);
      if (was !== "b") expect(placeOn(key, after)).toBe(was);
    }
  });

  it("never chooses a runner with no room; none when no runner has any", () => {
    const fleet = [
      { id: "full", weight: 0 },
      { id: "open", weight: 1 },
    ];
    for (const key of keys.slice(0, 100)) expect(placeOn(key, fleet)).toBe("open");
    expect(placeOn("k", [{ id: "full", weight: 0 }])).toBeUndefined();
    expect(placeOn("k", [])).toBeUndefined();
  });
});

describe("placementKey", () => {
  it("is the server, or the server and its thread", () => {
    expect(placementKey("s1")).toBe("s1");
    expect(placementKey("s1", "t1")).toBe("s1#t1");
  });
});
