/**
 * Proxy overhead: the same warm `tools/call` against the same local upstream, (a) directly with the
 * SDK client and (b) through the gateway's POST /v1/tools/{name}/call — interleaved in one run,
 * sequentially and at concurrency 16. Prints p50/p99, the added latency and the ratio.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startEmulator } from "../lib/emulator";
import { freePort, percentile, startTsProcess } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 200);
const TOKEN = "bench-admin-token";

const emulator = await startEmulator((line) => console.error(line));
const upstream = await startTsProcess(
  "tests/fixtures/mcp-upstream-cli.ts",
  ["--name", "bench"],
  /^listening (\S+)$/,
);
const upstreamUrl = upstream.match[1]!;
const port = await freePort();
const gateway = await startTsProcess("scripts/dev.ts", [], /ready at (\S+) /, {
  PORT: String(port),
  ADMIN_TOKEN: TOKEN,
  AWS_ENDPOINT_URL: emulator.endpoint,
  TABLE_NAME: `bench-${port}`,
  QUEUE_NAME: `bench-jobs-${port}`,
  DEAD_LETTER_QUEUE_NAME: `bench-dlq-${port}`,
});
const gatewayUrl = gateway.match[1]!;
const args = { text: "hello" };
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

try {
  const created = (await (
    await fetch(`${gatewayUrl}/v1/servers`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "bench", url: upstreamUrl }),
    })
  ).json()) as { id?: string };
  if (!created.id) throw new Error(`could not register the upstream: ${JSON.stringify(created)}`);
  await until(async () => {
    const server = (await (await fetch(`${gatewayUrl}/v1/servers/${created.id}`, { headers })).json()) as {
      status: { state: string; error: string };
    };
    if (server.status.state === "failed") throw new Error(`upstream failed: ${server.status.error}`);
    return server.status.state === "connected";
  });
  await until(async () => (await gatewayCall()).ok);

  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  const directCall = async () => {
    await direct.callTool({ name: "echo", arguments: args });
  };
  async function gatewayCall() {
    const response = await fetch(`${gatewayUrl}/v1/tools/bench__echo/call`, {
      method: "POST",
      headers,
      body: JSON.stringify({ arguments: args }),
    });
    await response.arrayBuffer();
    return response;
  }

  // The floor any HTTP front adds: one loopback round trip to the gateway that does nothing.
  const hop = async () => void (await (await fetch(`${gatewayUrl}/healthz`)).arrayBuffer());
  await measure(hop, 200, 1);
  console.log(
    `bare HTTP hop to the gateway (GET /healthz) p50 ${percentile(await measure(hop, 1000, 1), 50).toFixed(3)} ms`,
  );
  const viaGateway = async () => void (await gatewayCall());
  for (const concurrency of [1, 16]) {
    const samples = { direct: [] as number[], gateway: [] as number[] };
    await measure(directCall, 50, concurrency); // warm both paths
    await measure(viaGateway, 50, concurrency);
    for (let round = 0; round < ROUNDS; round++) {
      if (concurrency === 1) {
        // Sequential: alternate call by call, so both paths see the same moment of a noisy machine.
        for (let i = 0; i < CALLS_PER_ROUND; i++) {
          samples.direct.push(...(await measure(directCall, 1, 1)));
          samples.gateway.push(...(await measure(viaGateway, 1, 1)));
        }
      } else {
        samples.direct.push(...(await measure(directCall, CALLS_PER_ROUND, concurrency)));
        samples.gateway.push(...(await measure(viaGateway, CALLS_PER_ROUND, concurrency)));
      }
    }
    report(concurrency, samples.direct, samples.gateway);
  }
  await direct.close();
} finally {
  await gateway.stop();
  await upstream.stop();
  await emulator.stop();
}

/** Latencies (ms) of `count` calls made `concurrency` at a time. */
async function measure(call: () => Promise<void>, count: number, concurrency: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

function report(concurrency: number, direct: number[], viaGateway: number[]): void {
  const row = (p: number) => {
    const d = percentile(direct, p);
    const g = percentile(viaGateway, p);
    return `p${p}: direct ${d.toFixed(3)} ms, via gateway ${g.toFixed(3)} ms, added ${(g - d).toFixed(3)} ms, ratio ${(g / d).toFixed(2)}x`;
  };
  console.log(`proxy concurrency=${concurrency} calls=${direct.length}+${viaGateway.length}`);
  console.log(`  ${row(50)}`);
  console.log(`  ${row(99)}`);
}

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("bench setup timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
