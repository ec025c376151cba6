import type { Job } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import type { DirectoryEntry } from "./directory";
import { ProbeRequests } from "./probe-requests";

/** A server's directory entry as far as a request reads it: its id, name and status generation. */
function entryOf(id: string, generation?: number): DirectoryEntry {
  return {
    server: { id, name: `server-${id}` },
    status: generation === undefined ? undefined : { generation },
  } as unknown as DirectoryEntry;
}

function requests(send: (job: Job) => Promise<void> = async () => {}) {
  const sent: Job[] = [];
  const warnings: Array<Record<string, unknown>> = [];
  const logger = { warn: (_msg: string, fields: Record<string, unknown>) => warnings.push(fields) };
  const probes = new ProbeRequests(
    {
      store: {
        jobs: {
          send: async (job: Job) => {
            await send(job);
            sent.push(job);
          },
        },
      },
      logger,
    } as never,
    { probe: 50, check: 50 },
  );
  return { probes, sent, warnings };
}

describe("ProbeRequests", () => {
  it("sends one job per server and kind within the spacing, under the entry's generation", async () => {
    const { probes, sent } = requests();
    expect(await probes.request(entryOf("s1", 3), "check", "test")).toBe(true);
    expect(await probes.request(entryOf("s1", 3), "check", "test")).toBe(false);
    expect(await probes.request(entryOf("s1", 3), "probe", "test")).toBe(true);
    expect(await probes.request(entryOf("s2", 1), "check", "test")).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await probes.request(entryOf("s1", 4), "check", "test")).toBe(true);
    expect(sent).toEqual([
      { type: "check", serverId: "s1", generation: 3 },
      { type: "probe", serverId: "s1", generation: 3 },
      { type: "check", serverId: "s2", generation: 1 },
      { type: "check", serverId: "s1", generation: 4 },
    ]);
  });

  it("asks nothing for a server with no status yet, and logs a send that failed", async () => {
    const { probes, sent, warnings } = requests(async () => {
      throw new Error("queue unavailable");
    });
    expect(await probes.request(entryOf("s1"), "check", "test")).toBe(false);
    expect(await probes.request(entryOf("s2", 1), "check", "its session broke")).toBe(false);
    expect(sent).toEqual([]);
    expect(warnings).toEqual([expect.objectContaining({ server: "server-s2", why: "its session broke" })]);
  });
});
