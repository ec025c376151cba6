import { describe, expect, it } from "vitest";
import { afterAnswer, runAfterAnswer } from "./after-answer";

describe("afterAnswer", () => {
  it("runs the work after the current turn, in order, not before", async () => {
    const done: number[] = [];
    afterAnswer(() => done.push(1));
    afterAnswer(() => done.push(2));
    await Promise.resolve(); // microtasks (an answer's own chain) come first
    expect(done).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual([1, 2]);
  });

  it("runs what is held at once on runAfterAnswer, and each piece once", async () => {
    const done: string[] = [];
    afterAnswer(() => done.push("a"));
    runAfterAnswer();
    expect(done).toEqual(["a"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual(["a"]);
  });

  it("goes on past work that throws", () => {
    const done: string[] = [];
    afterAnswer(() => {
      throw new Error("broken bookkeeping");
    });
    afterAnswer(() => done.push("after"));
    expect(() => runAfterAnswer()).not.toThrow();
    expect(done).toEqual(["after"]);
  });

  it("holds work queued while it runs for the next run", async () => {
    const done: string[] = [];
    afterAnswer(() => {
      done.push("first");
      afterAnswer(() => done.push("queued meanwhile"));
    });
    runAfterAnswer();
    expect(done).toEqual(["first"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual(["first", "queued meanwhile"]);
  });
});
