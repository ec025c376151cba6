import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeIssues, problemLine } from "./errors";
import {
  HttpServerSpec,
  isPerCaller,
  isPerUser,
  SECRET_FORMATS,
  ServerPatch,
  ServerSpec,
  StdioServerSpec,
  upstreamAuthKey,
  upstreamAuthOf,
} from "./server";

/** The `path: message` lines for an input ServerSpec rejects (fails the test if it is accepted). */
function problemsOf(input: unknown): string[] {
  const result = ServerSpec.safeParse(input);
  if (result.success) throw new Error(`expected a rejection, got ${JSON.stringify(result.data)}`);
  return describeIssues(result.error.issues).map(problemLine);
}

const HTTP = { name: "remote", url: "https://mcp.example.com/mcp" };
const STDIO = { name: "local", command: "npx" };

describe("ServerSpec transport", () => {
  it("infers http from a url and fills in the defaults", () => {
    // Prepare
    const input = { name: "remote", url: "https://mcp.example.com/mcp" };

    // Act
    const spec = ServerSpec.parse(input);

    // Assess
    expect(spec).toStrictEqual({
      transport: "http",
      name: "remote",
      enabled: true,
      timeoutSeconds: 30,
      url: "https://mcp.example.com/mcp",
      headers: {},
    });
  });

  it("infers stdio from a command and fills in the defaults", () => {
    // Prepare
    const input = { name: "local", command: "npx" };

    // Act
    const spec = ServerSpec.parse(input);

    // Assess
    expect(spec).toStrictEqual({
      transport: "stdio",
      name: "local",
      enabled: true,
      timeoutSeconds: 30,
      command: "npx",
      args: [],
      env: {},
      scope: "project",
      isolation: "shared",
    });
  });

  it("lets command win when both command and url are given, so url is then an unknown field", () => {
    // Prepare
    const input = { name: "both", command: "npx", url: "https://mcp.example.com/mcp" };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual(["url: Not a field this request takes."]);
  });

  it("keeps explicitly given values instead of the defaults", () => {
    // Prepare
    const input = {
      transport: "stdio",
      name: "local",
      enabled: false,
      timeoutSeconds: 120,
      command: "node",
      args: ["server.js", "--verbose"],
      env: { API_TOKEN: "t0k3n", _PRIVATE: "" },
      scope: "thread",
      isolation: "per_caller",
      secretRef: "team.github-token_1",
      secretFormat: "json",
    };

    // Act
    const spec = ServerSpec.parse(input);

    // Assess
    expect(spec).toStrictEqual(input);
  });

  it("accepts an explicit http transport with headers", () => {
    // Prepare
    const input = {
      transport: "http",
      name: "remote",
      enabled: false,
      timeoutSeconds: 5,
      url: "http://localhost:3000/mcp",
      headers: { Authorization: "Bearer abc", "X-Api-Key": "k", "x_underscore.ok": "v" },
    };

    // Act
    const spec = ServerSpec.parse(input);

    // Assess
    expect(spec).toStrictEqual(input);
  });

  it("uses an explicit transport over the inferred one", () => {
    // Prepare
    const input = { transport: "http", name: "remote", url: "https://x.example", command: "npx" };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual(["command: Not a field this request takes."]);
  });

  it("rejects a stdio transport without a command", () => {
    // Prepare
    const input = { transport: "stdio", name: "local" };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^command: /)]);
  });

  it("rejects an input with neither command, url nor transport", () => {
    // Prepare
    const input = { name: "nothing" };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^transport: /)]);
  });

  it.each([["sse"], ["websocket"], [""], [1]])("rejects the unknown transport %j", (transport) => {
    // Prepare
    const input = { ...HTTP, transport };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^transport: /)]);
  });

  it.each([[null], [undefined], ["npx"], [42], [[]], [["npx"]]])("rejects the non-object %j", (input) => {
    // Prepare / Act
    const result = ServerSpec.safeParse(input);

    // Assess
    expect(result.success).toBe(false);
  });
});

