/**
 * Node 22 everywhere: the tests run on it (package.json's scripts start through scripts/node22.mjs),
 * every installed package accepts the project's Node floor (so `npm ci` on Node 22 prints no engine
 * warning), and the runner image, the functions and the bundles target the same major.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { NODE_FLOOR, NODE22_VERSION } from "../../scripts/lib/node22";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const major = (version: string) => Number(version.replace(/^v/, "").split(".")[0]);

describe("Node 22 everywhere", () => {
  it("the suites run on Node 22 or later, whatever Node started `npm test`", () => {
    expect(major(process.versions.node)).toBeGreaterThanOrEqual(22);
  });

  it("every package in the lock file accepts the project's Node floor: `npm ci` on it warns of no engine", () => {
    // Prepare
    const floor = JSON.parse(read("package.json")).engines.node as string;
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>;
    };
    const oldest = semver.minVersion(floor)?.version ?? "";

    // Act
    const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!path || !range) return [];
      const accepts = (version: string) => semver.satisfies(version, range, { includePrerelease: true });
      return accepts(oldest) && accepts(NODE22_VERSION) ? [] : [`${path}: ${range}`];
    });

    // Assess
    expect(oldest).toBe(NODE_FLOOR); // the launcher fetches Node 22 below the same floor
    expect(semver.satisfies(NODE22_VERSION, floor)).toBe(true);
    expect(refusing).toEqual([]);
  });

  it("the runner image, the functions and the bundles run the same Node major", () => {
    // Prepare
    const images = [...read("packages/runner/Dockerfile").matchAll(/^FROM node:(\d+)-/gm)].map((m) =>
      Number(m[1]),
    );
    const runtimes = readdirSync(join(ROOT, "infra"))
      .filter((file) => file.endsWith(".ts"))
      .flatMap((file) =>
        [...read(`infra/${file}`).matchAll(/runtime: "nodejs(\d+)\.x"/g)].map((m) => Number(m[1])),
      );
    const targets = [...read("scripts/build.ts").matchAll(/target: "node(\d+)"/g)].map((m) => Number(m[1]));

    // Assess
    expect(images).toEqual([22, 22]);
    expect(runtimes.length).toBeGreaterThan(0);
    expect(new Set([...runtimes, ...targets])).toEqual(new Set([22]));
  });

  it("scripts/node22.mjs runs a command on Node 22 and exits as it exits, a signal's death included", () => {
    // Act
    const version = spawnSync(
      process.execPath,
      ["scripts/node22.mjs", "node", "-p", "process.versions.node"],
      {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    const failing = spawnSync(process.execPath, ["scripts/node22.mjs", "node", "-e", "process.exit(3)"], {
      cwd: ROOT,
      timeout: 20_000,
    });
    // A command killed by a signal fails as a shell reports it (128 + 15), never as a success.
    const killed = spawnSync(process.execPath, ["scripts/node22.mjs", "sh", "-c", "kill -TERM $$"], {
      cwd: ROOT,
      timeout: 20_000,
    });

    // Assess
    expect(major(version.stdout.trim())).toBeGreaterThanOrEqual(22);
    expect(failing.status).toBe(3);
    expect(killed.status).toBe(143);
  });
});
