/**
 * An upstream nobody has called is heard: while an MCP client listens, the gateway keeps a session open
 * to each connected server that announces list changes (a 2026 upstream's `subscriptions/listen`
 * stream, a 2025 upstream's GET stream). With no tool call at all, an upstream that adds a tool and
 * says so reaches the listeners of `/mcp` and `/mcp/{server}` within 5 s, and their `tools/list`
 * shows the tool (the test stack runs no health sweep: only the probe the change asked for lists it).
 *
 * The delays are measured and printed.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type ModernUpstream, startModernUpstream } from "../fixtures/modern-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { waitFor } from "../support/stack";
import { connectTestClient, type TestClient } from "./clients";
import { type CreatedKey, createKey } from "./helpers";

/** How soon a change must be seen. */
const PROMPT_MS = 5_000;

describe("list_changed from an upstream nobody called", () => {
  let stack: Stack;
  let legacyUpstream: Upstream;
  let modernUpstream: ModernUpstream;
  let key: CreatedKey;
  const clients: TestClient[] = [];

  async function listener(path: string): Promise<TestClient> {
    const client = await connectTestClient("v2-modern", `${stack.api.url}${path}`, { key: key.key });
    clients.push(client);
    await client.watchToolsListChanged();
    return client;
  }

  /**
   * Listens on `/mcp` and `/mcp/{name}` (no call), waits until the gateway listens to the upstream
   * (`listening()` ≥ 1), adds `tool` upstream; returns how soon both were told and listed it, in ms.
   */
  async function heardCold(
    name: string,
    tool: string,
    listening: () => number,
    addTool: (tool: string) => void,
  ): Promise<{ told: number[]; listed: number[] }> {
    const aggregate = await listener("/mcp");
    const own = await listener(`/mcp/${name}`);
    await waitFor(
      async () => listening(),
      (open) => open >= 1,
      { timeoutMs: PROMPT_MS, intervalMs: 50 },
    ).catch(() => {
      throw new Error(
        `the gateway opened no session to '${name}' within ${PROMPT_MS} ms of a client listening`,
      );
    });
    const heard = [aggregate.toolsListChanged, own.toolsListChanged];
    const addedAt = Date.now();
    addTool(tool);
    const shown = [`${name}__${tool}`, tool];
    const [told, listed] = await Promise.all([
      Promise.all(
        [aggregate, own].map(async (client, index) => {
          await client.waitForToolsListChanged((heard[index] as number) + 1, PROMPT_MS);
          return Date.now() - addedAt;
        }),
      ),
      Promise.all(
        [aggregate, own].map(async (client, index) => {
          await waitFor(
            async () => (await client.listTools()).map((listed) => listed.name),
            (names) => names.includes(shown[index] as string),
            { timeoutMs: PROMPT_MS, intervalMs: 100 },
          );
          return Date.now() - addedAt;
        }),
      ),
    ]);
    return { told, listed };
  }

  beforeAll(async () => {
    [stack, legacyUpstream, modernUpstream] = await Promise.all([
      startGatewayStack(),
      startUpstream({ name: "legacy-cold" }),
      startModernUpstream({ name: "modern-cold" }),
    ]);
    key = await createKey(stack, "cold list_changed e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await Promise.allSettled([legacyUpstream?.close(), modernUpstream?.close()]);
  });

  /** Each upstream era: where the gateway listens to it, counted (open listen streams, GET streams). */
  const eras = [
    {
      era: "2026-07-28",
      upstream: () => ({
        url: modernUpstream.url,
        listening: () => modernUpstream.openListens,
        addTool: (tool: string) => modernUpstream.addTool(tool),
      }),
    },
    {
      era: "2025",
      upstream: () => ({
        url: legacyUpstream.url,
        listening: () => legacyUpstream.openGetStreams,
        addTool: (tool: string) => legacyUpstream.addTool(tool),
      }),
    },
  ];

  it.for(eras)(
    "a $era upstream adds a tool: /mcp and /mcp/{server} listeners told and listing it within 5 s",
    {
      timeout: 60_000,
    },
    async ({ era, upstream }, { expect }) => {
      const { url, listening, addTool } = upstream();
      const name = uniqueName("cold");
      // Pinning `auto`: the new tool is listed at once (under `approve` it waits for an admin).
      await createConnected(stack, { name, url, pinning: "auto" });
      const { told, listed } = await heardCold(name, "cold_tool", listening, addTool);
      console.log(
        `cold ${era} upstream's new tool: told /mcp ${told[0]} ms, /mcp/{server} ${told[1]} ms; listed ${listed[0]} ms, ${listed[1]} ms`,
      );
      for (const delay of [...told, ...listed]) expect(delay).toBeLessThan(PROMPT_MS);
    },
  );
});
