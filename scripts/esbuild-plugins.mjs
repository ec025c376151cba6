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

export default [zodEnglishOnly];
