/**
 * `npm run build`: bundles each deployable entry the way SST does (esbuild, ESM, Node 22 target, ESM
 * builds of dependencies first, names kept, minified, code splitting on — `nodejs.splitting` in infra/bundling.ts) into dist/<name>/: the Lambda
 * handlers and the stdio runner's start script. Each entry is bundled on its own, as SST bundles each
 * function, so a handler's directory (index.mjs and its chunks) is what deploys.
 */

import { basename, dirname, relative, resolve } from "node:path";
import { build, type Metafile } from "esbuild";
import plugins from "./esbuild-plugins.mjs";

const ROOT = resolve(import.meta.dirname, "..");

/** Deployable entries: output name → source. */
export const ENTRIES = {
  admin: "packages/api/src/lambda/admin.ts",
  gateway: "packages/api/src/lambda/gateway.ts",
  worker: "packages/worker/src/lambda.ts",
  runner: "packages/runner/src/main.ts",
} as const;

/** One output file of a bundle. */
export interface BundleFile {
  file: string;
  bytes: number;
  /** Inputs (paths relative to the repository root) → the bytes each put into this file. */
  inputs: Record<string, number>;
}

/** One deployable entry, bundled into its own directory. */
export interface Bundle {
  name: keyof typeof ENTRIES;
  /** The directory that deploys: `file` and every chunk. */
  dir: string;
  /** The entry, `<dir>/index.mjs`. */
  file: string;
  /** The entry's own bytes. */
  bytes: number;
  /** The entry and the chunks it imports statically, transitively: what a cold start loads. */
  staticFiles: BundleFile[];
  staticBytes: number;
  /** Chunks reached only through `import()`: loaded when first needed. */
  lazy: BundleFile[];
  /** Inputs (paths relative to the repository root) that put bytes into any of the bundle's files. */
  inputs: string[];
}

/** The output files reachable from `from` through imports of `kind`, `from` included. */
function reachable(
  outputs: Metafile["outputs"],
  from: string[],
  kind: "import-statement" | "any",
): Set<string> {
  const seen = new Set<string>();
  const next = [...from];
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    const output = outputs[file];
    if (seen.has(file) || !output) continue;
    seen.add(file);
    for (const imported of output.imports)
      if (!imported.external && (kind === "any" || imported.kind === kind)) next.push(imported.path);
  }
  return seen;
}

/** Bundles `name` into `<outdir>/<name>/` with code splitting; sizes read from esbuild's metafile. */
export async function bundleOne(name: keyof typeof ENTRIES, outdir = resolve(ROOT, "dist")): Promise<Bundle> {
  const dir = resolve(outdir, name);
  const { metafile } = await build({
    entryPoints: { index: resolve(ROOT, ENTRIES[name]) },
    outdir: dir,
    bundle: true,
    splitting: true,
    platform: "node",
    target: "node22",
    format: "esm",
    // As SST's Node runtime bundles a function: ESM builds of dependencies first (the AWS SDK's load
    // its credential providers lazily; its CommonJS builds load them all at once), names kept.
    mainFields: ["module", "main"],
    keepNames: true,
    minify: true,
    sourcemap: false,
    metafile: true,
    plugins,
    outExtension: { ".js": ".mjs" },
    // ESM bundles of CommonJS dependencies still call require() for Node built-ins; esbuild puts the
    // banner at the top of every output file, the chunks included.
    banner: {
      js: "import { createRequire as __mcpgwRequire } from 'node:module'; const require = __mcpgwRequire(import.meta.url);",
    },
    logLevel: "warning",
  });
  // Metafile paths are relative to the working directory.
  const absolute = (file: string) => resolve(process.cwd(), file);
  const entry = Object.keys(metafile.outputs).find((file) => basename(file) === "index.mjs");
  if (!entry) throw new Error(`esbuild wrote no index.mjs for ${name}`);
  const files = (set: Iterable<string>): BundleFile[] =>
    [...set].map((file) => ({
      file: absolute(file),
      bytes: metafile.outputs[file]?.bytes ?? 0,
      inputs: Object.fromEntries(
        Object.entries(metafile.outputs[file]?.inputs ?? {})
          .filter(([, input]) => input.bytesInOutput > 0)
          .map(([input, { bytesInOutput }]) => [input, bytesInOutput]),
      ),
    }));
  const staticSet = reachable(metafile.outputs, [entry], "import-statement");
  const all = reachable(metafile.outputs, [entry], "any");
  const staticFiles = files(staticSet);
  const lazy = files([...all].filter((file) => !staticSet.has(file)));
  return {
    name,
    dir,
    file: absolute(entry),
    bytes: metafile.outputs[entry]?.bytes ?? 0,
    staticFiles,
    staticBytes: staticFiles.reduce((sum, { bytes }) => sum + bytes, 0),
    lazy,
    inputs: [...new Set([...staticFiles, ...lazy].flatMap((output) => Object.keys(output.inputs)))],
  };
}

/** Bundles every entry, each on its own, into `<outdir>/<name>/`. */
export async function bundleAll(outdir = resolve(ROOT, "dist")): Promise<Bundle[]> {
  return Promise.all(
    (Object.keys(ENTRIES) as Array<keyof typeof ENTRIES>).map((name) => bundleOne(name, outdir)),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  for (const bundle of await bundleAll()) {
    const lazy = bundle.lazy.map(({ file, bytes }) => `${relative(dirname(bundle.file), file)} ${kb(bytes)}`);
    console.log(`${bundle.name}/  static ${kb(bundle.staticBytes)}  lazy: ${lazy.join(", ") || "none"}`);
  }
}
