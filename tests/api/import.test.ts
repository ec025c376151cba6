/** Admin API, `.mcp.json` import: real-world samples of each client's format, broken ones, conflicts. */
import { beforeEach, describe, expect, it } from "vitest";
import {
  createServer,
  expectJson,
  expectProblem,
  freshApp,
  httpServer,
  type Json,
  type TestApp,
  takeJobs,
} from "./helpers";

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

interface ImportResult {
  servers: Array<Json & { id: string; name: string; version: number }>;
  skipped: string[];
}

/** Claude Desktop's claude_desktop_config.json, as its docs show it. */
const CLAUDE_DESKTOP = {
  mcpServers: {
    filesystem: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"],
    },
    github: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github"],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_exampleexampleexample" },
    },
    "brave-search": {
      command: "docker",
      args: ["run", "-i", "--rm", "-e", "BRAVE_API_KEY", "mcp/brave-search"],
      env: { BRAVE_API_KEY: "BSA-example" },
    },
  },
};

/** A project .mcp.json from Claude Code (`claude mcp add --scope project`), with every `type`. */
const CLAUDE_CODE = {
  mcpServers: {
    sentry: { type: "http", url: "https://mcp.sentry.dev/mcp" },
    linear: { type: "sse", url: "https://mcp.linear.app/sse" },
    "api-server": {
      type: "http",
      url: "https://api.example.com/mcp",
      headers: { Authorization: "Bearer sk-example-123", "X-Region": "eu" },
    },
    airtable: {
      type: "stdio",
      command: "npx",
      args: ["-y", "airtable-mcp-server"],
      env: { AIRTABLE_API_KEY: "key-example" },
    },
  },
};

/** Cursor's ~/.cursor/mcp.json: remote entries with only `url`, local ones with `command`. */
const CURSOR = {
  mcpServers: {
    "remote-server": { url: "https://server.example.com/mcp", headers: { API_KEY: "value" } },
    "local-python": { command: "python", args: ["mcp-server.py"], env: { API_KEY: "value" } },
    context7: { url: "https://mcp.context7.com/mcp" },
  },
};

/** VS Code's input placeholder, kept verbatim by the import (VS Code's syntax, not a JS template). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own placeholder syntax
const VS_CODE_INPUT = "${input:perplexity-key}";
// biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own placeholder syntax
const VS_CODE_ENV_FILE = "${workspaceFolder}/.env";

/** VS Code's .vscode/mcp.json: `servers` with `type`, plus `inputs` and keys the gateway does not use. */
const VS_CODE = {
  inputs: [{ type: "promptString", id: "perplexity-key", description: "Perplexity API Key", password: true }],
  servers: {
    Perplexity: {
      type: "stdio",
      command: "npx",
      args: ["-y", "server-perplexity-ask"],
      env: { PERPLEXITY_API_KEY: VS_CODE_INPUT },
      envFile: VS_CODE_ENV_FILE,
    },
    github: { type: "http", url: "https://api.githubcopilot.com/mcp/" },
    fetch: { type: "stdio", command: "uvx", args: ["mcp-server-fetch"] },
  },
};

async function importDoc(document: unknown, query = ""): Promise<Response> {
  return app.call("POST", `/v1/servers/import${query}`, document);
}

async function listed(): Promise<Json[]> {
  const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
  return servers;
}

const byName = (result: ImportResult, name: string) => result.servers.find((server) => server.name === name);