describe("ServerSpec strictness", () => {
  it.each([
    ["an unknown field on http", { ...HTTP, foo: 1 }, "foo"],
    ["an unknown field on stdio", { ...STDIO, foo: 1 }, "foo"],
    ["a misspelt field", { ...STDIO, timeout: 10 }, "timeout"],
    ["id (server-owned)", { ...HTTP, id: "abc" }, "id"],
    ["version (server-owned)", { ...HTTP, version: 3 }, "version"],
    ["headers on stdio", { ...STDIO, headers: { A: "b" } }, "headers"],
    ["env on http", { ...HTTP, env: { A: "b" } }, "env"],
    ["args on http", { ...HTTP, args: ["x"] }, "args"],
    ["scope on http", { ...HTTP, scope: "project" }, "scope"],
    ["secretRef on http", { ...HTTP, secretRef: "s" }, "secretRef"],
    ["secretFormat on http", { ...HTTP, secretFormat: "env" }, "secretFormat"],
  ])("rejects %s", (_label, input, field) => {
    // Prepare / Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toContain(`${field}: Not a field this request takes.`);
  });
});

describe("ServerSpec field types", () => {
  it.each([
    ["name", { ...STDIO, name: 5 }],
    ["name", { ...STDIO, name: null }],
    ["enabled", { ...STDIO, enabled: "yes" }],
    ["enabled", { ...STDIO, enabled: 1 }],
    ["timeoutSeconds", { ...STDIO, timeoutSeconds: "30" }],
    ["timeoutSeconds", { ...STDIO, timeoutSeconds: 1.5 }],
    ["timeoutSeconds", { ...STDIO, timeoutSeconds: 0 }],
    ["timeoutSeconds", { ...STDIO, timeoutSeconds: -1 }],
    ["timeoutSeconds", { ...STDIO, timeoutSeconds: 901 }],
    ["command", { ...STDIO, command: 5 }],
    ["command", { ...STDIO, command: ["npx"] }],
    ["args", { ...STDIO, args: "-y pkg" }],
    ["args.1", { ...STDIO, args: ["-y", 1] }],
    ["env.PORT", { ...STDIO, env: { PORT: 8080 } }],
    ["env", { ...STDIO, env: ["A=b"] }],
    ["scope", { ...STDIO, scope: "global" }],
    ["url", { ...HTTP, url: 5 }],
    ["headers.X-Retries", { ...HTTP, headers: { "X-Retries": 3 } }],
    ["headers", { ...HTTP, headers: "Authorization: Bearer x" }],
  ])("reports a wrong %s", (path, input) => {
    // Prepare / Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^${path.replace(/\./g, "\\.")}: [A-Z]`))]);
    // In words, not the validator's ("Invalid input: expected number, received string").
    expect(problems[0]).not.toMatch(/Invalid input|expected|received|Too (small|big)/);
  });

  it.each([[1], [900]])("accepts a timeout of %i seconds", (timeoutSeconds) => {
    // Prepare / Act
    const spec = ServerSpec.parse({ ...STDIO, timeoutSeconds });

    // Assess
    expect(spec.timeoutSeconds).toBe(timeoutSeconds);
  });

  it("reports every problem, not only the first", () => {
    // Prepare
    const input = { name: "-bad", command: "", timeoutSeconds: 0, extra: true };

    // Act
    const problems = problemsOf(input);

    // Assess
    expect(problems).toHaveLength(4);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^name: /),
        expect.stringMatching(/^command: /),
        expect.stringMatching(/^timeoutSeconds: /),
        "extra: Not a field this request takes.",
      ]),
    );
  });

  it("rejects an invalid server name", () => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, name: "a__b" });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^name: .*__/)]);
  });
});

describe("ServerSpec command", () => {
  it.each([[""], ["   "], ["\t\n"]])("rejects the empty command %j", (command) => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, command });

    // Assess
    expect(problems).toEqual(["command: Must not be empty."]);
  });

  it("trims surrounding whitespace", () => {
    // Prepare / Act
    const spec = ServerSpec.parse({ ...STDIO, command: "  /usr/local/bin/server  " });

    // Assess
    expect(spec.transport === "stdio" && spec.command).toBe("/usr/local/bin/server");
  });

  it("rejects a command over 1024 characters", () => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, command: "x".repeat(1_025) });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^command: /)]);
  });

  it("rejects more than 256 args", () => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, args: Array.from({ length: 257 }, () => "a") });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^args: /)]);
  });
});

