/**
 * The runner fleet, measured on this machine (runner processes as `RUNNERS=3 npm run dev` starts them):
 *   1. the added p50 of a warm stdio call through a fleet of 3 (the owner looked up when the session
 *      opened, then held by it) against the same call through one runner on its own — interleaved
 *      rounds, one run (target: within 0.2 ms);
 *   2. the fleet's table writes per minute per 100 instances at steady state, by kind (heartbeat, lease
 *      claim, release), read from the runners' own `mcpgw_runner_fleet_writes_total`;
 *   3. the time from a runner's SIGKILL until every instance it held (20 / 100 / 300) is served again
 *      by the others, at the deployed RUNNER_LEASE_SECONDS (15).
 *
 *   BENCH_ROUNDS       rounds of part 1 (default 10), BENCH_CALLS calls per round and path (default 200)
 *   BENCH_WINDOW_S     part 2's window (default 30 s)
 *   BENCH_FLEET_SIZES  part 3's instance counts (default 20,100,300)
 *
 * Children are a Python stdio server of a few lines (about 10 MiB each), so 300 fit on this machine.
 */
import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AwsConfig, createStore } from "@mcpgw/aws";
import { RunnerDirectory, type RunnerRoute } from "@mcpgw/upstream";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { testUidBase } from "../../tests/runner/helpers";
import { createTestConfig } from "../../tests/support/aws";
import { createServer } from "../../tests/support/servers";
import { type Stack, startStack } from "../../tests/support/stack";
import { measure, stopper, until } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { percentile } from "../lib/processes";
import { type FleetProcess, startFleet, startFleetProcess } from "../lib/runner-fleet";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const WINDOW_MS = 1000 * Number(process.env.BENCH_WINDOW_S ?? 30);
const SIZES = (process.env.BENCH_FLEET_SIZES ?? "20,100,300").split(",").map(Number);
const TARGET_ADDED_MS = 0.2;
const TOKEN = `bench-runner-${randomUUID()}`;

/** A stdio MCP server in a few lines of Python: initialize, tools/list, tools/call `ping`, ping. */
const TINY_PY = `import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "tiny-py", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
    sys.stdout.flush()
`;

const { stops, stopAll } = stopper();
const fixtureDir = mkdtempSync(join(tmpdir(), "mcpgw-fleet-bench-"));
chmodSync(fixtureDir, 0o755); // children run under uids of their own: they must read it
const tinyPy = join(fixtureDir, "tiny.py");
writeFileSync(tinyPy, TINY_PY, { mode: 0o644 });
stops.push(async () => rmSync(fixtureDir, { recursive: true, force: true }));
const uidBase = testUidBase();
let uidOffset = 0;

try {
  const emulator = await startEmulator((line) => console.error(line));
  stops.push(() => emulator.stop());

  const added = await addedP50();
  const writes = await steadyWrites();
  const recoveries: Array<{ instances: number; ms: number; lapseMs: number }> = [];
  for (const size of SIZES) recoveries.push(await recovery(size));

  console.log(
    `fleet: warm stdio call p50 ${ms(added.fleet)} ms through a fleet of 3, ${ms(added.single)} ms through one runner — added ${signed(added.fleet - added.single)} ms (target ≤ ${TARGET_ADDED_MS} ms): ${added.fleet - added.single <= TARGET_ADDED_MS ? "met" : "MISSED"} (medians of ${ROUNDS} interleaved rounds × ${CALLS} calls)`,
  );
  console.log(
    `fleet: table writes at steady state, 3 runners, ${writes.instances} instances, ${WINDOW_MS / 1000} s: ${writes.perMinutePer100.heartbeat.toFixed(1)} heartbeats, ${writes.perMinutePer100.claim.toFixed(1)} lease claims, ${writes.perMinutePer100.release.toFixed(1)} releases per minute per 100 instances`,
  );
  for (const { instances, ms: took, lapseMs } of recoveries)
    console.log(
      `fleet: a runner holding ${instances} instances SIGKILLed → all served again by the others in ${(took / 1000).toFixed(1)} s (its registration lapsed after ${(lapseMs / 1000).toFixed(1)} s)`,
    );
  console.log(`BENCH_FLEET ${JSON.stringify({ added, writes, recoveries })}`);
} finally {
  await stopAll();
}

/** Part 1: a warm stdio call's p50 through a fleet of 3 and through one runner, rounds interleaved. */
async function addedP50(): Promise<{ single: number; fleet: number }> {
  const single = await runners("single", 1);
  const fleet = await runners("fleet", 3);
  const stacks = { single: single.stack, fleet: fleet.stack };
  const names = {
    single: await serving(single.stack, "p1-single"),
    fleet: await serving(fleet.stack, "p1-fleet"),
  };
  const call = (path: "single" | "fleet") => async () => {
    const response = await stacks[path].call("POST", `/v1/tools/${names[path]}__ping/call`, {
      arguments: {},
    });
    if (response.status !== 200)
      throw new Error(`call → ${response.status} ${JSON.stringify(response.body)}`);
  };
  for (const path of ["single", "fleet"] as const) await measure(call(path), CALLS, 1); // warm
  const p50s = { single: [] as number[], fleet: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["single", "fleet"] as const) : (["fleet", "single"] as const);
    for (const path of order) p50s[path].push(percentile(await measure(call(path), CALLS, 1), 50));
  }
  await single.stop();
  await fleet.stop();
  return { single: percentile(p50s.single, 50), fleet: percentile(p50s.fleet, 50) };
}

