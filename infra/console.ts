/**
 * The admin console's static files: built (Vite) when the stack is deployed, then copied beside the
 * admin function's handler (`copyFiles`), which serves them at `/`. Path relative to sst.config.ts.
 */
import { execFileSync } from "node:child_process";

execFileSync("npm", ["run", "--silent", "build:console"], { stdio: "inherit" });

export const consoleDist = "packages/console/dist";
