import type { Plugin } from "esbuild";

/** esbuild plugins shared by `npm run build` and SST's bundling. */
declare const plugins: Plugin[];
export default plugins;
