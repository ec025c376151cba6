/**
 * `npm run typecheck:infra`: sst.config.ts and infra/** against SST's platform types, which
 * `sst install` fetches from the npm registry first if they are missing (no AWS account needed).
 */
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { ensureSstPlatform } from "./lib/tools";

const ROOT = resolve(import.meta.dirname, "..");

ensureSstPlatform((line) => console.error(line));
const tsc = spawnSync(
  process.execPath,
  [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "infra/tsconfig.json")],
  { cwd: ROOT, stdio: "inherit" },
);
process.exit(tsc.status ?? 1);
