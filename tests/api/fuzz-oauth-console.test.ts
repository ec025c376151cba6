/**
 * The routes the OpenAPI document (and so schemathesis) does not cover — the authorization server
 * (`/oauth/*`, `/.well-known/*`), the console's sign-in and sessions (`/console/*`) and the upstream
 * authorization pages — fuzzed: 1,500 requests made by a small seeded generator (deterministic:
 * the seed is in the test's name) with bad percent-escapes, repeated, huge and unicode query values,
 * every method, malformed and deep JSON, wrong content types, hostile cookies and headers, oversized
 * bodies. Not one answer may be a 5xx. Each request comes from its own loopback address, so the
 * per-source limits never stand in front of the code under test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../mcp/helpers";
import { type Stack, startStack } from "../support/stack";

const SEED = 0x23_ba5e;
const REQUESTS = 1_500;
const CONCURRENCY = 6;

/** mulberry32: a tiny deterministic PRNG. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Random = ReturnType<typeof random>;

const ROUTES = [
  "/oauth/register",
  "/oauth/authorize",
  "/oauth/token",
  "/oauth/revoke",
  "/oauth/jwks",
  "/oauth/oidc/callback",
  "/oauth/upstream/callback",
  "/oauth/client-metadata.json",
  "/oauth/",
  "/oauth/%",
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-protected-resource/mcp/{server}",
  "/.well-known/openid-configuration",
  "/console/session",
  "/console/sessions",
  "/console/sign-in",
  "/console/oidc/start",
  "/console/oidc/callback",
  "/console/%E0%A4%A",
] as const;
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "POST", "GET"] as const;
const PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "code_challenge",
  "code_challenge_method",
  "resource",
  "scope",
  "state",
  "code",
  "error",
  "iss",
  "tx",
  "csrf",
] as const;
const FIELDS = [
  ...PARAMS,
  "grant_type",
  "code_verifier",
  "refresh_token",
  "token",
  "step",
  "decision",
  "user",
  "groups",
  "redirect_uris",
  "client_name",
  "grant_types",
  "token_endpoint_auth_method",
  "response_types",
] as const;
/** Written into URLs as they are: escapes a decoder may choke on. */
const BAD_ESCAPES = [
  "%",
  "%E0%A4%A",
  "%zz",
  "%00",
  "%C0%AF",
  "%FF%FE",
  "%%41",
  "%u0041",
  "%E0%80%80",
  "%ED%A0%80",
];
const ODD = [
  "",
  "null",
  "[]",
  "{}",
  "-1",
  "1e309",
  "NaN",
  "true",
  "code",
  "S256",
  "mcp",
  "authorization_code",
  "refresh_token",
  "allow",
  "signin",
  "mgwcl_",
  "mgwcl_x",
  "mgw_x",
  "https://client.test/cimd.json",
  "http://127.0.0.1:9/callback",
  "http://[::1",
  "javascript:alert(1)",
  "../../etc/passwd",
  "é",
  "😀",
  "\u202e\u0000",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
];

/** A string value: odd, long, unicode, or the gateway's own resource with junk after it. */
function value(r: Random, origin: string): string {
  switch (r.int(6)) {
    case 0:
      return r.pick(ODD);
    case 1:
      return r.pick(["a", "é", "😀", "%", "/"]).repeat(1 + r.int(3000));
    case 2:
      return `${origin}/mcp/${r.pick(ODD)}`;
    case 3:
      // Any code point but a lone surrogate (which no client can encode).
      return String.fromCodePoint(
        ...Array.from({ length: 1 + r.int(20) }, () => {
          const point = r.int(0x10ffff - 0x800);
          return point < 0xd800 ? point : point + 0x800;
        }),
      );
    default:
      return Array.from({ length: 1 + r.int(40) }, () => String.fromCharCode(32 + r.int(95))).join("");
  }
}

/** What a well-formed authorization request carries (a registered client, PKCE, a served resource). */
let known: Record<string, string> = {};

/**
 * A query string: half the time a well-formed authorization request with one or two of its values
 * made hostile (so the checks behind the client's are reached), else known names, some repeated,
 * values encoded, raw bad escapes, or junk.
 */
