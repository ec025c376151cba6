import { createMemoryJobQueue } from "@mcpgw/aws/memory";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { ProbeRelay } from "./probe-relay";

const logger = createLogger({ level: "error", sink: () => undefined });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ProbeRelay", () => {
  it("gathers a burst of one server's list changes into one probe job, with the newest generation", async () => {
    const jobs = createMemoryJobQueue();
    const relay = new ProbeRelay({ jobs, logger, debounceMs: 30 });
    relay.changed("s1", 3);
    relay.changed("s1", 4);
    relay.changed("s2", 1);
    relay.changed("s1", 4);
    expect(jobs.pending()).toEqual([]);
    await pause(80);
    expect(jobs.pending().map((message) => message.job)).toEqual([
      { type: "probe", serverId: "s1", generation: 4 },
      { type: "probe", serverId: "s2", generation: 1 },
    ]);
    // A change after the job went out is news again.
    relay.changed("s1", 4);
    await pause(80);
    expect(jobs.pending()).toHaveLength(3);
  });

  it("sends nothing once closed", async () => {
    const jobs = createMemoryJobQueue();
    const relay = new ProbeRelay({ jobs, logger, debounceMs: 10 });
    relay.changed("s1", 1);
    relay.close();
    relay.changed("s1", 2);
    await pause(40);
    expect(jobs.pending()).toEqual([]);
  });
});
