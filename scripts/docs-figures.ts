/**
 * `npm run docs:figures`: measures the figures the docs quote and writes them to docs/figures.json and
 * to the marked block (`<!-- figures:begin -->` … `<!-- figures:end -->`) in docs/architecture.md.
 * Figures: the admin console's JavaScript and CSS, gzipped (a Vite build, as `npm run build:console`
 * makes it), and each deployable bundle's bytes and gzip (esbuild, as `npm run build` makes them).
 * Builds into temporary directories: packages/console/dist and dist/ are left alone.
 * tests/docs/figures.test.ts measures again and fails when the docs and the code disagree.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "vite";
import { bundleAll } from "./build";

const ROOT = resolve(import.meta.dirname, "..");
/** Where the figures are kept, and the doc that shows them. */
export const FIGURES_JSON = join(ROOT, "docs/figures.json");
export const FIGURES_DOC = join(ROOT, "docs/architecture.md");
export const BEGIN = "<!-- figures:begin -->";
export const END = "<!-- figures:end -->";
/** How far a measured byte count may drift from the documented one before the test fails. */
export const TOLERANCE = 0.05;

export interface Figures {
  console: { jsBytes: number; jsGzip: number; cssBytes: number; cssGzip: number };
  bundles: Record<string, { bytes: number; gzip: number }>;
}

/** The console's built files, summed by kind (every file under `assets/`). */
export async function measureConsole(): Promise<Figures["console"]> {
  const out = mkdtempSync(join(tmpdir(), "mcpgw-figures-console-"));
  try {
    await build({
      configFile: join(ROOT, "packages/console/vite.config.ts"),
      mode: "production",
      build: { outDir: out, emptyOutDir: true },
      logLevel: "warn",
    });
    const sum = { jsBytes: 0, jsGzip: 0, cssBytes: 0, cssGzip: 0 };
    for (const name of readdirSync(join(out, "assets"))) {
      const bytes = readFileSync(join(out, "assets", name));
      const kind = name.endsWith(".js") ? "js" : name.endsWith(".css") ? "css" : undefined;
      if (!kind) continue;
      sum[`${kind}Bytes`] += bytes.byteLength;
      sum[`${kind}Gzip`] += gzipSync(bytes).byteLength;
    }
    return sum;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Each deployable bundle (admin, gateway, worker, runner): bytes and gzip of what a cold start imports. */
export async function measureBundles(): Promise<Figures["bundles"]> {
  const out = mkdtempSync(join(tmpdir(), "mcpgw-figures-bundles-"));
  try {
    const bundles: Figures["bundles"] = {};
    for (const { name, staticBytes, staticFiles } of await bundleAll(out)) {
      const gzip = staticFiles.reduce((sum, { file }) => sum + gzipSync(readFileSync(file)).byteLength, 0);
      bundles[name] = { bytes: staticBytes, gzip };
    }
    return Object.fromEntries(Object.entries(bundles).sort(([a], [b]) => a.localeCompare(b)));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export async function measureFigures(): Promise<Figures> {
  return { console: await measureConsole(), bundles: await measureBundles() };
}

/** Bytes as the docs print them: kB or MB (powers of 1,000), one decimal. */
export function formatBytes(bytes: number): string {
  return bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The markdown between the markers: what docs/figures.json holds, as a table. */
export function renderBlock(figures: Figures): string {
  const rows = [
    `| admin console, JavaScript | ${formatBytes(figures.console.jsBytes)} | ${formatBytes(figures.console.jsGzip)} |`,
    `| admin console, CSS | ${formatBytes(figures.console.cssBytes)} | ${formatBytes(figures.console.cssGzip)} |`,
    ...Object.entries(figures.bundles).map(
      ([name, { bytes, gzip }]) =>
        `| \`${name}\` bundle (\`dist/${name}/\`, statically imported) | ${formatBytes(bytes)} | ${formatBytes(gzip)} |`,
    ),
  ];
  return [
    BEGIN,
    "<!-- written by `npm run docs:figures` from docs/figures.json; do not edit by hand -->",
    "",
    "| what | minified | gzipped |",
    "| --- | ---: | ---: |",
    ...rows,
    END,
  ].join("\n");
}

/** The block as it stands in `doc`, markers included; undefined when the markers are missing. */
export function currentBlock(doc: string): string | undefined {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start, end + END.length);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const figures = await measureFigures();
  writeFileSync(FIGURES_JSON, `${JSON.stringify(figures, null, 2)}\n`);
  const doc = readFileSync(FIGURES_DOC, "utf8");
  const block = currentBlock(doc);
  if (!block) throw new Error(`${FIGURES_DOC} has no ${BEGIN} … ${END} block`);
  writeFileSync(FIGURES_DOC, doc.replace(block, renderBlock(figures)));
  console.log(renderBlock(figures));
}