describe("ServerSpec url", () => {
  it.each([
    ["http://localhost:3000/mcp"],
    ["https://mcp.example.com/mcp?team=1#frag"],
    ["http://127.0.0.1:8080"],
    ["https://[::1]:8443/mcp"],
  ])("accepts %s", (url) => {
    // Prepare / Act
    const spec = ServerSpec.parse({ ...HTTP, url });

    // Assess
    expect(spec.transport === "http" && spec.url).toBe(url);
  });

  it("accepts an upper-case scheme", () => {
    // Prepare / Act
    const result = ServerSpec.safeParse({ ...HTTP, url: "HTTPS://MCP.EXAMPLE.COM/mcp" });

    // Assess
    expect(result.success).toBe(true);
  });

  it.each([
    ["ftp:", "ftp://files.example.com/mcp"],
    ["file:", "file:///etc/passwd"],
    ["javascript:", "javascript:alert(1)"],
    ["data:", "data:text/plain,hello"],
    ["ws:", "ws://mcp.example.com/mcp"],
    ["a relative URL", "/mcp"],
    ["a scheme-relative URL", "//mcp.example.com/mcp"],
    ["a bare host", "mcp.example.com"],
    ["an empty string", ""],
    ["a user and password", "https://user:pass@mcp.example.com/mcp"],
    ["a user only", "https://user@mcp.example.com/mcp"],
    ["a password only", "https://:pass@mcp.example.com/mcp"],
    ["over 2048 characters", `https://mcp.example.com/${"a".repeat(2_048)}`],
  ])("rejects a URL with %s", (_label, url) => {
    // Prepare / Act
    const problems = problemsOf({ ...HTTP, url });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^url: /)]);
  });
});

describe("ServerSpec header and env names", () => {
  it.each([["Authorization"], ["X-Api-Key"], ["x_api_key"], ["X.Custom~Header!"]])(
    "accepts the header name %j",
    (name) => {
      // Prepare / Act
      const result = ServerSpec.safeParse({ ...HTTP, headers: { [name]: "v" } });

      // Assess
      expect(result.success).toBe(true);
    },
  );

  it.each([["bad name"], ["X:Colon"], [""], ["Ünicode"], ["X-Header\n"], ["(paren)"], ["a/b"]])(
    "rejects the header name %j",
    (name) => {
      // Prepare / Act
      const problems = problemsOf({ ...HTTP, headers: { [name]: "v" } });

      // Assess
      expect(problems).toEqual([expect.stringMatching(/^headers\./)]);
    },
  );

  it("rejects a header value over 8192 characters", () => {
    // Prepare / Act
    const problems = problemsOf({ ...HTTP, headers: { "X-Big": "v".repeat(8_193) } });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^headers\.X-Big: /)]);
  });

  it.each([
    ["CR LF", "Bearer abc\r\nX-Injected: 1"],
    ["LF", "abc\ndef"],
    ["CR", "abc\rdef"],
    ["NUL", "abc\u0000def"],
  ])("rejects a header value containing %s", (_label, value) => {
    // Prepare / Act
    const problems = problemsOf({ ...HTTP, headers: { "X-Api-Key": value } });

    // Assess
    expect(problems).toEqual(["headers.X-Api-Key: Must not contain CR, LF or NUL."]);
  });

  it("rejects a CR, LF or NUL header value in a patch too", () => {
    // Prepare / Act
    const result = ServerPatch.safeParse({ headers: { Authorization: "Bearer a\nb" } });

    // Assess
    expect(describeIssues(result.error?.issues ?? [])).toEqual([
      { field: "headers.Authorization", message: "Must not contain CR, LF or NUL." },
    ]);
  });

  it("accepts a header value with tabs and other printable text", () => {
    // Prepare / Act
    const result = ServerSpec.safeParse({ ...HTTP, headers: { "X-Note": "a\tb ünïcode [x]" } });

    // Assess
    expect(result.success).toBe(true);
  });

  it("leaves env values alone (newlines are fine in an environment variable)", () => {
    // Prepare / Act
    const result = ServerSpec.safeParse({ ...STDIO, env: { CERT: "-----BEGIN-----\nabc\n-----END-----" } });

    // Assess
    expect(result.success).toBe(true);
  });

  it.each([["PATH"], ["_X"], ["a1"], ["GITHUB_PERSONAL_ACCESS_TOKEN"]])("accepts the env name %j", (name) => {
    // Prepare / Act
    const result = ServerSpec.safeParse({ ...STDIO, env: { [name]: "v" } });

    // Assess
    expect(result.success).toBe(true);
  });

  it.each([["1A"], ["A-B"], ["A B"], [""], ["A=B"], ["ÄPFEL"]])("rejects the env name %j", (name) => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, env: { [name]: "v" } });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^env\./)]);
  });
});

