/**
 * Changes reach MCP clients and the catalogue by themselves, promptly:
 *
 * - an admin adds a server (POST /v1/servers): a client subscribed to `/mcp` hears
 *   `notifications/tools/list_changed` within 5 s — on a 2026-07-28 `subscriptions/listen` stream, and
 *   on a 2025 session's GET stream (the gateway's directory watcher);
 * - an upstream adds a tool and says so (`tools/list_changed`, on the 2026 listen stream or the 2025 GET
 *   stream of the gateway's warm session): within 5 s the new tool is callable through the gateway,
 *   over REST and on `/mcp/{server}`, and the endpoint's listeners are told — with no health sweep
 *   (the test stack runs none: tests/support/stack.ts starts only the job poller) and no admin action.
 *
 * The delays are measured and printed.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type ModernUpstream, startModernUpstream } from "../fixtures/modern-upstream";
import {
  createConnected,
  createServer,
  type Stack,
  sleep,
  startGatewayStack,
  uniqueName,
} from "../gateway/helpers";
import { waitFor } from "../support/stack";
import { type ClientFlavour, connectTestClient, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";

/** How soon a change must be seen. */
const PROMPT_MS = 5_000;

/** Runs `attempt` every 100 ms until it resolves (at most until `since` + `timeoutMs`); the time from `since`. */
async function delayUntil(
  since: number,
  attempt: () => Promise<unknown>,
  timeoutMs = PROMPT_MS,
): Promise<number> {
  await waitFor(
    () =>
      attempt().then(
        () => true,
        () => false,
      ),
    (done) => done,
    { timeoutMs: timeoutMs - (Date.now() - since), intervalMs: 100 },
  );
  return Date.now() - since;
}

