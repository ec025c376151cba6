/**
 * What isolating stdio children costs at spawn: spawn-to-ready (spawn + initialize, answered by the
 * runner's `POST /threads/{t}/servers/{id}`) with every child under its own uid, against the same
 * runner code with isolation off, in one run, alternating. Then what `per_caller` costs (see
 * {@link perCallerCost}): a new caller's first request (its child spawned) against one to a warm shared
 * child, and the memory of each extra child. Needs root to switch uids.
 */
import { readFileSync } from "node:fs";
import { createLogger } from "@mcpgw/core";
import { createIsolation } from "@mcpgw/runner";
import { everythingEntry } from "../../tests/fixtures/everything";
import { type RunnerStack, startRunnerStack, TINY_STDIO, testUidBase } from "../../tests/runner/helpers";
import { createServer, uniqueName } from "../../tests/support/servers";
import { startEmulator } from "../lib/emulator";
import { percentile } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
if (process.getuid?.() !== 0) {
  console.error("isolation bench: run as root (children can only switch uids then)");
  process.exit(2);
}

const emulator = await startEmulator((line) => console.error(line));
const quiet = createLogger({ level: "error" });
const isolated = await startRunnerStack({ maxChildren: 20 });
const shared = await startRunnerStack({
  maxChildren: 20,
  isolation: createIsolation({ logger: quiet, uidBase: testUidBase(), uidCount: 20, canSwitchUids: false }),
});
const stacks = { isolated, shared } as const;
type Mode = keyof typeof stacks;

try {
  const kinds = { tiny: [TINY_STDIO], everything: [everythingEntry(), "stdio"] };
  const ids: Record<Mode, Record<string, string>> = { isolated: {}, shared: {} };
  for (const mode of ["isolated", "shared"] as const) {
    for (const [kind, args] of Object.entries(kinds)) {
      ids[mode][kind] = await createServer(stacks[mode], {
        name: uniqueName(`bench-${kind}`),
        command: process.execPath,
        args,
        scope: "thread",
        enabled: false,
      });
    }
  }
  let thread = 0;
  async function spawnToReady(mode: Mode, kind: string): Promise<number> {
    const stack = stacks[mode];
    const threadId = `bench-${thread++}`;
    const serverId = ids[mode][kind] as string;
    await stack.store.threads.register({
      threadId,
      serverId,
      worktreeRoot: stack.worktree(threadId),
      owner: "admin",
    });
    const started = performance.now();
    const response = await stack.runnerCall("POST", `/threads/${threadId}/servers/${serverId}`);
    const elapsed = performance.now() - started;
    if (response.status !== 200)
      throw new Error(`spawn → ${response.status} ${JSON.stringify(response.body)}`);
    await stack.runnerCall("DELETE", `/threads/${threadId}`);
    return elapsed;
  }

  for (const kind of Object.keys(kinds)) {
    const times: Record<Mode, number[]> = { isolated: [], shared: [] };
    await spawnToReady("shared", kind); // warm the page cache once, for both
    for (let round = 0; round < ROUNDS; round++) {
      const order: Mode[] = round % 2 ? ["isolated", "shared"] : ["shared", "isolated"];
      for (const mode of order) times[mode].push(await spawnToReady(mode, kind));
    }
    const own = percentile(times.isolated, 50);
    const none = percentile(times.shared, 50);
    console.log(
      `isolation spawn-to-ready, ${kind} (median of ${ROUNDS}): own uid ${own.toFixed(1)} ms, shared uid ${none.toFixed(1)} ms — ×${(own / none).toFixed(2)} (+${(own - none).toFixed(1)} ms)`,
    );
  }
  for (const [kind, args] of Object.entries(kinds)) await perCallerCost(isolated, kind, args);
  await (await import("./limits-cost")).measureLimitsCost();
} finally {
  await isolated.cleanup();
  await shared.cleanup();
  await emulator.stop();
}

/**
 * What `isolation: "per_caller"` costs, on the isolated runner: a new caller's first request (its own
 * child spawned under its own uid, then `tools/list`) against the same request to a warm shared child,
 * alternating, medians of ROUNDS; then the resident memory (VmRSS) each extra caller's child adds,
 * with ROUNDS of them alive at once.
 */
async function perCallerCost(stack: RunnerStack, kind: string, args: string[]): Promise<void> {
  const manager = stack.runner?.instances;
  if (!manager) throw new Error("no runner");
  const spec = { command: process.execPath, args, enabled: false };
  const perCaller = await createServer(stack, {
    ...spec,
    name: uniqueName(`bench-pc-${kind}`),
    isolation: "per_caller",
  });
  const shared = await createServer(stack, { ...spec, name: uniqueName(`bench-sh-${kind}`) });
  const firstRequest = async (serverId: string, caller: string) => {
    const started = performance.now();
    await manager.use(serverId, undefined, (instance) => instance.client.listTools(), { caller });
    return performance.now() - started;
  };
  await firstRequest(shared, "admin"); // the shared child, warm from here on
  const fresh: number[] = [];
  const warm: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const caller = `key:bench-${kind}-${round}`;
    if (round % 2) fresh.push(await firstRequest(perCaller, caller));
    warm.push(await firstRequest(shared, caller));
    if (!(round % 2)) fresh.push(await firstRequest(perCaller, caller));
  }
  const children = (await manager.list()).filter(
    (instance) => instance.serverId === perCaller && instance.pid,
  );
  const rss = children.map((instance) => residentKiB(instance.pid as number));
  const own = percentile(fresh, 50);
  const hot = percentile(warm, 50);
  const meanMiB = rss.reduce((sum, kib) => sum + kib, 0) / rss.length / 1024;
  console.log(
    `per_caller, ${kind} (median of ${ROUNDS}): a new caller's first request ${own.toFixed(1)} ms (its child spawned), a warm shared child ${hot.toFixed(2)} ms — ×${(own / hot).toFixed(0)} (+${(own - hot).toFixed(1)} ms); each extra caller's child ${meanMiB.toFixed(1)} MiB RSS (mean of ${rss.length} alive)`,
  );
  await stack.runnerCall("DELETE", `/servers/${perCaller}`);
  await stack.runnerCall("DELETE", `/servers/${shared}`);
}

/** A process's resident set (VmRSS), in KiB. */
function residentKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return Number(line?.[1] ?? 0);
}
