/**
 * Per-plane bundles: each deployable entry, bundled as `npm run build` does, holds only its own plane —
 * the admin function no data-plane module, the gateway function no admin one, the worker and the
 * runner no API module at all (read from esbuild's metafile: the source files in each output). A bundle
 * of both the MCP SDK's client and its server holds one copy of each chunk the two packages ship alike
 * (scripts/esbuild-plugins.mjs): the only chunk each keeps a copy of is its own subset of the SDK's
 * protocol core.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAll } from "../../../scripts/build";

let work: string;
const inputs = new Map<string, string[]>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mcpgw-planes-"));
  for (const output of await bundleAll(join(work, "dist"))) {
    const name = /([a-z]+)\/index\.mjs$/.exec(output.file)?.[1];
    if (name) inputs.set(name, output.inputs);
  }
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The bundle's source files under `folder` (a path in the repository). */
const under = (bundle: string, folder: string) =>
  (inputs.get(bundle) ?? []).filter((input) => input.includes(folder));

describe("per-plane bundles", () => {
  it("the admin function's bundle holds the admin plane and no data-plane module", () => {
    expect(under("admin", "packages/api/src/admin/").length).toBeGreaterThan(0);
    expect(under("admin", "packages/api/src/gateway/")).toEqual([]);
    expect(under("admin", "@modelcontextprotocol/server")).toEqual([]);
  });

  it("the gateway function's bundle holds the data plane and no admin module", () => {
    expect(under("gateway", "packages/api/src/gateway/").length).toBeGreaterThan(0);
    expect(under("gateway", "packages/api/src/admin/")).toEqual([]);
  });

  it("a bundle of the SDK's client and server holds one copy of what both ship alike (ajv's validator)", () => {
    for (const bundle of ["gateway", "runner"]) {
      // Chunk names (`ajvProvider-<hash>.mjs` → `ajvProvider`) of the two packages' files in the bundle.
      const chunks = under(bundle, "node_modules/@modelcontextprotocol/")
        .map((input) => /\/(client|server)\/dist\/(?:.*\/)?([\w.-]+?)-[\w-]{8}\.mjs$/.exec(input)?.[2])
        .filter((chunk) => chunk !== undefined);
      const twice = chunks.filter((chunk, index) => chunks.indexOf(chunk) !== index);
      expect(chunks, bundle).toContain("ajvProvider");
      // `src` is each package's own tree-shaken subset of the protocol core: different code, not a copy.
      expect(twice, bundle).toEqual(["src"]);
    }
  });

  it("the worker and the runner hold no API module", () => {
    for (const bundle of ["worker", "runner"]) {
      expect(under(bundle, `packages/${bundle}/`).length, bundle).toBeGreaterThan(0);
      expect(under(bundle, "packages/api/"), bundle).toEqual([]);
    }
  });
});
