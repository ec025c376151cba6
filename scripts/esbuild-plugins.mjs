/**
 * esbuild plugins shared by `npm run build` and SST's bundling (infra: `nodejs.plugins`).
 * zod re-exports every locale (`z.locales`, ~260 KiB minified); the system only uses English, so the
 * locale index resolves to English alone. Error messages are unchanged: zod registers `en` itself.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)
        ? { path: "zod-locales-en", namespace: "zod-english-only", pluginData: args.resolveDir }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: args.pluginData,
      loader: "js",
    }));
  },
};

/**
 * bowser (~34 KiB minified) parses a browser's user agent for the AWS SDK's browser runtime only
 * (`createUserAgentStringParsingProvider`); the Node runtime's clients never call it. It resolves to a
 * stub that parses nothing, as the SDK itself falls back to when bowser has no `parse`.
 */
const noBrowserUserAgent = {
  name: "no-browser-user-agent",
  setup(build) {
    build.onResolve({ filter: /^bowser$/ }, () => ({ path: "bowser", namespace: "no-browser-user-agent" }));
    build.onLoad({ filter: /.*/, namespace: "no-browser-user-agent" }, () => ({
      contents: "module.exports = { parse: () => undefined };",
      loader: "js",
    }));
  },
};

export default [zodEnglishOnly, noBrowserUserAgent];
