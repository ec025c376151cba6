import type { Context, Hono } from "hono";
import type { AppEnv } from "./env";
import { problemOf } from "./problem";

/** One route path of the app and the methods declared on it. */
interface DeclaredPath {
  pattern: RegExp;
  /** How many of its segments are parameters: a concrete path wins over a templated one. */
  params: number;
  methods: Set<string>;
}

/** A route path (`/v1/servers/:id`) as a pattern matching its concrete paths. */
function pathPattern(path: string): RegExp {
  const segments = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp(`^${segments.join("/")}$`);
}

/**
 * The app's answer to a request no route took: 405 with `Allow` listing the methods declared on its
 * path (GET brings HEAD) when the path is known, else 404. Read from the app's route table once it
 * is complete (the first such request), so every route — documented or not — counts, by itself;
 * handlers that take every method (`app.all`, e.g. the MCP endpoints) answer for themselves.
 * Not Hono's `hono/method-not-allowed`: it lists the union of every pattern the path matches, in
 * registration order (`PUT /v1/servers/import` → `GET, HEAD, PATCH, DELETE, POST`, `/v1/servers/:id`'s
 * methods included), where the path is the concrete resource as OpenAPI matches it (`POST` only).
 */
export function unmatchedRequests(app: Pick<Hono<AppEnv>, "routes">) {
  let declared: DeclaredPath[] | undefined;
  const table = (): DeclaredPath[] => {
    if (declared) return declared;
    const byPath = new Map<string, Set<string>>();
    for (const { method, path } of app.routes) {
      if (method === "ALL") continue; // middleware, and handlers that answer every method themselves
      const methods = byPath.get(path) ?? new Set<string>();
      methods.add(method);
      if (method === "GET") methods.add("HEAD");
      byPath.set(path, methods);
    }
    declared = [...byPath].map(([path, methods]) => ({
      pattern: pathPattern(path),
      params: path.split("/").filter((segment) => segment.startsWith(":")).length,
      methods,
    }));
    return declared;
  };

  return function notFound(c: Context<AppEnv>): Response {
    const matches = table().filter(({ pattern }) => pattern.test(c.req.path));
    if (matches.length === 0) {
      return problemOf(c, "request.not_found", `No route for ${c.req.method} ${c.req.path}.`);
    }
    // As OpenAPI matches paths: `/v1/servers/import` is that resource, not `/v1/servers/{id}`.
    const fewest = Math.min(...matches.map((match) => match.params));
    const allowed = [
      ...new Set(matches.filter((match) => match.params === fewest).flatMap((match) => [...match.methods])),
    ].sort();
    const response = problemOf(
      c,
      "request.method_not_allowed",
      `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(", ")}.`,
      { allow: allowed },
    );
    response.headers.set("allow", allowed.join(", "));
    return response;
  };
}
