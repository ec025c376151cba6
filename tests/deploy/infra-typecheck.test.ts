/**
 * sst.config.ts and infra/** type-check for real against SST's platform types (`.sst/platform`, written
 * by `sst install`, which the test runs itself the first time), and the check has teeth: the same
 * infra with one wrong component property fails it.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSstPlatform, SST_OFFLINE_ENV } from "../../scripts/lib/tools";

const ROOT = resolve(import.meta.dirname, "../..");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

/** Runs `tsc -p <project>`; resolves with its exit code and output. */
function typecheck(project: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [TSC, "-p", project, "--pretty", "false"], { cwd: ROOT });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}

/** A copy of the app's infra (config, infra/, types) sharing the installed `.sst` platform. */
function copyInfra(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpgw-infra-"));
  cpSync(join(ROOT, "sst.config.ts"), join(dir, "sst.config.ts"));
  cpSync(join(ROOT, "infra"), join(dir, "infra"), { recursive: true });
  symlinkSync(join(ROOT, ".sst"), join(dir, ".sst"), "dir");
  return dir;
}

function inject(file: string, from: string, to: string): void {
  const text = readFileSync(file, "utf8");
  expect(text, `${file} no longer contains ${from}`).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

describe("infra type-check (tsc -p infra/tsconfig.json over SST's platform types)", () => {
  let copy: string;

  beforeAll(() => {
    ensureSstPlatform(); // first run only: `sst install` from the npm registry
    copy = copyInfra();
  }, 300_000);

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it("passes for the infra as committed", async () => {
    // Act
    const { code, output } = await typecheck(join(ROOT, "infra/tsconfig.json"));

    // Assess
    expect(output).toBe("");
    expect(code).toBe(0);
  }, 120_000);

  it("fails when one component property is wrong (partialResponse for partialResponses)", async () => {
    // Prepare
    inject(join(copy, "infra/worker.ts"), "partialResponses: true", "partialResponse: true");

    // Act
    const { code, output } = await typecheck(join(copy, "infra/tsconfig.json"));

    // Assess
    expect(code).not.toBe(0);
    expect(output).toMatch(/infra\/worker\.ts\(\d+,\d+\): error TS\d+: .*'partialResponse' does not exist/);
  }, 120_000);
});

describe("sst commands that need no AWS account", () => {
  it("run offline of one: `npm run typecheck:infra` installs the platform types itself, with the settings the docs name", () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts;
    expect(scripts["typecheck:infra"]).toMatch(/(^| )tsx scripts\/typecheck-infra\.ts$/);
    expect(readFileSync(join(ROOT, "scripts/typecheck-infra.ts"), "utf8")).toMatch(/^ensureSstPlatform\(/m);
    const docs = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    expect(Object.keys(SST_OFFLINE_ENV).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(SST_OFFLINE_ENV))
      expect(docs).toContain(`\`${name}=${value}\``);
  });
});