describe("POST /v1/servers/import — real-world samples", () => {
  it("imports Claude Desktop stdio entries with command, args and env", async () => {
    const result = await expectJson<ImportResult>(await importDoc(CLAUDE_DESKTOP), 201);

    expect(result.servers.map((s) => s.name)).toEqual(["brave-search", "filesystem", "github"]);
    expect(result.skipped).toEqual([]);
    expect(byName(result, "github")).toMatchObject({
      transport: "stdio",
      enabled: true,
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github"],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "[SECRET]" },
      version: 1,
      status: { state: "connecting" },
    });
    expect(await app.store.servers.getByName("github")).toMatchObject({
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_exampleexampleexample" },
    });
    expect(byName(result, "filesystem")).toMatchObject({
      args: CLAUDE_DESKTOP.mcpServers.filesystem.args,
      env: {},
    });
    // Each imported server gets its first connection attempt.
    const jobs = await takeJobs(app.store);
    expect(jobs.sort((a, b) => a.serverId.localeCompare(b.serverId))).toEqual(
      result.servers
        .map((server) => ({ type: "connect", serverId: server.id, generation: 1 }))
        .sort((a, b) => a.serverId.localeCompare(b.serverId)),
    );
    expect((await listed()).map((s) => s.name)).toEqual(["brave-search", "filesystem", "github"]);
  });

  it("imports Claude Code entries of every type: http, sse (as http) and stdio; every value masked", async () => {
    const result = await expectJson<ImportResult>(await importDoc(CLAUDE_CODE), 201);

    expect(result.servers.map((s) => s.name)).toEqual(["airtable", "api-server", "linear", "sentry"]);
    expect(byName(result, "sentry")).toMatchObject({ transport: "http", url: "https://mcp.sentry.dev/mcp" });
    expect(byName(result, "linear")).toMatchObject({ transport: "http", url: "https://mcp.linear.app/sse" });
    expect(byName(result, "api-server")).toMatchObject({
      transport: "http",
      headers: { Authorization: "Bearer [SECRET]", "X-Region": "[SECRET]" },
    });
    expect(byName(result, "airtable")).toMatchObject({
      transport: "stdio",
      command: "npx",
      env: { AIRTABLE_API_KEY: "[SECRET]" },
    });
    const apiServer = await app.store.servers.get(byName(result, "api-server")?.id ?? "");
    expect(apiServer).toMatchObject({
      headers: { Authorization: "Bearer sk-example-123", "X-Region": "eu" },
    });
    expect(await app.store.servers.getByName("airtable")).toMatchObject({
      env: { AIRTABLE_API_KEY: "key-example" },
    });
  });

  it("imports Cursor entries: url-only ones as http, command ones as stdio", async () => {
    const result = await expectJson<ImportResult>(await importDoc(CURSOR), 201);

    expect(result.servers.map((s) => s.name)).toEqual(["context7", "local-python", "remote-server"]);
    expect(byName(result, "remote-server")).toMatchObject({
      transport: "http",
      url: "https://server.example.com/mcp",
      headers: { API_KEY: "[SECRET]" },
    });
    expect(byName(result, "local-python")).toMatchObject({
      transport: "stdio",
      command: "python",
      args: ["mcp-server.py"],
    });
    expect(byName(result, "context7")).toMatchObject({ transport: "http", headers: {} });
  });

  it("imports VS Code `servers` with `type`, ignoring `inputs` and unused keys", async () => {
    const result = await expectJson<ImportResult>(await importDoc(VS_CODE), 201);

    expect(result.servers.map((s) => s.name)).toEqual(["Perplexity", "fetch", "github"]);
    expect(byName(result, "Perplexity")).toMatchObject({
      transport: "stdio",
      command: "npx",
      env: { PERPLEXITY_API_KEY: "[SECRET]" },
    });
    expect(await app.store.servers.getByName("Perplexity")).toMatchObject({
      env: { PERPLEXITY_API_KEY: VS_CODE_INPUT },
    });
    expect(byName(result, "github")).toMatchObject({
      transport: "http",
      url: "https://api.githubcopilot.com/mcp/",
    });
    expect(byName(result, "fetch")).toMatchObject({ transport: "stdio", command: "uvx" });
    expect((await listed()).map((s) => s.name)).toEqual(["Perplexity", "fetch", "github"]);
  });

  it("imports an entry marked disabled as a disabled server, without a connect job", async () => {
    const result = await expectJson<ImportResult>(
      await importDoc({
        mcpServers: {
          off: { command: "npx", args: ["x"], disabled: true },
          on: { url: "https://on.example.com/mcp" },
        },
      }),
      201,
    );

    expect(byName(result, "off")).toMatchObject({ enabled: false, status: { state: "disabled" } });
    expect(await takeJobs(app.store)).toEqual([
      { type: "connect", serverId: byName(result, "on")?.id, generation: 1 },
    ]);
  });

  it("treats an entry with both command and url as stdio", async () => {
    const result = await expectJson<ImportResult>(
      await importDoc({
        mcpServers: { both: { command: "node", args: ["s.js"], url: "https://x.example.com" } },
      }),
      201,
    );

    expect(result.servers[0]).toMatchObject({ name: "both", transport: "stdio", command: "node" });
    expect(result.servers[0]).not.toHaveProperty("url");
  });
});

