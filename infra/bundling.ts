/**
 * How SST bundles every function: the same esbuild plugins `npm run build` uses (zod's locales trimmed
 * to English, which keeps each handler well under its 1.5 MB budget). Path relative to sst.config.ts.
 */
export const nodejs = { plugins: "./scripts/esbuild-plugins.mjs" };
