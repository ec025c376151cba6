/**
 * How SST bundles every function: the same esbuild plugins `npm run build` uses (zod's locales trimmed
 * to English, which keeps each handler well under its 1.5 MB budget; one copy of the chunks the MCP
 * SDK's client and server both ship; the SDK's lighter JSON Schema validator as its default, never
 * ajv), and code splitting: what a handler
 * loads only through `import()` (the OTLP exporters, when OTEL_EXPORTER_OTLP_ENDPOINT is set) is a
 * chunk of its own, outside the cold start. Path relative to sst.config.ts.
 */
export const nodejs = { plugins: "./scripts/esbuild-plugins.mjs", splitting: true };

/**
 * Node flags for every deployed process. AsyncLocalStorage (OpenTelemetry's context manager) on Node 22
 * runs a promise hook on every promise the process makes; `--experimental-async-context-frame` (Node
 * 24's default) carries the context with the promise instead, which takes that cost off every call
 * (`npm run bench -- proxy`). Lambda reads NODE_OPTIONS; the runner's image passes the flag to `node`.
 */
export const NODE_OPTIONS = "--experimental-async-context-frame";
