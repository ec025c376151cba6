/**
 * What the per-caller limits cost on the warm-call path: the same warm `tools/call` to one local
 * upstream, directly and through two gateway apps over one store, each on its own listener and
 * logging errors only — one with the limiter in the path (called with a key whose own `rateLimit` no
 * batch reaches, so nothing is refused), one built without it (`limits: false`) — by REST and by
 * `/mcp/{server}`, interleaved call by call in one run (so a noisy machine weighs on all alike). Prints each path's
 * added p50 (over direct) with limits on and off, and their ratio (the target: within 5 %).
 *
 *   BENCH_LIMITS_ROUNDS  rounds (default 10); BENCH_LIMITS_CALLS  calls per path and round (default 200)
 */
import { createApp, listen } from "@mcpgw/api";
import { createLogger } from "@mcpgw/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startUpstream } from "../../tests/fixtures/mcp-upstream";
import { createConnected, startGatewayStack, TEST_ADMIN_TOKEN } from "../../tests/gateway/helpers";
import { startEmulator } from "../lib/emulator";
import { percentile } from "../lib/processes";

/** The bound: the limits may add at most this much to the gateway's added p50. */
const TARGET_RATIO = 1.05;
const SERVER = "limitsbench";

/** Added p50 (ms over direct) per gateway path with limits on and off, and on/off. */
export type LimitsCost = Record<"rest" | "mcp", { onMs: number; offMs: number; ratio: number }>;

/** Measures and prints what the limits add to a warm call (see the module comment). */
export async function measureLimitsCost(
  rounds = Number(process.env.BENCH_LIMITS_ROUNDS ?? 10),
  calls = Number(process.env.BENCH_LIMITS_CALLS ?? 200),
): Promise<LimitsCost> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const emulator = await startEmulator((line) => console.error(line));
    stops.push(() => emulator.stop());
    const upstream = await startUpstream({ name: "limits-bench" });
    stops.push(() => upstream.close());
    // The stack registers the upstream (its worker probes it) and makes the key; the apps measured serve calls.
    const stack = await startGatewayStack();
    stops.push(() => stack.stop());
    await createConnected(stack, { name: SERVER, url: upstream.url });
    const created = await stack.call("POST", "/v1/keys", {
      name: "bench",
      rateLimit: { perMinute: 1_000_000, burst: 100_000 },
    });
    if (created.status !== 201) throw new Error(`POST /v1/keys → ${created.status}`);
    const key = created.body.key as string;

    const direct = await connect(upstream.url);
    stops.push(() => direct.close());
    const paths: Record<string, () => Promise<void>> = { direct: () => echo(direct) };
    for (const [mode, limits] of [
      ["on", undefined],
      ["off", false],
    ] as const) {
      const app = createApp({
        store: stack.store,
        logger: createLogger({ level: "error" }),
        adminToken: TEST_ADMIN_TOKEN,
        allowPrivateUpstreams: true,
        serve: { gateway: true, admin: false },
        ...(limits === false ? { limits } : {}),
      });
      const listener = await listen(app, 0);
      stops.push(() => listener.close());
      const viaMcp = await connect(`${listener.url}/mcp/${SERVER}`, key);
      stops.push(() => viaMcp.close());
      paths[`rest-${mode}`] = () => restCall(listener.url, key);
      paths[`mcp-${mode}`] = () => echo(viaMcp);
    }

    const names = Object.keys(paths);
    const latencies: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
    for (const name of names) for (let i = 0; i < 50; i++) await paths[name]?.(); // warm every path
    // Each turn runs every path once, in a fresh shuffled order: a rotation kept each path right after
    // the same other one, which alone made one app's REST path ~5 % slower than its identical twin's.
    const random = seededRandom(23);
    for (let round = 0; round < rounds; round++) {
      for (let call = 0; call < calls; call++) {
        for (const name of shuffled(names, random)) {
          const started = performance.now();
          await paths[name]?.();
          latencies[name]?.push(performance.now() - started);
        }
      }
    }
    const p50 = (name: string) => percentile(latencies[name] ?? [], 50);
    const cost = {} as LimitsCost;
    for (const path of ["rest", "mcp"] as const) {
      const onMs = p50(`${path}-on`) - p50("direct");
      const offMs = p50(`${path}-off`) - p50("direct");
      cost[path] = { onMs, offMs, ratio: onMs / offMs };
    }
    const ms = (value: number) => value.toFixed(3);
    console.log(
      `limits on the warm path (${rounds} rounds × ${calls} calls per path; direct p50 ${ms(p50("direct"))} ms):`,
    );
    for (const [path, { onMs, offMs, ratio }] of Object.entries(cost)) {
      console.log(
        `  ${path.padEnd(4)} added p50: limits on +${ms(onMs)} ms, off +${ms(offMs)} ms — ×${ratio.toFixed(3)} (target ≤ ×${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? "met" : "MISSED"})`,
      );
    }
    console.log(`BENCH_LIMITS ${JSON.stringify(cost)}`);
    return cost;
  } finally {
    for (const stop of stops.reverse()) await stop().catch((error) => console.error(error));
  }
}

async function connect(url: string, key?: string): Promise<Client> {
  const client = new Client({ name: "limits-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
    }),
  );
  return client;
}

async function echo(client: Client): Promise<void> {
  const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
  if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
}

async function restCall(url: string, key: string): Promise<void> {
  const response = await fetch(`${url}/v1/tools/${SERVER}__echo/call`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ arguments: { text: "hello" } }),
  });
  const body = await response.arrayBuffer();
  if (!response.ok) throw new Error(`REST call → ${response.status} ${Buffer.from(body).toString()}`);
}

/** A small deterministic generator (mulberry32): the same shuffles in every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** `items` in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