describe("ServerSpec secrets", () => {
  it("rejects secretFormat without secretRef", () => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, secretFormat: "env" });

    // Assess
    expect(problems).toEqual(["secretFormat: Needs a secretRef: the format says how to read that secret."]);
  });

  it("accepts secretRef without secretFormat", () => {
    // Prepare / Act
    const spec = ServerSpec.parse({ ...STDIO, secretRef: "github" });

    // Assess
    expect(spec).toMatchObject({ secretRef: "github" });
    expect(spec).not.toHaveProperty("secretFormat");
  });

  it("lists exactly the four secret file formats", () => {
    // Prepare / Act / Assess
    expect(SECRET_FORMATS).toEqual(["env", "properties", "json", "yaml"]);
  });

  it.each(SECRET_FORMATS)("accepts the secret format %s", (secretFormat) => {
    // Prepare / Act
    const spec = ServerSpec.parse({ ...STDIO, secretRef: "github", secretFormat });

    // Assess
    expect(spec).toMatchObject({ secretRef: "github", secretFormat });
  });

  it.each([["toml"], ["ENV"], [""], [null]])("rejects the secret format %j", (secretFormat) => {
    // Prepare / Act
    const problems = problemsOf({ ...STDIO, secretRef: "github", secretFormat });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^secretFormat: /)]);
  });

  it.each([["a"], ["team.github-token_1"], ["s".repeat(128)]])("accepts the secret name %j", (secretRef) => {
    // Prepare / Act
    const result = ServerSpec.safeParse({ ...STDIO, secretRef });

    // Assess
    expect(result.success).toBe(true);
  });

  it.each([[""], ["-lead"], [".hidden"], ["a b"], ["a/b"], ["s".repeat(129)]])(
    "rejects the secret name %j",
    (secretRef) => {
      // Prepare / Act
      const problems = problemsOf({ ...STDIO, secretRef });

      // Assess
      expect(problems).toEqual([expect.stringMatching(/^secretRef: /)]);
    },
  );
});

describe("ServerPatch", () => {
  it("accepts an empty patch", () => {
    // Prepare / Act
    const result = ServerPatch.safeParse({});

    // Assess
    expect(result.success).toBe(true);
  });

  it("accepts null for secretRef and secretFormat", () => {
    // Prepare / Act
    const patch = ServerPatch.parse({ secretRef: null, secretFormat: null });

    // Assess
    expect(patch).toEqual({ secretRef: null, secretFormat: null });
  });

  it.each([["name"], ["enabled"], ["url"], ["command"], ["headers"]])("rejects null for %s", (field) => {
    // Prepare / Act
    const result = ServerPatch.safeParse({ [field]: null });

    // Assess
    expect(result.success).toBe(false);
  });

  it("rejects unknown and server-owned fields", () => {
    // Prepare / Act
    const result = ServerPatch.safeParse({ id: "x", version: 2, foo: 1 });

    // Assess
    expect(result.success).toBe(false);
    expect(describeIssues(result.error?.issues ?? [])).toEqual(
      ["id", "version", "foo"].map((field) => ({ field, message: "Not a field this request takes." })),
    );
  });

  it.each([
    ["name", { name: "bad name" }],
    ["url", { url: "ftp://x.example" }],
    ["timeoutSeconds", { timeoutSeconds: 0 }],
    ["headers.bad name", { headers: { "bad name": "v" } }],
    ["env.1A", { env: { "1A": "v" } }],
    ["transport", { transport: "sse" }],
    ["secretFormat", { secretFormat: "toml" }],
  ])("validates %s field by field", (path, input) => {
    // Prepare / Act
    const result = ServerPatch.safeParse(input);

    // Assess
    expect(result.success).toBe(false);
    expect(describeIssues(result.error?.issues ?? [])).toEqual([
      { field: path, message: expect.stringMatching(/^[A-Z].*\.$/) },
    ]);
  });
});

describe("ServerPatch derives from the spec schemas", () => {
  it("takes every field of either transport's spec, and fills in none of their defaults", () => {
    const fields = new Set([...Object.keys(HttpServerSpec.shape), ...Object.keys(StdioServerSpec.shape)]);

    expect(new Set(Object.keys(ServerPatch.shape))).toEqual(fields);
    expect(ServerPatch.parse({})).toEqual({});
  });
});

