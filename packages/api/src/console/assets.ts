/**
 * The console's built files (`packages/console/dist`: `index.html` and content-hashed `assets/*`),
 * read once into memory: a few hundred kB, served with the headers each kind needs.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative } from "node:path";

/** One file of the console, ready to serve. */
export interface ConsoleFile {
  body: Uint8Array;
  type: string;
  /** Hashed assets never change under their name; the page itself is checked every time. */
  cacheControl: string;
}

/** The console's files by URL path (`/` for the page). */
export type ConsoleAssets = Map<string, ConsoleFile>;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * A strict Content-Security-Policy for every console response: scripts, styles and connections from
 * this origin only, nothing inline, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Reads a built console directory; undefined when it has no `index.html` (not built). */
export function loadConsoleAssets(dir: string): ConsoleAssets | undefined {
  let names: string[];
  try {
    names = listFiles(dir);
  } catch {
    return undefined;
  }
  if (!names.includes("index.html")) return undefined;
  const assets: ConsoleAssets = new Map();
  for (const name of names) {
    const immutable = name.startsWith("assets/");
    assets.set(name === "index.html" ? "/" : `/${name}`, {
      body: readFileSync(join(dir, name)),
      type: TYPES[extname(name)] ?? "application/octet-stream",
      cacheControl: immutable ? "public, max-age=31536000, immutable" : "no-cache",
    });
  }
  return assets;
}

function listFiles(dir: string, root = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory()
      ? listFiles(path, root)
      : [relative(root, path).split("\\").join("/")];
  });
}
