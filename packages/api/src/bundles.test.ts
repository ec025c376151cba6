/**
 * Per-plane bundles: each deployable entry, bundled as `npm run build` does, holds only its own plane —
 * the admin function no data-plane module, the gateway function no admin one, the worker and the
 * runner no API module at all (read from esbuild's metafile: the source files in each output). A bundle
 * of both the MCP SDK's client and its server holds one copy of each chunk the two packages ship alike
 * (scripts/esbuild-plugins.mjs): the only chunk each keeps a copy of is its own subset of the SDK's
 * protocol core. No bundle holds ajv, the SDK's default validator, which the system never builds
 * (packages/upstream/src/json-schema.ts). What a plane uses only sometimes is imported on demand
 * (`import()`: esbuild puts it in a lazy chunk), so its cold start does not load it: minisearch (search
 * mode's first search), the OIDC relying party (the first sign-in), jose (the first access token
 * verified) and, in the admin plane, the MCP client (an upstream's authorization).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAll } from "../../../scripts/build";

let work: string;
const inputs = new Map<string, string[]>();
/** The inputs of the files a cold start imports (the entry and its static chunks), and of the lazy ones. */
const staticInputs = new Map<string, string[]>();
const lazyInputs = new Map<string, string[]>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mcpgw-planes-"));
  for (const output of await bundleAll(join(work, "dist"))) {
    const name = /([a-z]+)\/index\.mjs$/.exec(output.file)?.[1];
    if (!name) continue;
    inputs.set(name, output.inputs);
    staticInputs.set(
      name,
      output.staticFiles.flatMap((file) => Object.keys(file.inputs)),
    );
    lazyInputs.set(
      name,
      output.lazy.flatMap((file) => Object.keys(file.inputs)),
    );
  }
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The bundle's source files under `folder` (a path in the repository). */
const under = (bundle: string, folder: string, of = inputs) =>
  (of.get(bundle) ?? []).filter((input) => input.includes(folder));

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

  it("a bundle of the SDK's client and server holds one copy of what both ship alike (the validator)", () => {
    // Chunk names (`cfWorkerProvider-<hash>.mjs` → `cfWorkerProvider`) of the two packages' files in the bundle.
    const chunks = under("gateway", "node_modules/@modelcontextprotocol/")
      .map((input) => /\/(client|server)\/dist\/(?:.*\/)?([\w.-]+?)-[\w-]{8}\.mjs$/.exec(input)?.[2])
      .filter((chunk) => chunk !== undefined);
    const twice = chunks.filter((chunk, index) => chunks.indexOf(chunk) !== index);
    expect(chunks).toContain("cfWorkerProvider");
    // `src` is each package's own tree-shaken subset of the protocol core: different code, not a copy.
    expect(twice).toEqual(["src"]);
  });

  it("the runner holds the SDK's server and, of its client package, only the chunks the server shares", () => {
    const client = under("runner", "node_modules/@modelcontextprotocol/client/");
    expect(under("runner", "node_modules/@modelcontextprotocol/server/").length).toBeGreaterThan(0);
    expect(client.some((input) => input.includes("/cfWorkerProvider-"))).toBe(true);
    // Its index, protocol core and auth (the MCP client proper) stay out: the runner calls no upstream.
    expect(client.filter((input) => /\/dist\/(index|src-|public-)/.test(input))).toEqual([]);
  });

  it("no plane holds ajv, the SDK's default validator: every SDK client and server is given the lighter one", () => {
    for (const bundle of ["admin", "gateway", "worker", "runner"]) {
      expect(inputs.get(bundle)?.length, bundle).toBeGreaterThan(0);
      expect(
        under(bundle, "ajv").filter((input) =>
          /[\\/](ajv|ajv-formats)[\\/]|ajvProvider|ajv-provider/.test(input),
        ),
        bundle,
      ).toEqual([]);
    }
  });

  it("what a plane uses only sometimes is in its lazy chunks, not in what a cold start imports", () => {
    const lazyOnly: Record<string, string[]> = {
      gateway: [
        "node_modules/minisearch/",
        "openid-client/",
        "node_modules/oauth4webapi/",
        "node_modules/jose/",
      ],
      admin: [
        "node_modules/@modelcontextprotocol/client/",
        "openid-client/",
        "node_modules/oauth4webapi/",
        "node_modules/jose/",
      ],
    };
    for (const [bundle, folders] of Object.entries(lazyOnly))
      for (const folder of folders) {
        expect(under(bundle, folder, staticInputs), `${bundle}: ${folder} at a cold start`).toEqual([]);
        expect(under(bundle, folder, lazyInputs).length, `${bundle}: ${folder} lazily`).toBeGreaterThan(0);
      }
  });

  it("the worker and the runner hold no API module", () => {
    for (const bundle of ["worker", "runner"]) {
      expect(under(bundle, `packages/${bundle}/`).length, bundle).toBeGreaterThan(0);
      expect(under(bundle, "packages/api/"), bundle).toEqual([]);
    }
  });
});
