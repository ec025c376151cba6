/**
 * `npm run build`: bundles each deployable entry the way SST does (esbuild, ESM, Node 22 target,
 * minified) into dist/: the Lambda handlers and the stdio runner's start script.
 */

import { resolve } from "node:path";
import { build } from "esbuild";
import plugins from "./esbuild-plugins.mjs";

const ROOT = resolve(import.meta.dirname, "..");

/** Deployable entries: output name → source. */
export const ENTRIES = {
  "admin/index": "packages/api/src/lambda/admin.ts",
  "gateway/index": "packages/api/src/lambda/gateway.ts",
  "worker/index": "packages/worker/src/lambda.ts",
  "runner/index": "packages/runner/src/main.ts",
} as const;

/** Bundles every entry into `outdir`; returns the output files, their sizes and the source files in each. */
export async function bundleAll(outdir = resolve(ROOT, "dist")) {
  const result = await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([out, src]) => [out, resolve(ROOT, src)])),
    outdir,
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    minify: true,
    sourcemap: false,
    metafile: true,
    plugins,
    outExtension: { ".js": ".mjs" },
    // ESM bundles of CommonJS dependencies still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __mcpgwRequire } from 'node:module'; const require = __mcpgwRequire(import.meta.url);",
    },
    logLevel: "warning",
  });
  return Object.entries(result.metafile.outputs).map(([file, output]) => ({
    file,
    bytes: output.bytes,
    /** Inputs (paths relative to the repository root) that put bytes into this output. */
    inputs: Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([input]) => input),
  }));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const { file, bytes } of await bundleAll()) console.log(`${file}  ${(bytes / 1024).toFixed(0)} KiB`);
}
