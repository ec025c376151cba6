/** The Node release fetched when the running Node is older than NODE_FLOOR. */
export declare const NODE22_VERSION: string;
/** The oldest Node the project runs on: package.json's `engines` says the same. */
export declare const NODE_FLOOR: string;
/** True when this process already runs on NODE_FLOOR or later. */
export declare function onNode22(): boolean;
/** The path of a Node 22 binary: this process's own on Node 22 or later, else the fetched one. */
export declare function ensureNode22(): string;
/** The flag every deployed process runs with (infra/bundling.ts's NODE_OPTIONS). */
export declare const NODE_FLAGS: string;
/** `env` with Node 22's directory first on PATH (on an older Node) and NODE_FLAGS in NODE_OPTIONS. */
export declare function node22Env(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