/** Part 2: the fleet's writes over a window with 100 instances placed and nothing changing. */
async function steadyWrites() {
  const instances = 100;
  const fleet = await runners("fleet", 3);
  await Promise.all(Array.from({ length: instances }, (_, i) => serving(fleet.stack, `p2-${i}`)));
  const before = await fleetWrites(fleet.processes);
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const after = await fleetWrites(fleet.processes);
  await fleet.stop();
  const perMinutePer100 = Object.fromEntries(
    (["heartbeat", "claim", "release"] as const).map((write) => [
      write,
      ((after[write] - before[write]) / (WINDOW_MS / 60_000)) * (100 / instances),
    ]),
  ) as Record<"heartbeat" | "claim" | "release", number>;
  return { instances, perMinutePer100 };
}

/** Part 3: `size` instances on one runner; it is SIGKILLed; how long until the others serve them all. */
async function recovery(size: number) {
  const fleet = await runners(`recovery-${size}`, 1);
  const names = await Promise.all(Array.from({ length: size }, (_, i) => serving(fleet.stack, `p3-${i}`)));
  const [victim] = fleet.processes as [FleetProcess];
  fleet.processes.push(...(await startFleet(2, { env: fleet.env })));
  const store = createStore(fleet.config);
  const killedAt = Date.now();
  await victim.kill();
  let lapseMs = 0;
  const lapsed = until(async () => {
    const registration = (await store.fleet.runners()).find((runner) => runner.id === victim.id);
    lapseMs = Date.now() - killedAt;
    return !registration || registration.aliveUntil <= Date.now();
  }, 60_000);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < names.length) {
        const name = names[next++] as string;
        await until(async () => {
          const response = await fleet.stack.call("POST", `/v1/tools/${name}__ping/call`, { arguments: {} });
          return response.status === 200;
        }, 120_000);
      }
    }),
  );
  const took = Date.now() - killedAt;
  await lapsed;
  await fleet.stop();
  return { instances: size, ms: took, lapseMs };
}

/** A gateway (in this process) with `count` runner processes: one on its own, or a fleet. */
async function runners(label: string, count: number) {
  const config = await createTestConfig();
  const env = runnerEnv(config);
  const alone = label === "single";
  const processes = alone
    ? [await startFleetProcess({ env, fleet: false })]
    : await startFleet(count, { env });
  const route: RunnerRoute = alone
    ? { url: (processes[0] as FleetProcess).url, token: TOKEN }
    : new RunnerDirectory(createStore(config).fleet, TOKEN);
  const stack = await startStack({ aws: config, runnerAt: route, retryDelaySeconds: 1 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stack.stop();
    await Promise.all(processes.map((process) => process.kill()));
  };
  stops.push(stop);
  return { config, env, processes, stack, stop };
}

/** The runner processes' environment: the emulator, the config's resources, room for 400 children each. */
function runnerEnv(config: AwsConfig): Record<string, string | undefined> {
  const base = uidBase + uidOffset;
  uidOffset += 4_000;
  return {
    ...process.env,
    AWS_ENDPOINT_URL: config.endpoint,
    TABLE_NAME: config.tableName,
    QUEUE_NAME: config.queueName,
    DEAD_LETTER_QUEUE_NAME: config.deadLetterQueueName,
    KMS_KEY_ALIAS: config.keyAlias,
    RUNNER_TOKEN: TOKEN,
    RUNNER_MAX_CHILDREN: "400",
    RUNNER_UID_BASE: String(base),
    // Three runners' slices of twice their children each (a uid per child, a group per thread).
    RUNNER_UID_COUNT: "4000",
    RUNNER_UID_SLICE: "800",
    LOG_LEVEL: "warn",
  };
}

/** Registers a Python stdio server named `name` and waits until it is connected; its name. */
async function serving(stack: Stack, name: string): Promise<string> {
  const id = await createServer(stack, { name, command: "/usr/bin/python3", args: [tinyPy] });
  await until(async () => {
    const { body } = await stack.call("GET", `/v1/servers/${id}`);
    if (body.status.state === "failed") throw new Error(`${name} failed: ${body.status.error}`);
    return body.status.state === "connected";
  }, 120_000);
  return name;
}

/** The fleet's writes so far, summed over its runners' `mcpgw_runner_fleet_writes_total`. */
async function fleetWrites(processes: FleetProcess[]) {
  const total = { heartbeat: 0, claim: 0, release: 0 };
  for (const process of processes) {
    const text = await (await fetch(`${process.url}/metrics`)).text();
    const family = parsePrometheusTextFormat(text).find((f) => f.name === "mcpgw_runner_fleet_writes_total");
    for (const metric of family?.metrics ?? []) {
      const write = metric.labels?.write as keyof typeof total | undefined;
      if (write && write in total) total[write] += Number((metric as { value?: string }).value ?? 0);
    }
  }
  return total;
}

function ms(value: number): string {
  return value.toFixed(3);
}

function signed(value: number): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(3)}`;
}
