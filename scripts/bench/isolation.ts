/**
 * What isolating stdio children costs at spawn: spawn-to-ready (spawn + initialize, answered by the
 * runner's `POST /threads/{t}/servers/{id}`) with every child under its own uid, against the same
 * runner code with isolation off, in one run, alternating. Needs root to switch uids.
 */
import { createLogger } from "@mcpgw/core";
import { createIsolation } from "@mcpgw/runner";
import { everythingEntry } from "../../tests/fixtures/everything";
import { startRunnerStack, TINY_STDIO, testUidBase } from "../../tests/runner/helpers";
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
} finally {
  await isolated.cleanup();
  await shared.cleanup();
  await emulator.stop();
}
