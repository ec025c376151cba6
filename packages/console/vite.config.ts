import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The console's build: `index.html` and content-hashed `assets/*` in `dist/`, served by the admin
 * function at `/`. Preact's JSX through Vite's own transformer: no plugin.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  logLevel: "warn",
  // Production JSX whatever NODE_ENV says (vitest sets it to "test"): no source paths in the bundle.
  mode: "production",
  oxc: { jsx: { runtime: "automatic", importSource: "preact", development: false } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    // No inline scripts or module-preload polyfill: the page's CSP allows scripts from 'self' only.
    modulePreload: false,
    assetsInlineLimit: 0,
    target: "es2022",
  },
});
