import { describe, expect, it } from "vitest";
import { AppError, problemLine } from "./errors";
import { type ImportProblem, parseMcpJson } from "./mcp-json";

/** Runs `act`, expecting it to throw an AppError, and returns that error. */
function appErrorFrom(act: () => unknown): AppError {
  try {
    act();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError, nothing was thrown");
}

/** What a pasted mask is told. */
const IS_A_MASK = "Is a mask, not a value: type the real value.";

/** The per-entry problems of a document that fails with import.invalid_entry. */
function problemsOf(document: unknown): ImportProblem[] {
  const error = appErrorFrom(() => parseMcpJson(document));
  expect(error.code).toBe("import.invalid_entry");
  return error.extra.errors as ImportProblem[];
}

/** As a user pastes it: parsed from JSON text. */
const pasted = (text: string): unknown => JSON.parse(text);

describe("parseMcpJson real-world documents", () => {
  it("reads a Claude Desktop config", () => {
    // Prepare
    const document = pasted(`{
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"]
        },
        "github": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-github"],
          "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example" }
        }
      }
    }`);

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "stdio",
        name: "filesystem",
        enabled: true,
        timeoutSeconds: 30,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"],
        env: {},
        scope: "project",
        isolation: "shared",
      },
      {
        transport: "stdio",
        name: "github",
        enabled: true,
        timeoutSeconds: 30,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_example" },
        scope: "project",
        isolation: "shared",
      },
    ]);
  });

  it("reads a Claude Code .mcp.json with stdio, http and sse types", () => {
    // Prepare
    const document = pasted(`{
      "mcpServers": {
        "sentry": {
          "type": "http",
          "url": "https://mcp.sentry.dev/mcp",
          "headers": { "Authorization": "Bearer sntrys_example" }
        },
        "linear": { "type": "sse", "url": "https://mcp.linear.app/sse" },
        "local-db": {
          "type": "stdio",
          "command": "/usr/local/bin/db-mcp",
          "args": ["--port", "5432"],
          "env": { "DB_URL": "postgres://localhost/app" }
        }
      }
    }`);

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "http",
        name: "linear",
        enabled: true,
        timeoutSeconds: 30,
        url: "https://mcp.linear.app/sse",
        headers: {},
      },
      {
        transport: "stdio",
        name: "local-db",
        enabled: true,
        timeoutSeconds: 30,
        command: "/usr/local/bin/db-mcp",
        args: ["--port", "5432"],
        env: { DB_URL: "postgres://localhost/app" },
        scope: "project",
        isolation: "shared",
      },
      {
        transport: "http",
        name: "sentry",
        enabled: true,
        timeoutSeconds: 30,
        url: "https://mcp.sentry.dev/mcp",
        headers: { Authorization: "Bearer sntrys_example" },
      },
    ]);
  });

  it("reads a Cursor config with url/headers and command entries", () => {
    // Prepare
    const document = pasted(`{
      "mcpServers": {
        "web-search": {
          "url": "https://search.example.com/mcp",
          "headers": { "API_KEY": "key-123" }
        },
        "postgres": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/mydb"],
          "env": {}
        }
      }
    }`);

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "stdio",
        name: "postgres",
        enabled: true,
        timeoutSeconds: 30,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/mydb"],
        env: {},
        scope: "project",
        isolation: "shared",
      },
      {
        transport: "http",
        name: "web-search",
        enabled: true,
        timeoutSeconds: 30,
        url: "https://search.example.com/mcp",
        headers: { API_KEY: "key-123" },
      },
    ]);
  });

  it("reads a VS Code mcp.json with inputs and typed servers", () => {
    // Prepare
    const document = pasted(`{
      "inputs": [
        { "type": "promptString", "id": "github-token", "description": "GitHub PAT", "password": true }
      ],
      "servers": {
        "github": {
          "type": "http",
          "url": "https://api.githubcopilot.com/mcp/",
          "headers": { "Authorization": "Bearer \${input:github-token}" }
        },
        "playwright": {
          "type": "stdio",
          "command": "npx",
          "args": ["@playwright/mcp@latest"],
          "envFile": "\${workspaceFolder}/.env"
        }
      }
    }`);

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "http",
        name: "github",
        enabled: true,
        timeoutSeconds: 30,
        url: "https://api.githubcopilot.com/mcp/",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a VS Code input variable, kept literally
        headers: { Authorization: "Bearer ${input:github-token}" },
      },
      {
        transport: "stdio",
        name: "playwright",
        enabled: true,
        timeoutSeconds: 30,
        command: "npx",
        args: ["@playwright/mcp@latest"],
        env: {},
        scope: "project",
        isolation: "shared",
      },
    ]);
  });

  it.each([["http"], ["sse"], ["streamable-http"], ["streamableHttp"]])("maps type %s to http", (type) => {
    // Prepare
    const document = { mcpServers: { remote: { type, url: "https://mcp.example.com/mcp" } } };

    // Act
    const [spec] = parseMcpJson(document);

    // Assess
    expect(spec?.transport).toBe("http");
  });

  it("ignores keys the gateway does not read", () => {
    // Prepare
    const document = {
      mcpServers: {
        tools: {
          command: "uvx",
          args: ["mcp-server-fetch"],
          autoApprove: ["fetch"],
          alwaysAllow: ["fetch"],
          timeout: 60,
          description: "fetches pages",
          cwd: "/tmp",
        },
      },
    };

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "stdio",
        name: "tools",
        enabled: true,
        timeoutSeconds: 30,
        command: "uvx",
        args: ["mcp-server-fetch"],
        env: {},
        scope: "project",
        isolation: "shared",
      },
    ]);
  });

  it("reads a stdio entry's isolation (the gateway's own key), shared by default; refuses another value", () => {
    // Prepare
    const document = {
      mcpServers: { mine: { command: "npx", isolation: "per_caller" }, ours: { command: "npx" } },
    };

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs.map((spec) => [spec.name, spec.transport === "stdio" && spec.isolation])).toEqual([
      ["mine", "per_caller"],
      ["ours", "shared"],
    ]);
    expect(() => parseMcpJson({ mcpServers: { odd: { command: "npx", isolation: "per_thread" } } })).toThrow(
      /odd: .*isolation/,
    );
  });

  it("reads any entry's pinning (the gateway's own key), and names a bad one", () => {
    const specs = parseMcpJson({
      mcpServers: {
        auto: { url: "https://a.example.com/mcp", pinning: "auto" },
        local: { command: "node", pinning: "off" },
        unset: { url: "https://b.example.com/mcp" },
      },
    });

    expect(specs.map((spec) => [spec.name, spec.pinning])).toEqual([
      ["auto", "auto"],
      ["local", "off"],
      ["unset", undefined],
    ]);
    expect(() =>
      parseMcpJson({ mcpServers: { bad: { url: "https://c.example.com/mcp", pinning: "yes" } } }),
    ).toThrow(/bad: .*pinning/);
  });

  it("reads an HTTP entry's relaySessionLogs (the gateway's own key); off when absent", () => {
    // Prepare
    const document = {
      mcpServers: {
        loud: { url: "https://a.example.com/mcp", relaySessionLogs: true },
        quiet: { url: "https://b.example.com/mcp" },
      },
    };

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(
      specs.map((spec) => [spec.name, spec.transport === "http" && spec.relaySessionLogs === true]),
    ).toEqual([
      ["loud", true],
      ["quiet", false],
    ]);
  });

  it.each([
    [true, false],
    [false, true],
    [undefined, true],
  ])("maps disabled: %s to enabled: %s", (disabled, enabled) => {
    // Prepare
    const document = { mcpServers: { local: { command: "npx", disabled } } };

    // Act
    const [spec] = parseMcpJson(document);

    // Assess
    expect(spec?.enabled).toBe(enabled);
  });

  it("sorts the result by name", () => {
    // Prepare
    const document = {
      mcpServers: {
        zeta: { command: "z" },
        alpha: { url: "https://a.example/mcp" },
        Mid: { command: "m" },
        "beta-2": { command: "b2" },
        beta: { command: "b" },
      },
    };

    // Act
    const names = parseMcpJson(document).map((spec) => spec.name);

    // Assess
    expect(names).toEqual(["Mid", "alpha", "beta", "beta-2", "zeta"]);
  });

  it("prefers mcpServers when a document has both maps", () => {
    // Prepare
    const document = { mcpServers: { a: { command: "a" } }, servers: { b: { command: "b" } } };

    // Act
    const names = parseMcpJson(document).map((spec) => spec.name);

    // Assess
    expect(names).toEqual(["a"]);
  });
});

