/**
 * Mixed load: 16 clients for 60 s (MIXED_LOAD_SECONDS) on one stack with its worker and runner, three
 * HTTP upstreams and stdio servers — creates, edits of every kind (timeoutSeconds, rename, url to
 * another upstream, headers, stdio env, args), reconnects, deletes, and tool calls by REST and by
 * `/mcp` (see load-world.ts). What must hold: no call refused because of an edit to a server that was
 * serving (connected, a call answered, not deleted since), no PATCH answered 409 (none sends
 * If-Match), no 5xx anywhere; then every status settled (`connected`, or `failed` for the one broken
 * server), every server answering from what its config names now (the upstream at its URL, the child
 * with its args), and exactly one child per stdio server left.
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { cmdline, isAlive, type RunnerStack, startRunnerStack, TINY_STDIO, textOf } from "../runner/helpers";
import { waitFor } from "../support/stack";
import { createServer, reaches, statusReader, uniqueName } from "./helpers";
import { type LoadClient, openLoadClient } from "./load-client";
import { LoadWorld, type Tracked, toolOf } from "./load-world";

const SECONDS = Number(process.env.MIXED_LOAD_SECONDS ?? 60);
const CLIENTS = 16;
/** Churn servers alive at once (created and deleted under load), besides the long-lived ones. */
const MAX_CHURN = 6;
/** How long every status has to settle once the load stops. */
const SETTLE_MS = 30_000;
/** A marker in every stdio child's command line, to count this file's children in /proc. */
const MARK = `--mixed-load-${Math.random().toString(36).slice(2, 8)}`;

const stdioSpec = (v: number) => ({
  command: process.execPath,
  args: [TINY_STDIO, MARK, `--v${v}`],
  env: { LOAD_V: String(v) },
});

describe("mixed load: edits keep serving", () => {
  let stack: RunnerStack;
  const upstreams: Upstream[] = [];
  let broken: Upstream | undefined;
  let world: LoadWorld;
  const clients: LoadClient[] = [];

  beforeAll(async () => {
    // No per-caller rate limits: the load is one caller, and a 429 is not what this measures.
    stack = await startRunnerStack({}, { limits: false });
    for (let i = 0; i < 3; i++) upstreams.push(await startUpstream({ name: `load-${i}` }));
    broken = await startUpstream({ failWith: 500 });
    world = new LoadWorld(stack, upstreams, stdioSpec, MAX_CHURN);
    const specs: Array<[Tracked["kind"], Tracked["pool"], Record<string, unknown>]> = [
      ["http", "serving", { url: upstreams[0]!.url, headers: { "X-Load": "h0" } }],
      ["http", "serving", { url: upstreams[1]!.url, headers: { "X-Load": "h1" } }],
      ["http", "serving", { url: upstreams[2]!.url, headers: { "X-Load": "h2" } }],
      ["http", "serving", { url: upstreams[0]!.url, headers: { "X-Load": "h3" } }],
      ["stdio", "serving", stdioSpec(0)],
      ["stdio", "serving", stdioSpec(0)],
      ["http", "broken", { url: broken.url }],
    ];
    for (const [kind, pool, spec] of specs) {
      const name = uniqueName(`load-${kind}`);
      world.track(await createServer(stack, { name, ...spec }), kind, name, pool);
    }
    for (const server of world.live())
      await reaches(stack, server.id, server.pool === "broken" ? "failed" : "connected", 20_000);
    // Warm: every long-lived server has answered a call before the load starts (it is serving).
    for (const server of world.live("serving")) {
      const { tool, args } = toolOf(server, server.name);
      await waitFor(
        () => stack.callTool(tool, args),
        (r) => r.status === 200,
        { timeoutMs: 5_000, intervalMs: 100 },
      );
      server.served = true;
    }
    for (let i = 0; i < CLIENTS; i++) clients.push(await openLoadClient(stack.api.url));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await stack?.cleanup();
    await Promise.all([...upstreams, broken].map((u) => u?.close()));
  });

  it(
    `${CLIENTS} clients for ${SECONDS} s: no call refused by an edit, 0 PATCH 409, 0 5xx; all settles, no leaked child`,
    async () => {
      // Act: every client steps until the end, a short pause between steps (two cores, shared)
      const until = Date.now() + SECONDS * 1_000;
      await Promise.all(
        clients.map(async (client) => {
          while (Date.now() < until) {
            await world.step(client);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
      );
      console.log([`mixed load: ${CLIENTS} clients, ${SECONDS} s`, ...world.report()].join("\n"));

      // Settle: every server connected (the broken one failed) within the bound
      const settleStarted = Date.now();
      for (const server of world.live()) {
        const want = server.pool === "broken" ? "failed" : "connected";
        await waitFor(statusReader(stack, server.id), (s) => s.state === want, {
          timeoutMs: Math.max(1_000, SETTLE_MS - (Date.now() - settleStarted)),
          intervalMs: 200,
        });
      }
      console.log(`settled in ${((Date.now() - settleStarted) / 1_000).toFixed(1)} s`);

      // Every server answers from what its config names now
      for (const server of world.live().filter((s) => s.pool !== "broken")) await answersFromConfig(server);

      // No leaked children: one per live stdio server, none of a deleted one
      const stdioIds = new Set(
        world
          .live()
          .filter((s) => s.kind === "stdio")
          .map((s) => s.id),
      );
      const children = await waitFor(
        async () => ({ runner: await stack.instances(), marked: markedChildren() }),
        ({ runner, marked }) =>
          runner.length === stdioIds.size &&
          runner.every((i) => stdioIds.has(i.serverId)) &&
          marked.length === stdioIds.size,
        { timeoutMs: 10_000, intervalMs: 250 },
      );
      console.log(`children after: ${children.marked.length} for ${stdioIds.size} stdio servers`);

      const { figures } = world;
      expect({
        errors5xx: figures.errors5xx,
        patchConflicts: figures.patchConflicts.length,
        refusals: world.refusalKinds(),
      }).toEqual({ errors5xx: [], patchConflicts: 0, refusals: {} });
      expect(figures.served).toBeGreaterThan(figures.calls / 2);
    },
    (SECONDS + 120) * 1_000,
  );

  /** An HTTP server's call lands on the upstream at its URL; a stdio server's on a child with its args. */
  async function answersFromConfig(server: Tracked) {
    const config = (await stack.call("GET", `/v1/servers/${server.id}`)).body;
    if (server.kind === "stdio") {
      const answered = await stack.callTool(`${config.name}__pid`);
      expect(answered.status).toBe(200);
      const pid = Number(textOf(answered.body));
      expect(cmdline(pid).slice(-config.args.length)).toEqual(config.args);
      return;
    }
    const target = upstreams.find((u) => u.url === config.url);
    const { tool, args } = toolOf(server, config.name);
    // Within the data plane's staleness bound (≤ 2 s) of the switch, a call may still go to the old URL.
    await waitFor(
      async () => {
        const before = target?.toolCalls ?? 0;
        const answered = await stack.callTool(tool, args);
        return { status: answered.status, landed: (target?.toolCalls ?? 0) === before + 1 };
      },
      ({ status, landed }) => status === 200 && landed,
      { timeoutMs: 3_000, intervalMs: 100 },
    );
  }

  /** Live processes whose command line carries this file's marker. */
  function markedChildren(): number[] {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => {
        try {
          return isAlive(pid) && cmdline(pid).includes(MARK);
        } catch {
          return false;
        }
      });
  }
});
