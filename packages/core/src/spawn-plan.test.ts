import { describe, expect, it } from "vitest";
import { INHERITED_ENV_VARS, planSpawn, type SpawnInputs } from "./spawn-plan";

/** A runner environment full of things no child may see, plus the allow-listed ones. */
const RUNNER_ENV: Record<string, string | undefined> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_CTYPE: "C.UTF-8",
  TERM: "xterm",
  TZ: "UTC",
  HOME: "/root",
  TMPDIR: "/tmp",
  USER: "root",
  AWS_ACCESS_KEY_ID: "AKIASENTINEL",
  AWS_SECRET_ACCESS_KEY: "aws-secret-sentinel",
  AWS_SESSION_TOKEN: "aws-session-sentinel",
  AWS_ENDPOINT_URL: "http://127.0.0.1:5000",
  AWS_CONTAINER_CREDENTIALS_FULL_URI: "http://169.254.170.23/v1/credentials",
  ECS_CONTAINER_METADATA_URI_V4: "http://169.254.170.2/v4/abc",
  ADMIN_TOKEN: "admin-token-sentinel",
  RUNNER_TOKEN: "runner-token-sentinel",
  NODE_OPTIONS: "--require /evil.js",
  npm_config_userconfig: "/root/.npmrc",
  SST_RESOURCE_App: '{"name":"mcp"}',
  UNSET: undefined,
};

function plan(overrides: Partial<SpawnInputs> = {}) {
  return planSpawn({
    command: "npx",
    args: ["-y", "some-server"],
    env: {},
    runnerEnv: RUNNER_ENV,
    home: "/tmp/mcpgw-runner/mcpgw-abc",
    ...overrides,
  });
}

describe("planSpawn", () => {
  it("passes on only the allow-listed runner variables, with HOME and TMPDIR set to the instance dir", () => {
    const { env } = plan();
    expect(env).toEqual({
      PATH: "/usr/local/bin:/usr/bin:/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      LC_CTYPE: "C.UTF-8",
      TERM: "xterm",
      TZ: "UTC",
      HOME: "/tmp/mcpgw-runner/mcpgw-abc",
      TMPDIR: "/tmp/mcpgw-runner/mcpgw-abc",
    });
    const sentinels = Object.entries(RUNNER_ENV)
      .filter(([name]) => !(INHERITED_ENV_VARS as readonly string[]).includes(name))
      .map(([, value]) => value)
      .filter((value): value is string => value !== undefined && !value.startsWith("/"));
    for (const value of sentinels) expect(JSON.stringify(env)).not.toContain(value);
  });

  it("leaves out allow-listed variables the runner does not have", () => {
    const { env } = plan({ runnerEnv: { PATH: "/bin" } });
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/tmp/mcpgw-runner/mcpgw-abc",
      TMPDIR: "/tmp/mcpgw-runner/mcpgw-abc",
    });
  });

  it("adds the configured env on top (it may override an inherited variable)", () => {
    const { env } = plan({ env: { API_KEY: "k-1", PATH: "/opt/bin" } });
    expect(env.API_KEY).toBe("k-1");
    expect(env.PATH).toBe("/opt/bin");
  });

  it("points npm and uv at a shared cache when there is one", () => {
    expect(plan({ cacheDir: "/var/cache/mcpgw" }).env).toMatchObject({
      npm_config_cache: "/var/cache/mcpgw",
      UV_CACHE_DIR: "/var/cache/mcpgw",
    });
    expect(plan().env).not.toHaveProperty("npm_config_cache");
  });

  it("keeps argv an array: arguments with spaces and shell characters are passed as they are", () => {
    const args = ["--flag", "a b; rm -rf / && echo $(id)", "'quoted'"];
    expect(plan({ args })).toMatchObject({ command: "npx", args });
  });

  it("substitutes {{secret_file}} and {{worktree_root}} everywhere, every occurrence", () => {
    const result = plan({
      command: "{{worktree_root}}/bin/server",
      args: ["--config={{secret_file}}", "{{worktree_root}}", "{{worktree_root}}:{{worktree_root}}"],
      env: { SECRETS: "{{secret_file}}", ROOT: "x={{worktree_root}}", PLAIN: "{{other}}" },
      secretFile: "/tmp/home/secret-1.env",
      worktreeRoot: "/work/tree",
    });
    expect(result.command).toBe("/work/tree/bin/server");
    expect(result.args).toEqual(["--config=/tmp/home/secret-1.env", "/work/tree", "/work/tree:/work/tree"]);
    expect(result.env).toMatchObject({
      SECRETS: "/tmp/home/secret-1.env",
      ROOT: "x=/work/tree",
      PLAIN: "{{other}}",
    });
  });

  it("does not substitute into substituted text (a worktree path containing a placeholder stays literal)", () => {
    const result = plan({
      args: ["{{worktree_root}}"],
      secretFile: "/tmp/home/secret.env",
      worktreeRoot: "/weird/{{secret_file}}",
    });
    expect(result.args).toEqual(["/weird/{{secret_file}}"]);
  });

  it("leaves placeholders alone when there is nothing to put there", () => {
    const result = plan({ args: ["{{secret_file}}", "{{worktree_root}}"] });
    expect(result.args).toEqual(["{{secret_file}}", "{{worktree_root}}"]);
  });

  it("does not substitute into the inherited runner variables", () => {
    const result = plan({
      runnerEnv: { PATH: "{{secret_file}}" },
      secretFile: "/tmp/s",
    });
    expect(result.env.PATH).toBe("{{secret_file}}");
  });
});
