/**
 * Search mode on a real catalogue, through the dev stack (a gateway process with its runner):
 * - the tokens a client loads up front — every page of `tools/list` in full mode vs the one list of
 *   search mode — at 50, 500 and 5,000 tools (a key scoped to servers of the generated catalogue of
 *   tests/fixtures/catalogue.ts: 50 of it; all 500; the 500 under ten server names). Tokens are
 *   estimated as the JSON's bytes / 4 (no tokenizer is a dependency of the project);
 * - the top-5 hit rate of `search_tools` over the 50 recorded tasks (tests/fixtures/catalogue-tasks.json)
 *   on server-everything, server-filesystem and the 500-tool catalogue;
 * - the p50 of a call through `call_tool` and through a tool set's endpoint (`/mcp/sets/{name}`) vs the
 *   same call made directly on `/mcp`, interleaved round by round in one run, and the p50 of a
 *   `search_tools` at 5,000 tools.
 * Last line: `BENCH_CATALOGUE {json}` with the same figures.
 *
 *   BENCH_ROUNDS  rounds (default 10); each path runs one batch per round, in rotating order
 *   BENCH_CALLS   calls per batch (default 100)
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CATALOGUE_SERVERS, catalogueTasks, hitRate } from "../../tests/fixtures/catalogue";
import { startEverything } from "../../tests/fixtures/everything";
import { connectSdkClient, measure, printTable, startDevGateway, stopper, until } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { percentile, startTsProcess } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 100);
const TOKEN = "bench-admin-token";
const { everything: EV, filesystem: FS, suite: SUITE } = CATALOGUE_SERVERS;
/** The 500-tool catalogue again under these names: 5,000 tools in all. */
const COPIES = Array.from({ length: 9 }, (_, i) => `${SUITE}${i + 1}`);
const SMALL = "small";
/** The call both paths make: a tool of the 500-tool catalogue. */
const CALL = { name: `${SUITE}__crm_get_contact`, arguments: { contact_id: "c-1" } };

/** What each measured path is. */
const LABELS: Record<string, string> = {
  direct: "direct /mcp call",
  call_tool: "through call_tool",
  toolset: "through a tool set",
  search_5000: "search_tools, 5,000 tools",
};

const { stops, stopAll } = stopper();

try {
  const emulator = await startEmulator((line) => console.error(line));
  stops.push(() => emulator.stop());
  const upstream = (count: number) =>
    startTsProcess(
      "tests/fixtures/mcp-upstream-cli.ts",
      ["--name", `catalogue-${count}`, "--catalogue", String(count)],
      /^listening (\S+)$/,
    );
  const [small, large, everything] = await Promise.all([upstream(50), upstream(500), startEverything()]);
  stops.push(
    () => small.stop(),
    () => large.stop(),
    () => everything.stop(),
  );
  // server-filesystem's root: readable by the child's own uid.
  const root = mkdtempSync(join(tmpdir(), "mcpgw-bench-catalogue-"));
  chmodSync(root, 0o755);
  stops.push(async () => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "files"), { mode: 0o755 });
  writeFileSync(join(root, "files", "hello.txt"), "hello\n", { mode: 0o644 });

  const gateway = await startDevGateway(emulator.endpoint, TOKEN);
  stops.push(() => gateway.stop());
  const gatewayUrl = gateway.url;
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown>;
  };

  const servers: Array<Record<string, unknown>> = [
    { name: EV, url: everything.url },
    { name: FS, command: process.execPath, args: [filesystemEntry(), join(root, "files")] },
    { name: SUITE, url: large.match[1] },
    ...COPIES.map((name) => ({ name, url: large.match[1] })),
    { name: SMALL, url: small.match[1] },
  ];
  for (const server of servers) {
    const created = await api("POST", "/v1/servers", server);
    if (typeof created.id !== "string")
      throw new Error(`could not register ${server.name}: ${JSON.stringify(created)}`);
    await until(async () => {
      const { status } = (await api("GET", `/v1/servers/${created.id}`)) as {
        status: { state: string; error?: string };
      };
      if (status.state === "failed") throw new Error(`${server.name} failed: ${status.error}`);
      return status.state === "connected";
    }, 60_000);
  }
  const key = async (name: string, scope: string[]) =>
    String((await api("POST", "/v1/keys", { name, servers: scope })).key);
  const keys = {
    50: await key("50 tools", [SMALL]),
    500: await key("500 tools", [SUITE]),
    5000: await key("5,000 tools", [SUITE, ...COPIES]),
  };
  const realKey = await key("the recorded catalogue", [EV, FS, SUITE]);
  const connect = (path: string, bearer: string) => connectSdkClient(`${gatewayUrl}${path}`, bearer, stops);

  // Up front: what tools/list hands a client, in each mode (every page of the full list).
  const upfront: Record<string, { tools: number; fullBytes: number; searchBytes: number }> = {};
  for (const [size, bearer] of Object.entries(keys)) {
    const full = await connect("/mcp?mode=full", bearer);
    let tools = 0;
    let fullBytes = 0;
    await until(async () => {
      ({ tools, bytes: fullBytes } = await listedBytes(full));
      return tools === Number(size);
    }, 30_000);
    const search = await connect("/mcp?mode=search", bearer);
    const searchBytes = (await listedBytes(search)).bytes;
    upfront[size] = { tools, fullBytes, searchBytes };
  }

  // How often the recorded task's tool is in search_tools' top 5.
  const searchClient = await connect("/mcp?mode=search", realKey);
  const found = async (client: Client, query: string) => {
    const result = await client.callTool({ name: "search_tools", arguments: { query, limit: 5 } });
    return ((result.structuredContent as { tools: Array<{ name: string }> }).tools ?? []).map(
      (tool) => tool.name,
    );
  };
  await until(async () => (await found(searchClient, "read a file's contents")).length > 0, 30_000);
  const { rate, missed } = await hitRate(catalogueTasks(), (query) => found(searchClient, query));

  // The same call made directly, through call_tool and through a tool set; and a search over 5,000 tools.
  const set = await api("POST", "/v1/toolsets", { name: "bench-set", tools: [CALL.name] });
  if (set.name !== "bench-set") throw new Error(`could not create the tool set: ${JSON.stringify(set)}`);
  const direct = await connect("/mcp?mode=full", realKey);
  const viaSet = await connect("/mcp/sets/bench-set", TOKEN);
  const large5000 = await connect("/mcp?mode=search", keys[5000]);
  const paths = {
    direct: async () => void (await direct.callTool(CALL)),
    call_tool: async () => void (await searchClient.callTool({ name: "call_tool", arguments: CALL })),
    toolset: async () => void (await viaSet.callTool(CALL)),
    search_5000: async () => void (await found(large5000, "send a bill to a customer")),
  };
  type Path = keyof typeof paths;
  const names = Object.keys(paths) as Path[];
  const latencies = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Path, number[]>;
  for (const name of names) await measure(paths[name], 20, 1); // warm every path
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names.map((_, i) => names[(i + round) % names.length]!))
      latencies[name].push(...(await measure(paths[name], CALLS_PER_ROUND, 1)));
  }
  report(upfront, rate, missed.length, latencies);
} finally {
  await stopAll();
}

