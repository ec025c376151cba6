/**
 * Per-plane bundles: each deployable entry bundled as `npm run build` does (scripts/build.ts, code
 * splitting on), with its size — the bytes a cold start imports (the entry and its static chunks; bytes
 * and gzip) apart from the chunks only `import()` loads (lazy) — which planes' modules it holds, and its
 * cold-import time — a fresh Node
 * process importing it, as Lambda's first invocation does (median of BENCH_IMPORTS, default 7). Ends
 * with one `BENCH_BUNDLES {json}` line.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { bundleAll } from "../build";
import { percentile } from "../lib/processes";

const IMPORTS = Number(process.env.BENCH_IMPORTS ?? 7);

/** Which plane a source file belongs to, by its path. */
export function planeOf(input: string): string | undefined {
  if (input.includes("packages/api/src/gateway/")) return "gateway";
  if (input.includes("packages/api/src/admin/")) return "admin";
  if (input.includes("packages/api/")) return "api";
  if (input.includes("packages/worker/")) return "worker";
  if (input.includes("packages/runner/")) return "runner";
  return undefined;
}

// Importing an entry runs its top level as Lambda (or the container) would: settings are read, the app
// built. The runner stops before it listens (no RUNNER_TOKEN); the Lambda runtime's global is stubbed.
const IMPORTER = `
globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };
const started = performance.now();
try { await import(process.argv[1]); } catch {}
process.stdout.write(JSON.stringify({ ms: performance.now() - started }));
process.exit(0);`;
const ENV = {
  PATH: process.env.PATH ?? "",
  ADMIN_TOKEN: "bench-admin-token",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "bench",
  AWS_SECRET_ACCESS_KEY: "bench",
  LOG_LEVEL: "error",
};

/** Milliseconds a fresh process takes to import `file`. */
function coldImportMs(file: string): number {
  const child = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", IMPORTER, pathToFileURL(file).href],
    {
      env: ENV,
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  return (JSON.parse(child.stdout || '{"ms":NaN}') as { ms: number }).ms;
}

const work = mkdtempSync(join(tmpdir(), "mcpgw-bench-bundles-"));
try {
  const outputs = await bundleAll(join(work, "dist"));
  const rows = outputs.map(({ name, file, staticBytes: bytes, staticFiles, lazy, inputs }) => {
    const gzip = staticFiles.reduce((sum, output) => sum + gzipSync(readFileSync(output.file)).byteLength, 0);
    const lazyBytes = lazy.reduce((sum, output) => sum + output.bytes, 0);
    const planes: Record<string, number> = {};
    for (const plane of inputs.map(planeOf)) if (plane) planes[plane] = (planes[plane] ?? 0) + 1;
    const times = Array.from({ length: IMPORTS }, () => coldImportMs(file));
    return {
      name,
      bytes,
      gzip,
      lazyBytes,
      lazyChunks: lazy.length,
      planes,
      importMs: percentile(times, 50),
      times,
    };
  });
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  console.log(
    `bundles: minified ESM as deployed; static = entry + chunks imported statically, lazy = chunks only import() loads; cold import = median of ${IMPORTS} fresh processes`,
  );
  for (const row of rows) {
    const planes = Object.entries(row.planes)
      .map(([plane, count]) => `${plane} ${count}`)
      .join(", ");
    console.log(
      `${row.name.padEnd(8)} static ${String(row.bytes).padStart(9)} bytes (${kib(row.bytes).padStart(8)})  gzip ${kib(row.gzip).padStart(7)}  lazy ${kib(row.lazyBytes).padStart(7)} in ${row.lazyChunks} chunks  cold import ${row.importMs.toFixed(0).padStart(4)} ms  modules: ${planes}`,
    );
  }
  const figures = rows.map(({ times: _times, importMs, ...row }) => ({
    ...row,
    importMs: Math.round(importMs),
  }));
  console.log(`BENCH_BUNDLES ${JSON.stringify(figures)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
