/**
 * Mixed load: 16 clients for 60 s (MIXED_LOAD_SECONDS) on one stack with its worker and runner, three
 * HTTP upstreams and stdio servers — creates, edits of every kind (timeoutSeconds, rename, url to
 * another upstream, headers, stdio env, args), reconnects, deletes, and tool calls by REST and by
 * `/mcp`. What must hold: no call refused because of an edit to a server that was serving (connected,
 * a call answered, not deleted since), no PATCH answered 409 (none sends If-Match), no 5xx anywhere,
 * every status settled at the end (`connected`, or `failed` for the one broken server), every server
 * answering on the upstream its config names, and exactly one child per stdio server left.
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { percentile } from "../../scripts/lib/processes";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { cmdline, isAlive, type RunnerStack, startRunnerStack, TINY_STDIO } from "../runner/helpers";
import { waitFor } from "../support/stack";
import { createServer, reaches, statusReader, uniqueName } from "./helpers";
import { callOutcome, type LoadClient, openLoadClient, type Refused } from "./load-client";

const SECONDS = Number(process.env.MIXED_LOAD_SECONDS ?? 60);
const CLIENTS = 16;
/** Churn servers alive at once (created and deleted under load), besides the long-lived ones. */
const MAX_CHURN = 6;
/** How long every status has to settle once the load stops. */
const SETTLE_MS = 30_000;
/** A marker in every stdio child's command line, to count this file's children in /proc. */
const MARK = `--mixed-load-${Math.random().toString(36).slice(2, 8)}`;

/** A server the load knows: its current name (the highest version seen) and what happened to it. */
interface Tracked {
  id: string;
  kind: "http" | "stdio";
  name: string;
  version: number;
  /** `serving`: created before the load, never deleted; `churn`: created and deleted under load. */
  pool: "serving" | "churn" | "broken";
  /** A call through the gateway has answered (so from now on it was serving). */
  served: boolean;
  /** A DELETE has been sent. */
  deleted: boolean;
  /** Bumped when a rename starts and when it ends: a call that saw it move may 404 on the old name. */
  renameEpoch: number;
  renaming: number;
}

interface Figures {
  calls: number;
  served: number;
  refusals: Array<{ server: string; kind: Tracked["kind"]; via: string; outcome: Refused }>;
  /** Calls that did not answer for a reason other than an edit, by reason. */
  excused: Record<string, number>;
  errors5xx: Array<{ what: string; status: number; detail: string }>;
  patchConflicts: Array<{ server: string; detail: string }>;
  admin: Record<string, number>;
  latencyMs: number[];
}

