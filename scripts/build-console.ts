/**
 * `npm run build:console`: the admin console's static files into packages/console/dist, when they are
 * missing or older than the sources (`--force`: always).
 */
import { buildConsole, ensureConsoleBuilt } from "./lib/console";

const dir = process.argv.includes("--force") ? await buildConsole() : await ensureConsoleBuilt();
console.log(`console in ${dir}`);
