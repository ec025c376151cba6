/**
 * The headless Chromium the browser tests and `npm run screenshots` drive: the one `@sparticuz/chromium`
 * ships inside its npm package (nothing is downloaded). The package unpacks it into the temp dir on
 * first use, and two processes unpacking at once break each other; so it unpacks into a private
 * staging dir that is then renamed into a cache dir per version and user — done once, race-safe.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** The path of the Chromium executable, unpacked on first use. */
export async function chromiumPath(): Promise<string> {
  const packageDir = join(dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..");
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  const cache = join(tmpdir(), `mcpgw-chromium-${version}-${process.getuid?.() ?? 0}`);
  const executable = join(cache, "chromium");
  if (existsSync(executable)) return executable;
  const staging = mkdtempSync(`${cache}.tmp-`);
  const saved = process.env.TMPDIR;
  // The package unpacks into os.tmpdir(): pointed at the staging dir for the unpacking only.
  process.env.TMPDIR = staging;
  try {
    const { default: chromium } = await import("@sparticuz/chromium");
    await chromium.executablePath(join(packageDir, "bin"));
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  try {
    renameSync(staging, cache);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process got there first
  }
  return executable;
}
