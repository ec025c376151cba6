import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { whenAborted } from "./when-aborted";

describe("whenAborted", () => {
  it("keeps one listener on a signal however many wait on it, and runs those still waiting on abort", () => {
    // Prepare
    const controller = new AbortController();
    const ran: number[] = [];
    const undo = Array.from({ length: 50 }, (_, i) => whenAborted(controller.signal, () => ran.push(i)));

    // Act
    for (const release of undo.slice(0, 49)) release();
    controller.abort();

    // Assess
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(ran).toEqual([49]);
  });

  it("adds no listener past the first while calls come and go", () => {
    const controller = new AbortController();
    for (let call = 0; call < 10_000; call++) whenAborted(controller.signal, () => {})();

    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
  });
});
