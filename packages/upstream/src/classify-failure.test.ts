import { SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { classifyFailure, describeFailure, refusalStatus, scrubSecrets } from "./classify-failure";

const SECRET = 'sk-live "quoted"\nline2 / päss 🔑';
const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

describe("scrubSecrets", () => {
  it("redacts the raw and the URL-encoded value", () => {
    const text = `failed: ${SECRET} at https://x.test/?k=${encodeURIComponent(SECRET)}`;

    const scrubbed = scrubSecrets(text, [SECRET]);

    expect(scrubbed).toBe("failed: [REDACTED] at https://x.test/?k=[REDACTED]");
  });

  it("redacts a JSON-serialized object carrying a secret with a quote and a newline", () => {
    // Prepare
    const secret = 'abc"def\nghi';
    const text = `HTTP 400: ${JSON.stringify({ error: "bad key", key: secret })}`;

    // Act
    const scrubbed = scrubSecrets(text, [secret]);

    // Assess
    expect(scrubbed).toBe('HTTP 400: {"error":"bad key","key":"[REDACTED]"}');
  });

  it.each([
    ["JSON.stringify", JSON.stringify(SECRET).slice(1, -1)],
    [
      "non-ASCII as lower-case \\u escapes (Python)",
      String.raw`sk-live \"quoted\"\nline2 / p\u00e4ss \ud83d\udd11`,
    ],
    ["non-ASCII as upper-case \\u escapes", String.raw`sk-live \"quoted\"\nline2 / p\u00E4ss \uD83D\uDD11`],
    [
      "'/' escaped and non-ASCII escaped (PHP)",
      String.raw`sk-live \"quoted\"\nline2 \/ p\u00e4ss \ud83d\udd11`,
    ],
    ["'/' escaped only", String.raw`sk-live \"quoted\"\nline2 \/ päss 🔑`],
  ])("redacts the JSON-escaped form: %s", (_style, escaped) => {
    const scrubbed = scrubSecrets(`{"detail":"${escaped}"}`, [SECRET]);

    expect(scrubbed).toBe('{"detail":"[REDACTED]"}');
  });

  it("redacts Go's HTML-safe JSON escaping of <, > and &", () => {
    const secret = "k=v&x=<y>";

    const scrubbed = scrubSecrets(String.raw`{"q":"k=v\u0026x=\u003cy\u003e"}`, [secret]);

    expect(scrubbed).toBe('{"q":"[REDACTED]"}');
  });

  it.each([SECRET, "hunter2-hunter2", "ab+/cd?>ef~~gh"])(
    "redacts the whole base64 and base64url of %j",
    (secret) => {
      const text = `a=${base64(secret)} b=${base64(secret).replace(/=+$/, "")} c=${base64url(secret)}`;

      const scrubbed = scrubSecrets(text, [secret]);

      expect(scrubbed).toBe("a=[REDACTED] b=[REDACTED] c=[REDACTED]");
    },
  );

  it.each(["", "u", "us", "use", "user", "admin"])(
    'redacts the secret inside HTTP Basic credentials base64("%s:" + secret), at every byte alignment',
    (user) => {
      // Prepare: the secret starts at byte offset user.length + 1 of the encoded credentials.
      const offset = Buffer.byteLength(`${user}:`);
      const credentials = base64(`${user}:${SECRET}`);

      // Act
      const scrubbed = scrubSecrets(`Authorization: Basic ${credentials}`, [SECRET]);

      // Assess: only the base64 groups that straddle the secret's edges may remain.
      const match = /^Authorization: Basic ([A-Za-z0-9+/]*)\[REDACTED\]([A-Za-z0-9+/=]*)$/.exec(scrubbed);
      expect(match, scrubbed).not.toBeNull();
      expect(match?.[1]).toBe(credentials.slice(0, Math.ceil(offset / 3) * 4));
      expect(match?.[2]?.length).toBeLessThanOrEqual(4);
    },
  );

  it("redacts a secret inside a base64url JWT-style payload", () => {
    // Prepare
    const secret = "s3cr3t-api-key-0123456789";
    const payload = base64url(JSON.stringify({ sub: "svc", key: secret, iat: 1_700_000_000 }));
    const text = `invalid token eyJhbGciOiJIUzI1NiJ9.${payload}.c2ln`;

    // Act
    const scrubbed = scrubSecrets(text, [secret]);

    // Assess
    expect(scrubbed).toContain("[REDACTED]");
    expect(scrubbed).not.toContain(payload);
    const remaining = scrubbed.split(".")[1]?.split("[REDACTED]") ?? [];
    expect(Buffer.from(remaining.join(""), "base64url").toString("latin1")).not.toContain("api-key");
  });

  it("redacts encoded forms of the long parts of a value, like the token of a Bearer header", () => {
    const token = "tok_0123456789abcdef";

    const scrubbed = scrubSecrets(`echo ${base64(token)} ${JSON.stringify(`${token}/x`)}`, [
      `Bearer ${token}`,
    ]);

    expect(scrubbed).toBe('echo [REDACTED] "[REDACTED]/x"');
  });

  it("replaces the longest form first, leaving no fragment of a longer secret", () => {
    const scrubbed = scrubSecrets("key=abcdefgh-ijklmnop", ["abcdefgh", "abcdefgh-ijklmnop"]);

    expect(scrubbed).toBe("key=[REDACTED]");
  });

  it("leaves unrelated text and short strings alone", () => {
    // Prepare: "abc" is too short to scrub; "s3cr3t" is scrubbed raw, but its 4-character base64 runs
    // ("M2Ny" from byte 1, "Y3Iz" from byte 2) are too short to scrub on their own.
    const text = "connect ECONNREFUSED 127.0.0.1:443 (abc) M2Ny Y3Iz YWJj";

    // Act
    const scrubbed = scrubSecrets(text, ["abc", "s3cr3t", "unrelated-secret-value"]);

    // Assess
    expect(scrubbed).toBe(text);
    expect(scrubSecrets("token s3cr3t", ["s3cr3t"])).toBe("token [REDACTED]");
  });
});

describe("describeFailure speaks to people", () => {
  it("says what a reply that is not JSON-RPC is, never the validator's dump", () => {
    const zod = Object.assign(new Error('[\n  {\n    "code": "invalid_union",\n    "errors": []\n  }\n]'), {
      name: "ZodError",
    });

    expect(describeFailure(zod)).toBe(
      "the server's reply is not a JSON-RPC message (is this URL an MCP endpoint?)",
    );
    expect(
      describeFailure(new Error(`Version negotiation probe failed: ${zod.message}`, { cause: zod })),
    ).toBe("the server's reply is not a JSON-RPC message (is this URL an MCP endpoint?)");
  });

  it("says so for a reply that is not JSON, and for a body of another kind", () => {
    const syntax = new SyntaxError(`Unexpected token 'o', "not json" is not valid JSON`);
    const html = new Error("Streamable HTTP error: Unexpected content type: text/html");

    expect(describeFailure(syntax)).toBe(
      "the server's reply is not valid JSON (is this URL an MCP endpoint?)",
    );
    expect(describeFailure(html)).toBe(
      "the server answered with text/html, not MCP (is this URL an MCP endpoint?)",
    );
  });

  it("keeps other errors' own words and causes", () => {
    const error = new Error("fetch failed", {
      cause: Object.assign(new Error("connect refused"), { code: "ECONNREFUSED" }),
    });

    expect(describeFailure(error)).toBe("fetch failed: connect refused (ECONNREFUSED)");
  });

  it("says why an HTTP refusal came: the problem's detail, a JSON-RPC error's message, or the text", () => {
    const refusal = (status: number, text: string) =>
      new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `HTTP ${status}`, { status, text });
    const problem = JSON.stringify({ type: "about:blank", status: 502, detail: "the child did not start" });
    const rpc = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } });

    expect(describeFailure(refusal(502, problem))).toBe("HTTP 502: the child did not start");
    expect(describeFailure(refusal(400, rpc))).toBe("HTTP 400: no session");
    expect(describeFailure(refusal(500, `<html>\n  ${"x".repeat(1_000)}`))).toHaveLength(
      "HTTP 500: ".length + 300,
    );
  });
});

describe("classifyFailure", () => {
  const refusal = (status: number) =>
    new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `HTTP ${status}`, { status, text: "" });

  it("reads an HTTP refusal: 401/403 denied, 504 not responding, other statuses failed", () => {
    expect(classifyFailure(refusal(401))).toBe("access_denied");
    expect(classifyFailure(refusal(403))).toBe("access_denied");
    expect(classifyFailure(refusal(504))).toBe("not_responding");
    expect(classifyFailure(refusal(502))).toBe("failed");
  });

  it("reads the status of a refusal anywhere in the causes: a token refused is 401, a scope refused 403", () => {
    expect(refusalStatus(new Error("wrapped", { cause: refusal(401) }))).toBe(401);
    expect(refusalStatus(Object.assign(new Error("nope"), { name: "UnauthorizedError" }))).toBe(401);
    // The SDK's InsufficientScopeError: a 403 challenge naming the scope the resource wants.
    const scope = new Error('Insufficient scope: required "mcp admin"');
    expect(refusalStatus(scope)).toBe(403);
    expect(classifyFailure(scope)).toBe("access_denied");
    expect(refusalStatus(new Error("socket hang up"))).toBeUndefined();
  });
});
