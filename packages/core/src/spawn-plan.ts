/**
 * How a stdio server's child process is started: argv (never a shell line) and an environment built
 * from an allow-list plus the configured env, with `{{secret_file}}` and `{{worktree_root}}` filled in.
 */

/** Variables a child may inherit from the runner; nothing else of the runner's own is passed on. */
export const INHERITED_ENV_VARS = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"] as const;

/** The placeholders a stdio config may use in args and env values. */
export const SECRET_FILE_PLACEHOLDER = "{{secret_file}}";
export const WORKTREE_ROOT_PLACEHOLDER = "{{worktree_root}}";

export interface SpawnInputs {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The runner's own environment, of which only INHERITED_ENV_VARS are read. */
  runnerEnv: Record<string, string | undefined>;
  /** The per-instance temp dir, the child's HOME and TMPDIR. */
  home: string;
  /** A shared package-manager cache, so `npx`/`uvx` need not download every spawn. */
  cacheDir?: string;
  secretFile?: string;
  worktreeRoot?: string;
}

export interface SpawnPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The argv and environment of one spawn. */
export function planSpawn(inputs: SpawnInputs): SpawnPlan {
  const fill = (value: string) => substitute(value, inputs);
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV_VARS) {
    const value = inputs.runnerEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME = inputs.home;
  env.TMPDIR = inputs.home;
  if (inputs.cacheDir) {
    env.npm_config_cache = inputs.cacheDir;
    env.UV_CACHE_DIR = inputs.cacheDir;
  }
  for (const [name, value] of Object.entries(inputs.env)) env[name] = fill(value);
  return { command: fill(inputs.command), args: inputs.args.map(fill), env };
}

function substitute(value: string, inputs: SpawnInputs): string {
  let result = value;
  if (inputs.secretFile !== undefined) result = result.split(SECRET_FILE_PLACEHOLDER).join(inputs.secretFile);
  if (inputs.worktreeRoot !== undefined)
    result = result.split(WORKTREE_ROOT_PLACEHOLDER).join(inputs.worktreeRoot);
  return result;
}