describe("POST /v1/servers/import — broken documents write nothing", () => {
  beforeEach(async () => {
    await createServer(app, httpServer("existing"));
  });

  async function expectNothingWritten(): Promise<void> {
    expect((await listed()).map((s) => ({ name: s.name, version: s.version }))).toEqual([
      { name: "existing", version: 1 },
    ]);
    expect(
      (await takeJobs(app.store)).filter((job) => job.generation !== 1 || job.type !== "connect"),
    ).toEqual([]);
  }

  it("refuses a document with no servers with 400 import.no_servers", async () => {
    await expectProblem(await importDoc({ mcpServers: {} }), 400, "import.no_servers");
    await expectProblem(await importDoc({ servers: {} }), 400, "import.no_servers");
    await expectNothingWritten();
  });

  it("refuses a document without mcpServers or servers with a 400 import.* error", async () => {
    const problem = await expectProblem(await importDoc({ mcp: {} }), 400);

    expect(problem.code).toMatch(/^import\./);
    expect(problem.detail).toMatch(/mcpServers/);
    await expectNothingWritten();
  });

  it("names the entry that has neither command nor url (400 import.invalid_entry), importing none", async () => {
    await takeJobs(app.store);
    const problem = await expectProblem(
      await importDoc({
        mcpServers: {
          good: { command: "npx", args: ["ok"] },
          "no-target": { args: ["--flag"], env: { A: "b" } },
        },
      }),
      400,
      "import.invalid_entry",
    );

    expect(problem.detail).toContain("no-target");
    expect(problem.detail).not.toContain("good");
    expect(problem.errors).toEqual([
      { entry: "no-target", field: "", message: expect.stringMatching(/command.*url/) },
    ]);
    expect((await listed()).map((s) => s.name)).toEqual(["existing"]);
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it.each([
    ["a numeric command", { mcpServers: { x: { command: 42 } } }, "x"],
    ["args as a string", { mcpServers: { x: { command: "npx", args: "-y server" } } }, "x"],
    ["a non-string env value", { mcpServers: { x: { command: "npx", env: { PORT: 8080 } } } }, "x"],
    ["headers as a list", { mcpServers: { x: { url: "https://x.example.com", headers: ["a: b"] } } }, "x"],
    ["an entry that is a string", { mcpServers: { x: "npx -y server" } }, "x"],
    ["an unknown type", { mcpServers: { x: { type: "websocket", url: "wss://x.example.com" } } }, "x"],
    ["an invalid server name", { mcpServers: { "my server": { command: "npx" } } }, "my server"],
    ["a non-http url", { mcpServers: { x: { url: "file:///etc/passwd" } } }, "x"],
    [
      "a masked Authorization",
      { mcpServers: { x: { url: "https://x.example.com", headers: { Authorization: "Bearer [SECRET]" } } } },
      "x",
    ],
    [
      "a masked header",
      { mcpServers: { x: { url: "https://x.example.com", headers: { "X-Key": "[SECRET]" } } } },
      "x",
    ],
    ["a masked env value", { mcpServers: { x: { command: "npx", env: { TOKEN: "[SECRET]" } } } }, "x"],
  ])("refuses %s with 400 import.invalid_entry naming the entry", async (_, document, entry) => {
    const problem = await expectProblem(
      await importDoc({ ...document, mcpServers: { ...document.mcpServers, fine: { command: "npx" } } }),
      400,
      "import.invalid_entry",
    );

    expect(problem.detail).toContain(entry);
    await expectNothingWritten();
  });

  it.each([
    ["mcpServers as a list", { mcpServers: [{ name: "x", command: "npx" }] }],
    ["mcpServers as a string", { mcpServers: "npx -y server" }],
    ["servers as null", { servers: null }],
  ])("refuses %s with 400 import.invalid_document", async (_, document) => {
    await expectProblem(await importDoc(document), 400, "import.invalid_document");
    await expectNothingWritten();
  });

  it.each([
    ["a list", [{ mcpServers: {} }]],
    ["a string", '"mcpServers"'],
    ["a number", "42"],
    ["null", "null"],
  ])("refuses a document that is %s (not an object) with a 400 import.* error", async (_, document) => {
    const problem = await expectProblem(await importDoc(document), 400);

    expect(problem.code).toMatch(/^import\./);
    await expectNothingWritten();
  });

  it("refuses malformed JSON with 400 request.malformed_json and a body over 1 MiB with 413", async () => {
    await expectProblem(await importDoc('{"mcpServers": {'), 400, "request.malformed_json");
    const huge = JSON.stringify({
      mcpServers: { big: { command: "npx", args: ["a".repeat(1024 * 1024)] } },
    });
    await expectProblem(await importDoc(huge), 413, "request.too_large");
    await expectNothingWritten();
  });

  it("refuses an entry with a metadata URL with 400 server.url_forbidden, importing none", async () => {
    const problem = await expectProblem(
      await importDoc({
        mcpServers: { fine: { command: "npx" }, imds: { url: "http://[::ffff:169.254.169.254]/" } },
      }),
      400,
      "server.url_forbidden",
    );

    expect(problem.name).toBe("imds");
    await expectNothingWritten();
  });

  it("refuses more servers than one transaction can hold, importing none", async () => {
    const mcpServers = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`bulk-${String(i).padStart(2, "0")}`, { command: "npx" }]),
    );

    await expectProblem(await importDoc({ mcpServers }), 400, "import.invalid_document");
    await expectNothingWritten();
  });

  it("refuses an unknown onConflict with 400", async () => {
    await expectProblem(await importDoc(CURSOR, "?onConflict=merge"), 400, "request.invalid");
    await expectNothingWritten();
  });
});