function query(r: Random, origin: string): string {
  const parts: string[] = [];
  if (r.chance(0.5)) {
    const good = Object.entries(known).map(([name, good]) => [name, encodeURIComponent(good)]);
    for (let i = 1 + r.int(2); i > 0; i--) {
      const bad = r.pick(good) as string[];
      bad[1] = r.chance(0.5) ? r.pick(BAD_ESCAPES) : encodeURIComponent(value(r, origin));
      if (bad[0] === "resource" && r.chance(0.5)) bad[1] = `${origin}/mcp/${r.pick(BAD_ESCAPES)}`;
    }
    return `?${good.map(([name, v]) => `${name}=${v}`).join("&")}`;
  }
  for (let i = r.int(8); i > 0; i--) {
    const name = r.chance(0.85) ? r.pick(PARAMS) : r.pick(BAD_ESCAPES);
    const raw = r.chance(0.25) ? r.pick(BAD_ESCAPES) : encodeURIComponent(value(r, origin));
    parts.push(r.chance(0.1) ? name : `${name}=${raw}`);
    if (name === "resource" && r.chance(0.5)) parts.push(`resource=${origin}/mcp/${r.pick(BAD_ESCAPES)}`);
  }
  return parts.length > 0 ? `?${parts.join("&")}` : r.pick(["", "?", "?&&=", "?=%"]);
}

/** A JSON-ish value, sometimes of the wrong type for its field. */
function jsonValue(r: Random, origin: string, depth = 0): unknown {
  switch (r.int(depth > 2 ? 4 : 7)) {
    case 0:
      return value(r, origin);
    case 1:
      return r.pick([0, -1, 1.5, 1e308, null, true, false]);
    case 2:
      return `http://127.0.0.1:${r.int(70_000)}/cb`;
    case 3:
      return r.pick(ODD);
    case 4:
      return Array.from({ length: r.int(12) }, () => jsonValue(r, origin, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: r.int(6) }, () => [r.pick(FIELDS), jsonValue(r, origin, depth + 1)]),
      );
  }
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** A body and its content type: JSON (valid, malformed or deep), a form, junk, or an oversized one. */
function body(r: Random, origin: string): { type: string; body: string } {
  const fields = () =>
    Object.fromEntries(Array.from({ length: r.int(8) }, () => [r.pick(FIELDS), jsonValue(r, origin)]));
  switch (r.int(9)) {
    case 0:
    case 1:
      return { type: "application/json", body: JSON.stringify(fields()) };
    case 2:
      return {
        type: "application/json",
        body: r.pick(["{", "[1,", '"\\u12"', "{'a':1}", "\u0000", "nul", '{"token":', "1".repeat(400)]),
      };
    case 3:
      return { type: "application/json", body: `${"[".repeat(20_000)}${"]".repeat(r.int(2) * 20_000)}` };
    case 4:
    case 5:
      return {
        type: "application/x-www-form-urlencoded",
        body: Object.entries(fields())
          .map(([k, v]) => `${k}=${r.chance(0.2) ? r.pick(BAD_ESCAPES) : encodeURIComponent(String(v))}`)
          .join("&"),
      };
    case 6:
      return {
        type: r.pick([
          "text/plain",
          "multipart/form-data",
          "application/json; charset=utf-16",
          "application/x-www-form-urlencoded; charset=latin1",
          "",
          "application/xml",
          "*/*",
        ]),
        body: r.chance(0.5) ? JSON.stringify(fields()) : value(r, origin),
      };
    case 7:
      return {
        type: "application/x-www-form-urlencoded",
        body: `token=${"x".repeat(20_000 + r.int(50_000))}`,
      };
    default:
      return { type: "application/json", body: JSON.stringify({ token: "x".repeat(1_100_000) }) };
  }
}