describe("isolation of a stdio server's callers", () => {
  it("is shared unless per_caller is set; an HTTP server takes no isolation", () => {
    // Prepare
    const shared = ServerSpec.parse({ name: "notes", command: "npx" });
    const perCaller = ServerSpec.parse({ name: "notes", command: "npx", isolation: "per_caller" });

    // Act / Assess
    expect(isPerCaller(shared)).toBe(false);
    expect(isPerCaller(perCaller)).toBe(true);
    expect(ServerSpec.safeParse({ ...HTTP, isolation: "per_caller" }).success).toBe(false);
    expect(ServerSpec.safeParse({ name: "notes", command: "npx", isolation: "per_thread" }).success).toBe(
      false,
    );
  });
});

describe("upstream auth by transport kind", () => {
  it("is an HTTP server's auth, and per-user only in per_user OAuth mode", () => {
    // Prepare
    const perUser = ServerSpec.parse({ ...HTTP, auth: { type: "oauth", mode: "per_user" } });
    const shared = ServerSpec.parse({ ...HTTP, auth: { type: "oauth" } });

    // Act / Assess
    expect(upstreamAuthOf(perUser)).toEqual({ type: "oauth", mode: "per_user" });
    expect(isPerUser(perUser)).toBe(true);
    expect(isPerUser(shared)).toBe(false);
    expect(upstreamAuthKey(perUser)).toContain(HTTP.url);
  });

  it("is none for a stdio server", () => {
    // Prepare
    const stdio = ServerSpec.parse({ name: "local", command: "node" });

    // Act / Assess
    expect(upstreamAuthOf(stdio)).toBeUndefined();
    expect(isPerUser(stdio)).toBe(false);
    expect(upstreamAuthKey(stdio)).toBe("");
  });
});

describe("ServerSpec headers", () => {
  const withHeaders = (headers: Record<string, string>) =>
    ServerSpec.safeParse({ name: "h", url: "https://h.example.com/mcp", headers });
  const problems = (headers: Record<string, string>) => {
    const parsed = withHeaders(headers);
    return parsed.success ? [] : describeIssues(parsed.error.issues).map(problemLine);
  };

  it("takes RFC 9110 names and values a client can send: Latin-1 included, tabs too", () => {
    expect(problems({ "X-Team": "café\tau lait", Authorization: "Bearer abc", Hostname: "ok" })).toEqual([]);
  });

  it("refuses the headers the gateway or the connection sets, in any case, saying why", () => {
    for (const name of [
      "Host",
      "host",
      "Content-Length",
      "Transfer-Encoding",
      "Connection",
      "Mcp-Session-Id",
      "TE",
    ])
      expect(problems({ [name]: "x" })).toEqual([
        `headers.${name}: The name is one the gateway or the connection sets itself: it cannot be configured.`,
      ]);
  });

  it("refuses a name that is no token, and a value no HTTP client could send, each in words", () => {
    expect(problems({ "Bad Name": "v" })).toEqual([
      "headers.Bad Name: The name must be a valid HTTP header name: letters, digits and !#$%&'*+-.^_`|~, no spaces.",
    ]);
    for (const value of ["5 €", "hi 👋", "“quoted”", "bell\u0007"])
      expect(problems({ "X-Value": value })).toEqual([
        "headers.X-Value: Must hold only characters an HTTP header can carry: no control characters, nothing beyond Latin-1 (no emoji, no € or curly quotes).",
      ]);
    expect(problems({ "X-Value": "a\r\nb" })).toEqual(["headers.X-Value: Must not contain CR, LF or NUL."]);
  });

  it("documents the same rules in its JSON Schema patterns (what the API document promises)", () => {
    const schema = z.toJSONSchema(ServerSpec, { io: "input", unrepresentable: "any" }) as unknown as {
      oneOf?: unknown[];
      anyOf?: unknown[];
    };
    const text = JSON.stringify(schema);
    const patterns = [...text.matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)].map(
      (match) => new RegExp(JSON.parse(`"${match[1]}"`)),
    );
    const nameRule = patterns.find(
      (pattern) => pattern.test("X-Team") && !pattern.test("Host") && !pattern.test("x y"),
    );
    expect(nameRule, "a header-name pattern that refuses Host").toBeDefined();
    expect(nameRule?.test("hOsT")).toBe(false);
    const valueRule = patterns.find(
      (pattern) => pattern.test("café") && !pattern.test("€") && !pattern.test("a\nb"),
    );
    expect(valueRule, "a header-value pattern that refuses € and LF").toBeDefined();
  });
});
