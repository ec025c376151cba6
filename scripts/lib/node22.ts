/** Node 22 for scripts and tests: see scripts/node22.mjs, which also runs package.json's scripts on it. */
export { ensureNode22, NODE_FLAGS, NODE_FLOOR, NODE22_VERSION, node22Env, onNode22 } from "../node22.mjs";