/** Every tool the client's endpoint lists (all pages) and the bytes of those `tools/list` results. */
async function listedBytes(client: Client): Promise<{ tools: number; bytes: number }> {
  let tools = 0;
  let bytes = 0;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools += page.tools.length;
    bytes += Buffer.byteLength(JSON.stringify(page));
    cursor = page.nextCursor;
  } while (cursor);
  return { tools, bytes };
}

/** A difference with its sign. */
function signed(value: string): string {
  return value.startsWith("-") ? value : `+${value}`;
}

/** The installed server-filesystem's entry point. */
function filesystemEntry(): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")),
    "dist",
    "index.js",
  );
}

function report(
  upfront: Record<string, { tools: number; fullBytes: number; searchBytes: number }>,
  rate: number,
  missed: number,
  latencies: Record<string, number[]>,
): void {
  const tokens = (bytes: number) => Math.round(bytes / 4);
  console.log("catalogue: tokens a client loads up front (tools/list JSON bytes / 4), per mode");
  console.log("");
  printTable([
    ["tools", "full (tokens)", "search (tokens)", "search / full"],
    ...Object.values(upfront).map(({ tools, fullBytes, searchBytes }) => [
      tools.toLocaleString("en"),
      tokens(fullBytes).toLocaleString("en"),
      tokens(searchBytes).toLocaleString("en"),
      (searchBytes / fullBytes).toFixed(4),
    ]),
  ]);
  console.log("");
  console.log(
    `top-5 hit rate over the 50 recorded tasks (server-everything, server-filesystem, 500-tool catalogue): ${rate.toFixed(2)} (${missed} missed)`,
  );
  console.log("");
  const p50 = (name: string) => percentile(latencies[name] ?? [], 50);
  const ms = (value: number) => value.toFixed(3);
  console.log(
    `latency: ${ROUNDS} rounds × ${CALLS_PER_ROUND} sequential calls per path, interleaved round by round`,
  );
  printTable([
    ["path", "p50 (ms)", "p99 (ms)", "added p50 (ms)", "p50 / direct"],
    ...Object.keys(latencies).map((name) => [
      LABELS[name] ?? name,
      ms(p50(name)),
      ms(percentile(latencies[name] ?? [], 99)),
      name === "direct" ? "—" : signed(ms(p50(name) - p50("direct"))),
      (p50(name) / p50("direct")).toFixed(2),
    ]),
  ]);
  const rounded = (value: number) => Number(value.toFixed(3));
  console.log(
    `BENCH_CATALOGUE ${JSON.stringify({
      upfrontTokens: Object.fromEntries(
        Object.entries(upfront).map(([size, u]) => [
          size,
          {
            full: tokens(u.fullBytes),
            search: tokens(u.searchBytes),
            ratio: rounded(u.searchBytes / u.fullBytes),
          },
        ]),
      ),
      top5HitRate: rate,
      p50Ms: Object.fromEntries(Object.keys(latencies).map((name) => [name, rounded(p50(name))])),
      addedP50Ms: {
        callTool: rounded(p50("call_tool") - p50("direct")),
        toolset: rounded(p50("toolset") - p50("direct")),
      },
    })}`,
  );
}
