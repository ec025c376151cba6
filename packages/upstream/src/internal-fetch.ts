import { fetchParts } from "./guard/guarded-fetch";
import { createNodeFetch, type SocketLimits } from "./guard/pinned-fetch";

/**
 * A `fetch` for the deployment's own endpoint, the stdio runner: node:http(s) with DNS as usual (the
 * endpoint is configured, not admin-supplied, so nothing is vetted) and the guarded fetch's per-origin
 * socket caps — every stdio server's calls share the runner's one origin. An aborted request closes
 * its connection, which is how the runner learns that a caller gave up.
 */
export function createInternalFetch(limits: Partial<SocketLimits> = {}): typeof fetch {
  const send = createNodeFetch(limits);
  return async (input, init) => {
    const { url, method, headers, body, signal } = await fetchParts(input, init);
    return send(url, { method, headers, body, signal, redirect: "manual" }, undefined);
  };
}

let shared: typeof fetch | undefined;

/** The process's one internal fetch (one socket pool to the runner, shared by every session). */
export function internalFetch(): typeof fetch {
  shared ??= createInternalFetch();
  return shared;
}