describe("change notifications and catalogue refresh without a sweep", () => {
  let stack: Stack;
  let legacyUpstream: Upstream;
  let modernUpstream: ModernUpstream;
  let key: CreatedKey;
  const clients: TestClient[] = [];

  /**
   * How soon after `since` the server's new `tool` answers over REST and through each of `fronts`
   * (MCP clients of `/mcp/{server}`), in ms each: REST first, then the fronts in order.
   */
  function callableAfter(
    since: number,
    server: string,
    tool: string,
    fronts: TestClient[],
  ): Promise<number[]> {
    return Promise.all([
      delayUntil(since, async () => {
        const call = await stack.callTool(`${server}__${tool}`);
        if (call.status !== 200) throw new Error(`${call.status}`);
        const { text, isError } = call.body as { text?: unknown; isError?: unknown };
        if (text !== tool || isError !== false)
          throw new Error(`another answer: ${JSON.stringify(call.body)}`);
      }),
      ...fronts.map((front) =>
        delayUntil(since, async () => {
          if (textOf((await front.callTool(tool)).result) !== tool) throw new Error("another answer");
        }),
      ),
    ]);
  }

  async function connect(flavour: ClientFlavour, path: string): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [stack, legacyUpstream, modernUpstream] = await Promise.all([
      startGatewayStack(),
      startUpstream({ name: "legacy-changes" }),
      startModernUpstream({ name: "modern-changes" }),
    ]);
    key = await createKey(stack, "list_changed e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await Promise.allSettled([legacyUpstream?.close(), modernUpstream?.close()]);
  });

  it("an admin adds a server: /mcp subscribers in both eras hear tools/list_changed within 5 s", {
    timeout: 60_000,
  }, async ({ expect }) => {
    const modern = await connect("v2-modern", "/mcp");
    const legacy = await connect("v1", "/mcp");
    expect([modern.era, legacy.era]).toEqual(["modern", "legacy"]);
    await modern.watchToolsListChanged();
    await legacy.watchToolsListChanged();

    // Both streams are live (the 2025 GET stream opens on its own after initialize) and the gateway
    // has a view to compare with: a first server's arrival is heard by both.
    await createConnected(stack, { name: uniqueName("first"), url: legacyUpstream.url });
    await Promise.all([modern.waitForToolsListChanged(1, 15_000), legacy.waitForToolsListChanged(1, 15_000)]);
    await sleep(2_500); // the first server's changes are told; nothing else is changing
    const before = [modern.toolsListChanged, legacy.toolsListChanged] as const;

    const addedAt = Date.now();
    await createServer(stack, { name: uniqueName("added"), url: legacyUpstream.url });
    const delays = await Promise.all(
      [modern, legacy].map(async (client, index) => {
        await client.waitForToolsListChanged((before[index] as number) + 1, PROMPT_MS);
        return Date.now() - addedAt;
      }),
    );
    console.log(
      `list_changed after POST /v1/servers: 2026 listen stream ${delays[0]} ms, 2025 GET stream ${delays[1]} ms`,
    );
    for (const delay of delays) expect(delay).toBeLessThan(PROMPT_MS);
  });

  it("a 2026-07-28 upstream adds a tool: callable over REST and /mcp/{server} within 5 s, listeners told", {
    timeout: 60_000,
  }, async ({ expect }) => {
    const name = uniqueName("modern");
    // Pinning `auto`: the new tool is served at once (under `approve` it would wait: tests/mcp/pinning.test.ts).
    await createConnected(stack, { name, url: modernUpstream.url, pinning: "auto" });
    const listener = await connect("v2-modern", `/mcp/${name}`);
    await listener.watchToolsListChanged();
    const fronts = [await connect("v2-modern", `/mcp/${name}`), await connect("v1", `/mcp/${name}`)];
    // A first call warms the gateway's session with the upstream, which then listens for its changes.
    expect((await stack.callTool(`${name}__echo`, { text: "warm" })).status).toBe(200);
    await waitFor(
      async () => modernUpstream.openListens,
      (open) => open >= 1,
      { timeoutMs: 5_000 },
    );
    const heard = listener.toolsListChanged;

    const tool = "late_modern";
    const addedAt = Date.now();
    modernUpstream.addTool(tool);
    const [[rest, modernFront, legacyFront], told] = await Promise.all([
      callableAfter(addedAt, name, tool, fronts),
      listener.waitForToolsListChanged(heard + 1, PROMPT_MS).then(() => Date.now() - addedAt),
    ]);
    console.log(
      `2026 upstream's new tool: REST ${rest} ms, /mcp/{server} v2-modern ${modernFront} ms, v1 ${legacyFront} ms; list_changed told ${told} ms`,
    );
    for (const delay of [rest, modernFront, legacyFront, told]) expect(delay).toBeLessThan(PROMPT_MS);
    expect((await stack.listTools()).map((listed) => listed.name)).toContain(`${name}__${tool}`);
  });

  it("a 2025 upstream adds a tool: callable over REST and /mcp/{server} within 5 s, listeners told", {
    timeout: 60_000,
  }, async ({ expect }) => {
    const upstream = await startUpstream({ name: "legacy-adds" });
    try {
      const name = uniqueName("legacy");
      await createConnected(stack, { name, url: upstream.url, pinning: "auto" });
      const listener = await connect("v1", `/mcp/${name}`);
      const fronts = [await connect("v2-modern", `/mcp/${name}`), await connect("v1", `/mcp/${name}`)];
      // A first call warms the gateway's session; its GET stream carries the upstream's list_changed.
      expect((await stack.callTool(`${name}__echo`, { text: "warm" })).status).toBe(200);
      await waitFor(
        async () => upstream.openGetStreams,
        (open) => open >= 1,
        { timeoutMs: 5_000 },
      );
      const heard = listener.toolsListChanged;

      const tool = "late_legacy";
      const addedAt = Date.now();
      upstream.addTool(tool);
      const [rest, modernFront, legacyFront] = await callableAfter(addedAt, name, tool, fronts);
      await listener.waitForToolsListChanged(heard + 1, Math.max(PROMPT_MS - (Date.now() - addedAt), 1));
      const told = Date.now() - addedAt;
      console.log(
        `2025 upstream's new tool: REST ${rest} ms, /mcp/{server} v2-modern ${modernFront} ms, v1 ${legacyFront} ms; list_changed told by ${told} ms`,
      );
      for (const delay of [rest, modernFront, legacyFront]) expect(delay).toBeLessThan(PROMPT_MS);
      expect((await stack.listTools()).map((listed) => listed.name)).toContain(`${name}__${tool}`);
    } finally {
      await upstream.close();
    }
  });
});
