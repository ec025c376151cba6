/**
 * Configuration fails fast: `npm run dev` (and the runner's own process) given a bad value stops at
 * start — before the emulator or anything else — with the variable's name, instead of misbehaving later.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function start(entry: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ["--import", "tsx", resolve(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
}

describe("configuration that fails fast", () => {
  it.each([
    ["scripts/dev.ts", "SWEEP_INTERVAL_SECONDS", "soon"],
    ["scripts/dev.ts", "PORT", "eighty"],
    ["packages/runner/src/main.ts", "RUNNER_MAX_CHILDREN", "many"],
  ])(
    "%s with %s=%s exits 2 naming the variable",
    (entry, name, value) => {
      const result = start(entry, { [name]: value, RUNNER_TOKEN: "t" });

      expect(result.status).toBe(2);
      expect(result.stderr).toContain(`${name} must be a whole number`);
      expect(result.stderr).toContain(`(got '${value}')`);
      expect(result.stdout).not.toContain("ready");
    },
    40_000,
  );

  it("npm run dev with a plain-http OpenID issuer off this machine exits 2 naming OIDC_ISSUER", () => {
    const result = start("scripts/dev.ts", {
      OIDC_ISSUER: "http://idp.example.com",
      OIDC_CLIENT_ID: "gw",
      RUNNER_TOKEN: "t",
    });

    expect(result.status).toBe(2);
    expect(result.stderr).toContain("OIDC_ISSUER must be https (http only on a loopback host)");
    expect(result.stdout).not.toContain("ready");
  }, 40_000);
});