describe("mixed load: edits keep serving", () => {
  let stack: RunnerStack;
  const upstreams: Upstream[] = [];
  let broken: Upstream;
  const servers = new Map<string, Tracked>();
  const clients: LoadClient[] = [];

  beforeAll(async () => {
    // No per-caller rate limits: the load is one caller, and a 429 is not what this measures.
    stack = await startRunnerStack({}, { limits: false });
    for (let i = 0; i < 3; i++) upstreams.push(await startUpstream({ name: `load-${i}` }));
    broken = await startUpstream({ failWith: 500 });
    const specs: Array<[Tracked["kind"], Tracked["pool"], Record<string, unknown>]> = [
      ...[0, 1, 2, 0].map((u, i): [Tracked["kind"], Tracked["pool"], Record<string, unknown>] => [
        "http",
        "serving",
        { url: upstreams[u]!.url, headers: { "X-Load": `h${i}` } },
      ]),
      ["stdio", "serving", stdioSpec(0)],
      ["stdio", "serving", stdioSpec(0)],
      ["http", "broken", { url: broken.url }],
    ];
    for (const [kind, pool, spec] of specs) {
      const name = uniqueName(`load-${kind}`);
      const id = await createServer(stack, { name, ...spec });
      servers.set(id, track(id, kind, name, pool));
    }
    for (const server of servers.values())
      await reaches(stack, server.id, server.pool === "broken" ? "failed" : "connected", 20_000);
    // Warm: every long-lived server has answered a call before the load starts (it is serving).
    for (const server of servers.values()) {
      if (server.pool !== "serving") continue;
      const tool = `${server.name}__${server.kind === "stdio" ? "ping" : "echo"}`;
      await waitFor(
        () => stack.callTool(tool, { text: "warm" }),
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
    await Promise.all([...upstreams, broken].filter(Boolean).map((u) => u.close()));
  });

  function stdioSpec(v: number) {
    return { command: process.execPath, args: [TINY_STDIO, MARK, `--v${v}`], env: { LOAD_V: String(v) } };
  }

  function track(id: string, kind: Tracked["kind"], name: string, pool: Tracked["pool"]): Tracked {
    return { id, kind, name, version: 1, pool, served: false, deleted: false, renameEpoch: 0, renaming: 0 };
  }

  it(
    `${CLIENTS} clients for ${SECONDS} s: 0 refusals from edits, 0 PATCH 409, 0 5xx; all settles, no leaked child`,
    async () => {
      const figures: Figures = {
        calls: 0,
        served: 0,
        refusals: [],
        excused: {},
        errors5xx: [],
        patchConflicts: [],
        admin: {},
        latencyMs: [],
      };
      const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)] as T;
      const live = (pool?: Tracked["pool"]) =>
        [...servers.values()].filter((s) => !s.deleted && (pool === undefined || s.pool === pool));
      let counter = 0;

      /** An admin request, its 5xx and PATCH 409s recorded; resolves to the response. */
      async function admin(what: string, method: string, path: string, body?: unknown) {
        figures.admin[what] = (figures.admin[what] ?? 0) + 1;
        const response = await stack.call(method, path, body);
        if (response.status >= 500)
          figures.errors5xx.push({ what, status: response.status, detail: JSON.stringify(response.body) });
        if (method === "PATCH" && response.status === 409)
          figures.patchConflicts.push({ server: path, detail: JSON.stringify(response.body) });
        return response;
      }

      /** Applies a PATCH; a 200 body newer than what the load knows updates the server's name. */
      async function edit(server: Tracked, what: string, patch: Record<string, unknown>) {
        const response = await admin(what, "PATCH", `/v1/servers/${server.id}`, patch);
        if (response.status === 200 && response.body.version > server.version) {
          server.version = response.body.version;
          server.name = response.body.name;
        }
      }

      async function rename(server: Tracked) {
        server.renameEpoch++;
        server.renaming++;
        try {
          await edit(server, "rename", { name: uniqueName(`load-${server.kind}`) });
        } finally {
          server.renaming--;
          server.renameEpoch++;
        }
      }

      async function editSomething(server: Tracked) {
        const n = ++counter;
        if (Math.random() < 0.25) return rename(server);
        if (Math.random() < 0.3) return edit(server, "timeoutSeconds", { timeoutSeconds: 10 + (n % 20) });
        if (server.kind === "stdio") {
          return Math.random() < 0.5
            ? edit(server, "env", { env: { LOAD_V: String(n) } })
            : edit(server, "args", { args: stdioSpec(n).args });
        }
        return Math.random() < 0.5
          ? edit(server, "headers", { headers: { "X-Load": `h${n}` } })
          : edit(server, "url", { url: pick(upstreams).url, headers: { "X-Load": `h${n}` } });
      }

      async function createChurn() {
        const n = ++counter;
        const kind = n % 3 === 0 ? "stdio" : "http";
        const name = uniqueName(`load-${kind}`);
        const spec = kind === "stdio" ? stdioSpec(n) : { url: pick(upstreams).url };
        const response = await admin("create", "POST", "/v1/servers", { name, ...spec });
        if (response.status === 201)
          servers.set(response.body.id, track(response.body.id, kind, name, "churn"));
      }

      async function deleteChurn(server: Tracked) {
        server.deleted = true;
        await admin("delete", "DELETE", `/v1/servers/${server.id}`);
      }

      async function call(client: LoadClient, server: Tracked) {
        const via = Math.random() < 0.5 ? "rest" : "mcp";
        const name = server.name;
        const epoch = server.renameEpoch;
        const wasServing = server.served && !server.deleted;
        const tool = server.kind === "stdio" ? `${name}__ping` : `${name}__echo`;
        const started = performance.now();
        const outcome = await callOutcome(client, via, tool, server.kind === "stdio" ? {} : { text: "x" });
        figures.latencyMs.push(performance.now() - started);
        figures.calls++;
        if (outcome.ok) {
          figures.served++;
          server.served = true;
          return;
        }
        if (outcome.status >= 500) {
          figures.errors5xx.push({
            what: `${via} call ${tool}`,
            status: outcome.status,
            detail: outcome.detail,
          });
          return;
        }
        const renamedMeanwhile = epoch !== server.renameEpoch || server.renaming > 0 || name !== server.name;
        const excuse = !wasServing
          ? "not yet serving"
          : server.deleted
            ? "deleted"
            : server.pool === "broken"
              ? "broken"
              : renamedMeanwhile && ["server.not_found", "tool.not_found"].includes(outcome.code)
                ? "renamed"
                : undefined;
        if (excuse) figures.excused[excuse] = (figures.excused[excuse] ?? 0) + 1;
        else figures.refusals.push({ server: name, kind: server.kind, via, outcome });
      }

      async function step(client: LoadClient) {
        const roll = Math.random();
        if (roll < 0.8) return call(client, pick(live()));
        if (roll < 0.9) return editSomething(pick([...live("serving"), ...live("churn")]));
        if (roll < 0.93) {
          const target = pick([...live("serving"), ...live("churn")]);
          return void (await admin("reconnect", "POST", `/v1/servers/${target.id}/reconnect`));
        }
        const churn = live("churn");
        if (churn.length < 2 || (churn.length < MAX_CHURN && Math.random() < 0.5)) return createChurn();
        return deleteChurn(pick(churn));
      }

      // Act: every client loops until the end, a short pause between steps (two cores, shared)
      const until = Date.now() + SECONDS * 1_000;
      await Promise.all(
        clients.map(async (client) => {
          while (Date.now() < until) {
            await step(client);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
      );

      // Figures, as plain lines
      const refusalKinds = countBy(
        figures.refusals.map(
          (r) =>
            `${r.kind} ${r.outcome.status} ${r.outcome.code}: ${r.outcome.detail.replace(/'[^']*'/g, "'…'")}`,
        ),
      );
      const refusalsByVia = (via: string) => figures.refusals.filter((r) => r.via === via).length;
      console.log(
        [
          `mixed load: ${CLIENTS} clients, ${SECONDS} s`,
          `calls ${figures.calls}, served ${figures.served}, not served for other reasons ${JSON.stringify(figures.excused)}`,
          `refusals from edits ${figures.refusals.length} (REST ${refusalsByVia("rest")}, MCP ${refusalsByVia("mcp")}) = ${((100 * figures.refusals.length) / Math.max(1, figures.calls)).toFixed(1)} % of calls`,
          `refusal kinds ${JSON.stringify(refusalKinds)}`,
          `PATCH 409 ${figures.patchConflicts.length} of ${Object.entries(figures.admin)
            .filter(([k]) => !["create", "delete", "reconnect"].includes(k))
            .reduce((sum, [, n]) => sum + n, 0)} PATCHes`,
          `5xx ${figures.errors5xx.length}${figures.errors5xx.length ? ` ${JSON.stringify(figures.errors5xx.slice(0, 5))}` : ""}`,
          `admin ${JSON.stringify(figures.admin)}`,
          `call latency p50 ${percentile(figures.latencyMs, 50).toFixed(1)} ms, p99 ${percentile(figures.latencyMs, 99).toFixed(1)} ms`,
        ].join("\n"),
      );

      // Settle: every server connected (the broken one failed) within the bound, on the upstream it names
      const settleStarted = Date.now();
      for (const server of live()) {
        const want = server.pool === "broken" ? "failed" : "connected";
        await waitFor(statusReader(stack, server.id), (s) => s.state === want, {
          timeoutMs: Math.max(1_000, SETTLE_MS - (Date.now() - settleStarted)),
          intervalMs: 200,
        });
      }
      console.log(`settled in ${((Date.now() - settleStarted) / 1_000).toFixed(1)} s`);
      for (const server of live().filter((s) => s.pool !== "broken")) {
        const config = (await stack.call("GET", `/v1/servers/${server.id}`)).body;
        const target = upstreams.find((u) => u.url === config.url);
        const before = target?.toolCalls ?? 0;
        const answered = await waitFor(
          () =>
            stack.callTool(`${config.name}__${server.kind === "stdio" ? "ping" : "echo"}`, { text: "end" }),
          (r) => r.status === 200,
          { timeoutMs: 5_000, intervalMs: 200 },
        );
        expect(answered.status).toBe(200);
        if (target) expect(target.toolCalls).toBe(before + 1);
      }

      // No leaked children: one per live stdio server, none of a deleted one
      const stdioIds = new Set(
        live()
          .filter((s) => s.kind === "stdio")
          .map((s) => s.id),
      );
      const instances = await waitFor(
        async () => ({ runner: await stack.instances(), marked: markedChildren() }),
        ({ runner, marked }) =>
          runner.length === stdioIds.size &&
          runner.every((i) => stdioIds.has(i.serverId)) &&
          marked.length === stdioIds.size,
        { timeoutMs: 10_000, intervalMs: 250 },
      );
      console.log(`children after: ${instances.marked.length} for ${stdioIds.size} stdio servers`);

      expect({
        errors5xx: figures.errors5xx,
        patchConflicts: figures.patchConflicts.length,
        refusals: refusalKinds,
      }).toEqual({ errors5xx: [], patchConflicts: 0, refusals: {} });
      expect(figures.served).toBeGreaterThan(figures.calls / 2);
    },
    (SECONDS + 120) * 1_000,
  );

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

function countBy(keys: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}