describe("parseMcpJson transport choice", () => {
  it("makes an entry with both command and url stdio, dropping url and headers", () => {
    // Prepare
    const document = {
      mcpServers: {
        both: { command: "npx", args: ["srv"], url: "https://x.example/mcp", headers: { A: "b" } },
      },
    };

    // Act
    const specs = parseMcpJson(document);

    // Assess
    expect(specs).toStrictEqual([
      {
        transport: "stdio",
        name: "both",
        enabled: true,
        timeoutSeconds: 30,
        command: "npx",
        args: ["srv"],
        env: {},
        scope: "project",
        isolation: "shared",
      },
    ]);
  });

  it("follows an explicit http type over a command", () => {
    // Prepare
    const document = { mcpServers: { both: { type: "http", command: "npx", url: "https://x.example/mcp" } } };

    // Act
    const [spec] = parseMcpJson(document);

    // Assess
    expect(spec).toMatchObject({ transport: "http", url: "https://x.example/mcp" });
  });

  it("names an entry with neither command nor url", () => {
    // Prepare
    const document = { mcpServers: { good: { command: "npx" }, broken: { args: ["x"] } } };

    // Act
    const error = appErrorFrom(() => parseMcpJson(document));

    // Assess
    expect(error.code).toBe("import.invalid_entry");
    expect(error.status).toBe(400);
    expect(error.detail).toBe("broken: Needs either `command` (stdio) or `url` (HTTP).");
    expect(error.extra.errors).toEqual([
      { entry: "broken", field: "", message: "Needs either `command` (stdio) or `url` (HTTP)." },
    ]);
  });

  it.each([
    ["an http type without url", { type: "http", command: "npx" }, "url"],
    ["a stdio type without command", { type: "stdio", url: "https://x.example/mcp" }, "command"],
    ["an unknown type", { type: "websocket", url: "wss://x.example" }, "type"],
  ])("rejects %s", (_label, entry, field) => {
    // Prepare
    const document = { mcpServers: { odd: entry } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([{ entry: "odd", field, message: expect.stringMatching(/^[A-Z].*\.$/) }]);
  });
});

describe("parseMcpJson broken documents", () => {
  it.each([
    ["null", null],
    ["a string", "mcpServers"],
    ["a number", 42],
    ["an array", [{ mcpServers: {} }]],
    ["an object without a server map", { inputs: [] }],
    ["an empty object", {}],
    ["a server map that is an array", { mcpServers: [{ name: "a", command: "npx" }] }],
    ["a server map that is a string", { mcpServers: "npx" }],
    ["a server map that is null", { mcpServers: null }],
    ["a VS Code server map that is an array", { servers: [] }],
  ])("rejects %s with import.invalid_document", (_label, document) => {
    // Prepare / Act
    const error = appErrorFrom(() => parseMcpJson(document));

    // Assess
    expect(error.code).toBe("import.invalid_document");
    expect(error.status).toBe(400);
  });

  it.each([
    ["mcpServers", { mcpServers: {} }],
    ["servers", { inputs: [], servers: {} }],
  ])("rejects an empty %s map with import.no_servers", (_label, document) => {
    // Prepare / Act
    const error = appErrorFrom(() => parseMcpJson(document));

    // Assess
    expect(error.code).toBe("import.no_servers");
    expect(error.status).toBe(400);
  });

  it("lists a problem for each bad entry, in name order, and imports nothing", () => {
    // Prepare
    const document = {
      mcpServers: {
        ok: { command: "npx" },
        "z-args": { command: "npx", args: "-y pkg" },
        "a-env": { command: "npx", env: { PORT: 8080 } },
        "m-command": { command: 42 },
      },
    };

    // Act
    const error = appErrorFrom(() => parseMcpJson(document));

    // Assess
    expect(error.code).toBe("import.invalid_entry");
    expect(error.extra.errors).toEqual([
      { entry: "a-env", field: "env.PORT", message: "Must be text, not a number." },
      { entry: "m-command", field: "command", message: "Must be text, not a number." },
      { entry: "z-args", field: "args", message: "Must be a list, not text." },
    ]);
    expect(error.detail).toBe(
      "a-env: env.PORT: Must be text, not a number. m-command: command: Must be text, not a number. z-args: args: Must be a list, not text.",
    );
  });

  it("lists several problems of one entry", () => {
    // Prepare
    const document = { mcpServers: { bad: { command: 1, args: [1], env: [] } } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toHaveLength(3);
    expect(problems.map((p) => p.entry)).toEqual(["bad", "bad", "bad"]);
    expect(problems.map((p) => problemLine(p))).toEqual(
      expect.arrayContaining([
        "command: Must be text, not a number.",
        "args.0: Must be text, not a number.",
        "env: Must be an object, not a list.",
      ]),
    );
  });

  it.each([
    ["a string", "npx"],
    ["null", null],
    ["an array", ["npx"]],
    ["a number", 1],
  ])("rejects an entry that is %s", (_label, entry) => {
    // Prepare
    const document = { mcpServers: { odd: entry } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([
      { entry: "odd", field: "", message: expect.stringMatching(/^Must be an object, not /) },
    ]);
  });

  it.each([
    ["url as a number", { url: 80 }, "url"],
    ["headers as an array", { url: "https://x.example", headers: ["A: b"] }, "headers"],
    ["a header value as a number", { url: "https://x.example", headers: { "X-N": 1 } }, "headers.X-N"],
    ["disabled as a string", { command: "npx", disabled: "yes" }, "disabled"],
    ["an args item as an object", { command: "npx", args: [{}] }, "args.0"],
  ])("rejects %s", (_label, entry, field) => {
    // Prepare
    const document = { mcpServers: { odd: entry } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([{ entry: "odd", field, message: expect.stringMatching(/^[A-Z].*\.$/) }]);
  });

  it.each([[""], ["   "]])("rejects the empty command %j", (command) => {
    // Prepare
    const document = { mcpServers: { empty: { command } } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([{ entry: "empty", field: "command", message: "Must not be empty." }]);
  });

  it.each([
    ["ftp://files.example.com/mcp"],
    ["file:///etc/passwd"],
    ["javascript:alert(1)"],
    ["ws://mcp.example.com"],
    ["https://user:pass@mcp.example.com/mcp"],
    ["not a url"],
  ])("rejects the URL %s", (url) => {
    // Prepare
    const document = { mcpServers: { remote: { url } } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([
      { entry: "remote", field: "url", message: "Must be an http(s) URL without credentials." },
    ]);
  });

  it.each([["bad name"], ["a__b"], ["-lead"], ["trail_"], ["a.b"], ["x".repeat(33)], ["café"], [""]])(
    "rejects the server name %j",
    (name) => {
      // Prepare
      const document = { mcpServers: { [name]: { command: "npx" } } };

      // Act
      const problems = problemsOf(document);

      // Assess
      expect(problems).toEqual([{ entry: name, field: "name", message: expect.stringMatching(/^Must /) }]);
    },
  );

  it.each([["an env name", { command: "npx", env: { "BAD-NAME": "v" } }, "env.BAD-NAME"]])(
    "rejects %s the gateway cannot use",
    (_label, entry, field) => {
      // Prepare
      const document = { mcpServers: { local: entry } };

      // Act
      const problems = problemsOf(document);

      // Assess
      expect(problems).toEqual([{ entry: "local", field, message: expect.stringMatching(/^[A-Z].*\.$/) }]);
    },
  );

  it.each([["Bearer [SECRET]"], ["[SECRET]"]])(
    "rejects a masked Authorization header (%j) instead of storing the mask as a credential",
    (value) => {
      // Prepare
      const document = {
        mcpServers: { remote: { url: "https://x.example/mcp", headers: { Authorization: value } } },
      };

      // Act
      const problems = problemsOf(document);

      // Assess
      expect(problems).toEqual([{ entry: "remote", field: "headers.Authorization", message: IS_A_MASK }]);
    },
  );

  it.each([
    [
      "a masked header",
      { url: "https://x.example/mcp", headers: { "X-Api-Key": "[SECRET]" } },
      "headers.X-Api-Key",
    ],
    ["a masked env value", { command: "npx", env: { API_TOKEN: "[SECRET]" } }, "env.API_TOKEN"],
    ["a scheme'd mask in env", { command: "npx", env: { AUTH: "Bearer [SECRET]" } }, "env.AUTH"],
  ])("rejects %s instead of storing the mask as a value", (_label, entry, key) => {
    // Prepare
    const document = { mcpServers: { pasted: entry } };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([{ entry: "pasted", field: key, message: IS_A_MASK }]);
  });

  it.each([
    ["CR LF", "Bearer abc\r\nX-Injected: 1"],
    ["LF", "Bearer abc\n"],
    ["CR", "Bearer a\rbc"],
    ["NUL", "Bearer abc\u0000"],
  ])("rejects a header value containing %s", (_label, value) => {
    // Prepare
    const document = {
      mcpServers: { remote: { url: "https://x.example/mcp", headers: { Authorization: value } } },
    };

    // Act
    const problems = problemsOf(document);

    // Assess
    expect(problems).toEqual([
      { entry: "remote", field: "headers.Authorization", message: "Must not contain CR, LF or NUL." },
    ]);
  });
});
