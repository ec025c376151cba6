/**
 * The figures the docs quote come from `npm run docs:figures` (scripts/docs-figures.ts): the block in
 * docs/architecture.md is exactly what docs/figures.json renders to, every figure there is within
 * TOLERANCE of a fresh measurement, and no other measured size is written in the docs by hand.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  currentBlock,
  FIGURES_DOC,
  FIGURES_JSON,
  type Figures,
  measureFigures,
  renderBlock,
  TOLERANCE,
} from "../../scripts/docs-figures";

const ROOT = resolve(import.meta.dirname, "../..");
const documented = JSON.parse(readFileSync(FIGURES_JSON, "utf8")) as Figures;

/** Every number in a figures record, by its path (`console.jsGzip`, `bundles.admin.bytes`). */
function flatten(value: unknown, path = ""): Array<[string, number]> {
  if (typeof value === "number") return [[path, value]];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) =>
    flatten(inner, path ? `${path}.${key}` : key),
  );
}

describe("documented figures", () => {
  it("the block in the docs is what docs/figures.json renders to (run `npm run docs:figures`)", () => {
    expect(currentBlock(readFileSync(FIGURES_DOC, "utf8"))).toBe(renderBlock(documented));
  });

  it(`every figure is within ${TOLERANCE * 100}% of the build as it is now`, {
    timeout: 120_000,
  }, async () => {
    const measured = new Map(flatten(await measureFigures()));
    const expected = flatten(documented);
    expect([...measured.keys()].sort(), "the figures measured").toEqual(
      expected.map(([path]) => path).sort(),
    );
    for (const [path, value] of expected) {
      const now = measured.get(path) ?? Number.NaN;
      const drift = Math.abs(now - value) / value;
      expect(
        drift,
        `${path}: documented ${value}, measured ${now}; run \`npm run docs:figures\``,
      ).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it("no measured size is written by hand outside the block", () => {
    const docs = [
      join(ROOT, "README.md"),
      ...readdirSync(join(ROOT, "docs"))
        .filter((name) => name.endsWith(".md"))
        .map((name) => join(ROOT, "docs", name)),
    ];
    // The figures' form (one decimal, kB or MB). Limits are written otherwise (16 MiB, 5 KB).
    const FIGURE = /\b\d+\.\d+ ?(kB|MB)\b/g;
    const stray: string[] = [];
    for (const file of docs) {
      const text = readFileSync(file, "utf8");
      const block = currentBlock(text);
      const outside = block ? text.replace(block, "") : text;
      for (const match of outside.matchAll(FIGURE)) stray.push(`${file.slice(ROOT.length + 1)}: ${match[0]}`);
    }
    expect(stray, "sizes in the docs that npm run docs:figures did not write").toEqual([]);
  });
});