describe("POST /v1/servers/import — name clashes", () => {
  const DOC = {
    mcpServers: {
      alpha: { url: "https://alpha-new.example.com/mcp" },
      beta: { command: "uvx", args: ["beta-server"] },
      gamma: { url: "https://gamma.example.com/mcp" },
    },
  };

  it("fails with 409 import.name_conflict listing the clashing names, writing nothing", async () => {
    await createServer(app, httpServer("alpha"));
    await createServer(app, httpServer("gamma"));
    await takeJobs(app.store);

    const problem = await expectProblem(await importDoc(DOC), 409, "import.name_conflict");

    expect(problem.conflicts).toEqual(["alpha", "gamma"]);
    expect(problem.detail).toContain("alpha");
    expect(problem.detail).toContain("gamma");
    expect((await listed()).map((s) => [s.name, s.version, s.url])).toEqual([
      ["alpha", 1, "https://alpha.example.com/mcp"],
      ["gamma", 1, "https://gamma.example.com/mcp"],
    ]);
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it("fails the same way with onConflict=fail", async () => {
    await createServer(app, httpServer("beta"));

    await expectProblem(await importDoc(DOC, "?onConflict=fail"), 409, "import.name_conflict");
    expect((await listed()).map((s) => s.name)).toEqual(["beta"]);
  });

  it("onConflict=skip keeps the existing servers untouched, creates the rest and lists the skipped", async () => {
    const alpha = await createServer(app, httpServer("alpha"));
    await takeJobs(app.store);

    const result = await expectJson<ImportResult>(await importDoc(DOC, "?onConflict=skip"), 201);

    expect(result.skipped).toEqual(["alpha"]);
    expect(result.servers.map((s) => s.name)).toEqual(["beta", "gamma"]);
    expect(await expectJson(await app.call("GET", "/v1/servers/alpha"), 200)).toMatchObject({
      id: alpha.id,
      url: "https://alpha.example.com/mcp",
      version: 1,
    });
    const jobs = await takeJobs(app.store);
    expect(jobs.map((job) => job.serverId).sort()).toEqual(result.servers.map((s) => s.id).sort());
    expect(jobs.every((job) => job.type === "connect" && job.generation === 1)).toBe(true);
  });

  it("onConflict=skip with every name taken changes nothing and answers 201", async () => {
    for (const name of ["alpha", "gamma"]) await createServer(app, httpServer(name));
    await createServer(app, { name: "beta", command: "uvx" });
    await takeJobs(app.store);

    const result = await expectJson<ImportResult>(await importDoc(DOC, "?onConflict=skip"), 201);

    expect(result).toEqual({ servers: [], skipped: ["alpha", "beta", "gamma"] });
    expect((await listed()).map((s) => s.version)).toEqual([1, 1, 1]);
    expect(await takeJobs(app.store)).toEqual([]);
  });

  // The replacing config is the document's own (headers included): no stored header follows the
  // server to its new origin (here alpha.example.com → alpha-new.example.com).
  it("onConflict=replace overwrites the config keeping the id, bumps version and generation", async () => {
    const alpha = await createServer(
      app,
      httpServer("alpha", { headers: { Authorization: "Bearer old" }, timeoutSeconds: 99 }),
    );
    await takeJobs(app.store);

    const result = await expectJson<ImportResult>(await importDoc(DOC, "?onConflict=replace"), 201);

    expect(result.skipped).toEqual([]);
    expect(result.servers.map((s) => s.name)).toEqual(["alpha", "beta", "gamma"]);
    expect(byName(result, "alpha")).toMatchObject({
      id: alpha.id,
      url: "https://alpha-new.example.com/mcp",
      headers: {},
      timeoutSeconds: 30,
      version: 2,
      createdAt: alpha.createdAt,
      status: { state: "connecting" },
    });
    expect(await app.store.servers.get(alpha.id)).toMatchObject({ version: 2, headers: {} });
    const jobs = await takeJobs(app.store);
    expect(jobs).toContainEqual({ type: "connect", serverId: alpha.id, generation: 2 });
    expect(jobs).toHaveLength(3);
    expect((await listed()).map((s) => s.name)).toEqual(["alpha", "beta", "gamma"]);
  });

  it("onConflict=replace may turn an http server into a stdio one under the same id", async () => {
    const beta = await createServer(app, httpServer("beta"));

    const result = await expectJson<ImportResult>(
      await importDoc({ mcpServers: { beta: DOC.mcpServers.beta } }, "?onConflict=replace"),
      201,
    );

    expect(result.servers).toMatchObject([{ id: beta.id, name: "beta", transport: "stdio", command: "uvx" }]);
    expect(result.servers[0]).not.toHaveProperty("url");
  });
});

describe("POST /v1/servers/import?dryRun=true — the preview", () => {
  const DOC = {
    mcpServers: {
      alpha: { url: "https://alpha-new.example.com/mcp", headers: { Authorization: "Bearer new" } },
      beta: { command: "uvx", args: ["beta-server"] },
      gamma: { url: "https://gamma.example.com/mcp" },
    },
  };
  let existing: Json[];

  beforeEach(async () => {
    await createServer(app, httpServer("alpha", { headers: { Authorization: "Bearer old" } }));
    await createServer(app, httpServer("gamma"));
    await takeJobs(app.store);
    existing = await listed();
  });

  /** Nothing a dry run could have written: the same servers at the same versions, no job. */
  async function expectUnchanged(): Promise<void> {
    expect(await listed()).toEqual(existing);
    expect(await app.store.servers.getByName("alpha")).toMatchObject({
      url: "https://alpha.example.com/mcp",
      headers: { Authorization: "Bearer old" },
      version: 1,
    });
    expect(await app.store.servers.getByName("beta")).toBeUndefined();
    expect(await takeJobs(app.store)).toEqual([]);
  }

  it("lists what onConflict=skip would create and skip (200), writing nothing", async () => {
    const preview = await expectJson(await importDoc(DOC, "?onConflict=skip&dryRun=true"), 200);

    expect(preview).toEqual({ created: ["beta"], replaced: [], skipped: ["alpha", "gamma"] });
    await expectUnchanged();
  });

  it("lists what onConflict=replace would create and replace (200), writing nothing", async () => {
    const preview = await expectJson(await importDoc(DOC, "?dryRun=true&onConflict=replace"), 200);

    expect(preview).toEqual({ created: ["beta"], replaced: ["alpha", "gamma"], skipped: [] });
    await expectUnchanged();
  });

  it("answers the clash as a real import does under onConflict=fail (409 import.name_conflict)", async () => {
    const problem = await expectProblem(await importDoc(DOC, "?dryRun=true"), 409, "import.name_conflict");

    expect(problem.conflicts).toEqual(["alpha", "gamma"]);
    await expectUnchanged();
    const clean = await expectJson(
      await importDoc({ mcpServers: { beta: DOC.mcpServers.beta } }, "?dryRun=true"),
      200,
    );
    expect(clean).toEqual({ created: ["beta"], replaced: [], skipped: [] });
    await expectUnchanged();
  });

  it("refuses what a real import refuses, with the same problems, writing nothing", async () => {
    const invalid = await expectProblem(
      await importDoc({ mcpServers: { beta: { args: ["--flag"] } } }, "?dryRun=true&onConflict=skip"),
      400,
      "import.invalid_entry",
    );
    expect(invalid.errors).toEqual([
      { entry: "beta", field: "", message: expect.stringMatching(/command.*url/) },
    ]);
    await expectProblem(
      await importDoc({ mcpServers: { imds: { url: "http://169.254.169.254/" } } }, "?dryRun=true"),
      400,
      "server.url_forbidden",
    );
    const mcpServers = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`bulk-${String(i).padStart(2, "0")}`, { command: "npx" }]),
    );
    await expectProblem(await importDoc({ mcpServers }, "?dryRun=true"), 400, "import.invalid_document");
    await expectProblem(await importDoc(DOC, "?dryRun=yes"), 400, "request.invalid");
    await expectUnchanged();
  });

  it("previews exactly what the real import then does; dryRun=false imports (201)", async () => {
    const preview = await expectJson<{ created: string[]; replaced: string[] }>(
      await importDoc(DOC, "?onConflict=replace&dryRun=true"),
      200,
    );
    const result = await expectJson<ImportResult>(
      await importDoc(DOC, "?onConflict=replace&dryRun=false"),
      201,
    );

    expect(result.servers.map((s) => s.name)).toEqual([...preview.created, ...preview.replaced].sort());
    expect(result.skipped).toEqual([]);
  });
});
