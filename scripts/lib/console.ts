/**
 * The admin console's build (Vite): `packages/console/dist`, made when it is missing or older than its
 * sources — by `npm run dev`, the tests' global setup, `npm run build:console` and the deploy. Built
 * beside the old files and swapped in with renames, so a reader never sees a half-written console.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "vite";

const ROOT = resolve(import.meta.dirname, "../..");
const CONSOLE = join(ROOT, "packages/console");
/** Where the built console is: what the admin plane serves. */
export const CONSOLE_DIST = join(CONSOLE, "dist");

/** Builds the console when its build is missing or stale; answers where it is. */
export async function ensureConsoleBuilt(log: (line: string) => void = () => {}): Promise<string> {
  if (!isStale()) return CONSOLE_DIST;
  log("building the admin console (vite)");
  return buildConsole();
}

/** Builds the console now. */
export async function buildConsole(): Promise<string> {
  const staging = mkdtempSync(join(CONSOLE, ".dist-"));
  try {
    await build({
      configFile: join(CONSOLE, "vite.config.ts"),
      mode: "production",
      build: { outDir: staging, emptyOutDir: true },
      logLevel: "warn",
    });
    chmodSync(staging, 0o755); // made 0700 by mkdtemp; the files are public
    const old = `${staging}-old`;
    if (existsSync(CONSOLE_DIST)) renameSync(CONSOLE_DIST, old);
    renameSync(staging, CONSOLE_DIST);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return CONSOLE_DIST;
}

function isStale(): boolean {
  const index = join(CONSOLE_DIST, "index.html");
  if (!existsSync(index)) return true;
  const builtAt = statSync(index).mtimeMs;
  const sources = [
    join(CONSOLE, "index.html"),
    join(CONSOLE, "vite.config.ts"),
    ...files(join(CONSOLE, "src")),
  ];
  return sources.some((file) => statSync(file).mtimeMs > builtAt);
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}