/** Headers a hostile client sends: cookies, CSRF tokens, authorization and origin of every kind. */
function headers(r: Random, origin: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (r.chance(0.4)) {
    const name = r.pick(["mgw_console", "mgw_oauth_csrf", "mgw_console_login", "mgw_upstream_auth"]);
    out.cookie = `${name}=${r.pick([encodeURIComponent(value(r, origin)), "x".repeat(4000), "%", ""])}`;
  }
  if (r.chance(0.3)) out["x-csrf-token"] = encodeURIComponent(value(r, origin)).slice(0, 4000);
  if (r.chance(0.3)) {
    out.authorization = r.pick([
      "Bearer",
      `Bearer ${"x".repeat(5000)}`,
      "Bearer mgw_nope",
      "Basic Og==",
      `Bearer ${encodeURIComponent(value(r, origin)).slice(0, 2000)}`,
      "Bearer a.b.c",
    ]);
  }
  if (r.chance(0.3)) out.origin = r.pick(["null", origin, "https://evil.test", "%"]);
  if (r.chance(0.1)) out["x-forwarded-proto"] = r.pick(["https", "http", "gopher", ""]);
  return out;
}

function request(r: Random, origin: string): FuzzRequest {
  const route = r
    .pick(ROUTES)
    .replace("{server}", () =>
      r.chance(0.5) ? r.pick(BAD_ESCAPES) : encodeURIComponent(value(r, origin)).slice(0, 300),
    );
  // A quarter are authorization requests: the route with the most checks behind its front door.
  if (r.chance(0.25))
    return { method: "GET", path: `/oauth/authorize${query(r, origin)}`, headers: headers(r, origin) };
  const method = r.pick(METHODS);
  const out: FuzzRequest = { method, path: `${route}${query(r, origin)}`, headers: headers(r, origin) };
  if (method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && r.chance(0.85)) {
    const made = body(r, origin);
    out.headers["content-type"] = made.type;
    out.body = made.body;
  }
  return out;
}

describe("fuzzing the OAuth, well-known and console routes", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ oauth: true, console: true });
    expect(
      (await stack.call("POST", "/v1/servers", { name: "docs", url: "http://127.0.0.1:9/mcp" })).status,
    ).toBe(201);
    const redirect = "http://127.0.0.1:9/callback";
    const registered = await rawRequest(`${stack.api.url}/oauth/register`, {
      body: { redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"] },
    });
    known = {
      response_type: "code",
      client_id: registered.body.client_id,
      redirect_uri: redirect,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      resource: `${stack.api.url}/mcp/docs`,
      scope: "mcp",
      state: "st",
    };
  });
  afterAll(() => stack?.stop());

  it(`answers ${REQUESTS} generated malformed requests (seed ${SEED.toString(16)}) without one 5xx`, async () => {
    const r = random(SEED);
    const origin = stack.api.url;
    const requests = Array.from({ length: REQUESTS }, () => request(r, origin));
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        const fuzz = requests[index] as FuzzRequest;
        // A source of its own per request: the per-source limits are not what is fuzzed here.
        const localAddress = `127.0.${1 + (index >> 8)}.${1 + (index % 250)}`;
        const what = `${fuzz.method} ${fuzz.path.slice(0, 200)} ${JSON.stringify(fuzz.headers).slice(0, 200)} body ${fuzz.body?.slice(0, 120)}`;
        try {
          const response = await rawRequest(`${origin}${fuzz.path}`, {
            method: fuzz.method,
            headers: fuzz.headers,
            localAddress,
            ...(fuzz.body === undefined ? {} : { rawBody: fuzz.body }),
          });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status >= 500)
            failures.push(`${response.status} ← ${what}: ${response.text.slice(0, 300)}`);
        } catch (error) {
          // A body past the limit may be cut off mid-write once its refusal is sent: not a server error.
          const cut = /EPIPE|ECONNRESET/.test(String((error as { code?: string }).code ?? error));
          if (!(cut && (fuzz.body?.length ?? 0) > 16 * 1024)) failures.push(`${String(error)} ← ${what}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.info("fuzz statuses", Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
    expect(failures).toEqual([]);
    // The generator reached past the routes' front doors: successes and many kinds of refusal.
    expect([...statuses.keys()].filter((status) => status < 300).length).toBeGreaterThan(0);
    expect(statuses.size).toBeGreaterThan(6);
  }, 180_000);
});
