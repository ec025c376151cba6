import { describe, expect, it } from "vitest";
import { AppError, type FieldProblem, problemLine } from "./errors";
import { type ServerPatch, type ServerSpec, upstreamAuthKey } from "./server";
import { applyServerPatch, authSecretReplaced, parseServerSpec } from "./server-edit";

/** What a pasted mask is told: the words people read beside the field. */
const IS_A_MASK = "Is a mask, not a value: type the real value.";
const NO_STORED_VALUE = "The mask stands for no stored value: type the real value.";
const unknown = (field: string): FieldProblem => ({ field, message: "Not a field this request takes." });

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

function storedHttp(headers: Record<string, string> = { Authorization: "Bearer s3cr3t", "X-Team": "blue" }) {
  return parseServerSpec({ name: "remote", url: "https://mcp.example.com/mcp", headers });
}

function storedStdio(extra: Record<string, unknown> = {}) {
  return parseServerSpec({
    name: "local",
    command: "npx",
    args: ["-y", "@example/mcp"],
    env: { API_TOKEN: "t0k3n" },
    secretRef: "github",
    secretFormat: "env",
    ...extra,
  });
}

function headersOf(spec: ServerSpec): Record<string, string> {
  if (spec.transport !== "http") throw new Error("expected an http spec");
  return spec.headers;
}

describe("parseServerSpec", () => {
  it("returns the validated spec with defaults", () => {
    // Prepare
    const input = {
      name: "remote",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer abc" },
    };

    // Act
    const spec = parseServerSpec(input);

    // Assess
    expect(spec).toStrictEqual({
      transport: "http",
      name: "remote",
      enabled: true,
      timeoutSeconds: 30,
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer abc" },
    });
  });

  it("throws server.invalid listing every problem", () => {
    // Prepare
    const input = { name: "-bad", command: " ", extra: 1 };

    // Act
    const error = appErrorFrom(() => parseServerSpec(input));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.status).toBe(400);
    const errors = error.extra.errors as FieldProblem[];
    expect(errors).toHaveLength(3);
    expect(errors).toEqual(
      expect.arrayContaining([
        { field: "name", message: expect.stringMatching(/^Must be /) },
        { field: "command", message: "Must not be empty." },
        { field: "extra", message: "Not a field this request takes." },
      ]),
    );
    expect(error.detail).toBe(errors.map(problemLine).join(" "));
  });

  it.each([
    ["Authorization", "Bearer [SECRET]"],
    ["authorization", "Bearer [SECRET]"],
    ["AUTHORIZATION", "Basic [SECRET]"],
    ["Authorization", "[SECRET]"],
    ["Authorization", "  Bearer [SECRET]  "],
  ])("rejects a masked %s header (%j) on create", (name, value) => {
    // Prepare
    const input = { name: "remote", url: "https://mcp.example.com/mcp", headers: { [name]: value } };

    // Act
    const error = appErrorFrom(() => parseServerSpec(input));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([{ field: `headers.${name}`, message: IS_A_MASK }]);
  });

  it.each([
    [
      "a non-Authorization header",
      { url: "https://mcp.example.com/mcp", headers: { "X-Note": "[SECRET]" } },
      "headers.X-Note",
    ],
    ["an env value", { command: "npx", env: { API_TOKEN: "[SECRET]" } }, "env.API_TOKEN"],
    ["a scheme'd env value", { command: "npx", env: { AUTH: " Bearer [SECRET] " } }, "env.AUTH"],
  ])("rejects a mask in %s on create", (_label, fields, key) => {
    // Prepare
    const input = { name: "pasted", ...fields };

    // Act
    const error = appErrorFrom(() => parseServerSpec(input));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([{ field: key, message: IS_A_MASK }]);
  });

  it("rejects a header value with CR/LF as server.invalid", () => {
    // Prepare
    const input = { name: "remote", url: "https://mcp.example.com/mcp", headers: { "X-A": "a\r\nX-B: b" } };

    // Act
    const error = appErrorFrom(() => parseServerSpec(input));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([
      { field: "headers.X-A", message: "Must not contain CR, LF or NUL." },
    ]);
  });
});

describe("applyServerPatch headers (mask rule)", () => {
  it("edits a server stored before a header rule it breaks (a Host header, a value past Latin-1), keeping them", () => {
    // Prepare: stored when such headers were still taken
    const stored = { ...storedHttp(), headers: { Host: "old.example.com", "X-Note": "5 €" } } as ServerSpec;

    // Act
    const disabled = applyServerPatch(stored, { enabled: false });
    const kept = applyServerPatch(stored, { headers: { Host: "[SECRET]", "X-Note": "[SECRET]" } });

    // Assess: nothing stored is lost, and an edit that re-sends the masks keeps the values
    expect(disabled).toMatchObject({ enabled: false });
    expect(headersOf(disabled)).toEqual({ Host: "old.example.com", "X-Note": "5 €" });
    expect(headersOf(kept)).toEqual({ Host: "old.example.com", "X-Note": "5 €" });
  });

  it("keeps the stored Authorization when the mask comes back unchanged", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { headers: { Authorization: "Bearer [SECRET]", "X-Team": "blue" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ Authorization: "Bearer s3cr3t", "X-Team": "blue" });
  });

  it("matches the header name case-insensitively, under the submitted spelling", () => {
    // Prepare
    const stored = storedHttp({ authorization: "Bearer s3cr3t" });
    const patch: ServerPatch = { headers: { AUTHORIZATION: "Bearer [SECRET]" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ AUTHORIZATION: "Bearer s3cr3t" });
  });

  it("tolerates whitespace around a returned mask", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { headers: { Authorization: " Bearer [SECRET] " } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ Authorization: "Bearer s3cr3t" });
  });

  it("keeps a stored raw token (no scheme) when `[SECRET]` comes back", () => {
    // Prepare
    const stored = storedHttp({ Authorization: "raw-token-123" });
    const patch: ServerPatch = { headers: { Authorization: "[SECRET]" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ Authorization: "raw-token-123" });
  });

  it("keeps any stored header when its `[SECRET]` mask comes back, matching the name case-insensitively", () => {
    // Prepare
    const stored = storedHttp({ Authorization: "Bearer s3cr3t", "X-Api-Key": "k3y", "X-Team": "blue" });
    const patch: ServerPatch = {
      headers: { Authorization: "Bearer [SECRET]", "x-api-key": "[SECRET]", "X-Team": "red" },
    };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({
      Authorization: "Bearer s3cr3t",
      "x-api-key": "k3y",
      "X-Team": "red",
    });
  });

  it("removes the Authorization header when it is left out", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { headers: { "X-Team": "blue" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ "X-Team": "blue" });
  });

  it("removes every header when given an empty map", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const result = applyServerPatch(stored, { headers: {} });

    // Assess
    expect(headersOf(result)).toEqual({});
  });

  it("replaces the Authorization header with a new value", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { headers: { Authorization: "Bearer n3w", "X-Team": "red" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(headersOf(result)).toEqual({ Authorization: "Bearer n3w", "X-Team": "red" });
  });

  it("keeps all stored headers when the patch has no headers", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const result = applyServerPatch(stored, { enabled: false });

    // Assess
    expect(headersOf(result)).toEqual({ Authorization: "Bearer s3cr3t", "X-Team": "blue" });
    expect(result.enabled).toBe(false);
  });

  it.each([
    ["nothing is stored", {}, "Bearer [SECRET]"],
    ["the scheme differs", { Authorization: "Bearer s3cr3t" }, "Basic [SECRET]"],
    ["the stored value had no scheme", { Authorization: "raw" }, "Bearer [SECRET]"],
    ["the stored value had a scheme", { Authorization: "Bearer s3cr3t" }, "[SECRET]"],
  ])("rejects an Authorization mask when %s", (_label, headers, mask) => {
    // Prepare
    const stored = storedHttp(headers);
    const patch: ServerPatch = { headers: { Authorization: mask } };

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([{ field: "headers.Authorization", message: NO_STORED_VALUE }]);
  });

  it.each([
    ["nothing is stored under it", { Authorization: "Bearer s3cr3t" }, "[SECRET]"],
    ["it carries a scheme", { "X-Team": "Bearer blue" }, "Bearer [SECRET]"],
  ])("rejects a mask of another header when %s", (_label, headers, mask) => {
    // Prepare
    const stored = storedHttp(headers);
    const patch: ServerPatch = { headers: { "X-Team": mask } };

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([{ field: "headers.X-Team", message: NO_STORED_VALUE }]);
  });
});

describe("applyServerPatch env (mask rule)", () => {
  function envOf(spec: ServerSpec): Record<string, string> {
    if (spec.transport !== "stdio") throw new Error("expected a stdio spec");
    return spec.env;
  }

  it("keeps a value whose mask comes back, removes an omitted key, replaces any other value", () => {
    // Prepare
    const stored = storedStdio({ env: { API_TOKEN: "t0k3n", MODE: "fast", OLD: "x" } });
    const patch: ServerPatch = { env: { API_TOKEN: "[SECRET]", MODE: "slow", NEW: "y" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(envOf(result)).toEqual({ API_TOKEN: "t0k3n", MODE: "slow", NEW: "y" });
  });

  it("keeps the whole env when the patch has no env", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { args: ["serve"] });

    // Assess
    expect(envOf(result)).toEqual({ API_TOKEN: "t0k3n" });
  });

  it.each([
    ["nothing is stored under the key", { OTHER: "[SECRET]" }, "OTHER"],
    ["the key differs in case", { api_token: "[SECRET]" }, "api_token"],
    ["the mask carries a scheme", { API_TOKEN: "Bearer [SECRET]" }, "API_TOKEN"],
  ])("rejects a mask when %s, naming the key", (_label, env, key) => {
    // Prepare
    const stored = storedStdio();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, { env }));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([{ field: `env.${key}`, message: NO_STORED_VALUE }]);
  });
});

describe("applyServerPatch url origin (credentials stay where they belong)", () => {
  const MOVED = "https://elsewhere.example.net/mcp";

  it.each([
    ["another host", MOVED],
    ["another scheme", "http://mcp.example.com/mcp"],
    ["another port", "https://mcp.example.com:8443/mcp"],
  ])("refuses a move to %s that keeps the stored headers by omitting `headers`", (_label, url) => {
    // Prepare
    const stored = storedHttp();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, { url }));

    // Assess
    expect(error.code).toBe("server.credentials_origin_changed");
    expect(error.status).toBe(400);
    expect(error.extra.headers).toEqual(["Authorization", "X-Team"]);
    expect(error.detail).not.toContain("s3cr3t");
  });

  it("refuses a move that keeps one stored header by its mask, naming only that header", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = {
      url: MOVED,
      headers: { Authorization: "Bearer [SECRET]", "X-Team": "blue" },
    };

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch));

    // Assess
    expect(error.code).toBe("server.credentials_origin_changed");
    expect(error.extra.headers).toEqual(["Authorization"]);
  });

  it("refuses a move that keeps a non-Authorization header by its mask", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { url: MOVED, headers: { Authorization: "Bearer n3w", "x-team": "[SECRET]" } };

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch));

    // Assess
    expect(error.code).toBe("server.credentials_origin_changed");
    expect(error.extra.headers).toEqual(["x-team"]);
  });

  it("answers a mask matching nothing stored with server.invalid, as without a move", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { url: MOVED, headers: { Authorization: "Basic [SECRET]" } };

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch));

    // Assess
    expect(error.code).toBe("server.invalid");
  });

  it("allows a move with every header value re-sent", () => {
    // Prepare
    const stored = storedHttp();
    const patch: ServerPatch = { url: MOVED, headers: { Authorization: "Bearer n3w", "X-Team": "blue" } };

    // Act
    const result = applyServerPatch(stored, patch);

    // Assess
    expect(result).toMatchObject({ url: MOVED, headers: { Authorization: "Bearer n3w", "X-Team": "blue" } });
  });

  it("allows a move that drops the headers with an empty map, or drops some and re-sends others", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const dropped = applyServerPatch(stored, { url: MOVED, headers: {} });
    const partly = applyServerPatch(stored, { url: MOVED, headers: { "X-Team": "blue" } });

    // Assess
    expect(headersOf(dropped)).toEqual({});
    expect(headersOf(partly)).toEqual({ "X-Team": "blue" });
  });

  it("allows any move when nothing is stored", () => {
    // Prepare
    const stored = storedHttp({});

    // Act
    const result = applyServerPatch(stored, { url: MOVED });

    // Assess
    expect(result).toMatchObject({ url: MOVED, headers: {} });
  });

  it.each([
    ["another path", "https://mcp.example.com/v2/mcp"],
    ["a query", "https://mcp.example.com/mcp?tenant=1"],
    ["the default port spelled out", "https://mcp.example.com:443/mcp"],
    ["an upper-case host", "https://MCP.example.com/mcp"],
  ])("keeps the headers on a same-origin change to %s", (_label, url) => {
    // Prepare
    const stored = storedHttp();

    // Act
    const result = applyServerPatch(stored, { url });

    // Assess
    expect(result).toMatchObject({ url, headers: { Authorization: "Bearer s3cr3t", "X-Team": "blue" } });
  });
});

describe("applyServerPatch secrets", () => {
  it("clears secretRef (and with it the format it needs) on null", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { secretRef: null });

    // Assess
    expect(result).not.toHaveProperty("secretRef");
    expect(result).not.toHaveProperty("secretFormat");
  });

  it("clears secretRef when no format is stored", () => {
    // Prepare
    const stored = storedStdio({ secretFormat: undefined });

    // Act
    const result = applyServerPatch(stored, { secretRef: null });

    // Assess
    expect(result).not.toHaveProperty("secretRef");
  });

  it("clears both on null for both", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { secretRef: null, secretFormat: null });

    // Assess
    expect(result).not.toHaveProperty("secretRef");
    expect(result).not.toHaveProperty("secretFormat");
    expect(result).toMatchObject({ command: "npx", env: { API_TOKEN: "t0k3n" } });
  });

  it("clears only secretFormat on a null format", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { secretFormat: null });

    // Assess
    expect(result).toMatchObject({ secretRef: "github" });
    expect(result).not.toHaveProperty("secretFormat");
  });

  it("rejects a format without a reference", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, { secretRef: null, secretFormat: "json" }));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([
      { field: "secretFormat", message: "Needs a secretRef: the format says how to read that secret." },
    ]);
  });

  it("sets a new reference and format", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { secretRef: "other.secret", secretFormat: "yaml" });

    // Assess
    expect(result).toMatchObject({ secretRef: "other.secret", secretFormat: "yaml" });
  });
});

describe("applyServerPatch validation", () => {
  it("rejects a transport change", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, { transport: "stdio", command: "npx" }));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([
      { field: "transport", message: "Cannot change from http: delete the server and create it again." },
    ]);
  });

  it("accepts the unchanged transport", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { transport: "stdio", timeoutSeconds: 10 });

    // Assess
    expect(result).toMatchObject({ transport: "stdio", timeoutSeconds: 10 });
  });

  it.each([
    ["a url on a stdio server", "stdio", { url: "https://mcp.example.com/mcp" }, unknown("url")],
    ["headers on a stdio server", "stdio", { headers: { A: "b" } }, unknown("headers")],
    ["a command on an http server", "http", { command: "npx" }, unknown("command")],
    ["env on an http server", "http", { env: { A: "b" } }, unknown("env")],
    ["a blank command", "stdio", { command: "   " }, { field: "command", message: "Must not be empty." }],
    ["a secret format on an http server", "http", { secretFormat: "env" }, unknown("secretFormat")],
  ] as const)("rejects a merged result with %s", (_label, transport, patch, problem) => {
    // Prepare
    const stored = transport === "http" ? storedHttp() : storedStdio();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, patch as ServerPatch));

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toContainEqual(problem);
  });

  it("leaves every other field untouched", () => {
    // Prepare
    const stored = storedStdio({ scope: "thread", timeoutSeconds: 45, enabled: false });

    // Act
    const result = applyServerPatch(stored, { timeoutSeconds: 60 });

    // Assess
    expect(result).toStrictEqual({ ...stored, timeoutSeconds: 60 });
  });

  it("replaces args and env as whole values", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, { args: ["serve"], env: { OTHER: "1" } });

    // Assess
    expect(result).toMatchObject({ args: ["serve"], env: { OTHER: "1" } });
  });

  it("renames and changes the url", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const result = applyServerPatch(stored, { name: "renamed", url: "https://mcp.example.com/v2/mcp" });

    // Assess
    expect(result).toStrictEqual({ ...stored, name: "renamed", url: "https://mcp.example.com/v2/mcp" });
  });

  it("does not modify the stored spec", () => {
    // Prepare
    const stored = storedHttp();
    const before = structuredClone(stored);

    // Act
    applyServerPatch(stored, { name: "renamed", headers: { Authorization: "Bearer [SECRET]" } });

    // Assess
    expect(stored).toStrictEqual(before);
  });

  it("returns the stored spec unchanged for an empty patch", () => {
    // Prepare
    const stored = storedStdio();

    // Act
    const result = applyServerPatch(stored, {});

    // Assess
    expect(result).toStrictEqual(stored);
  });
});

describe("auth.clientSecret (the header mask rule, for a secret inside `auth`)", () => {
  const withSecret = () =>
    parseServerSpec({
      name: "m2m",
      url: "https://mcp.example.com/mcp",
      auth: { type: "client_credentials", clientId: "gw", clientSecret: "cl13nt-s3cret" },
    });
  const secretOf = (spec: ServerSpec) => (spec.transport === "http" ? spec.auth?.clientSecret : undefined);

  it("refuses a mask as the secret of a new server", () => {
    // Act
    const error = appErrorFrom(() =>
      parseServerSpec({
        name: "m2m",
        url: "https://mcp.example.com/mcp",
        auth: { type: "client_credentials", clientId: "gw", clientSecret: "[SECRET]" },
      }),
    );

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.detail).toContain(`auth.clientSecret: ${IS_A_MASK}`);
  });

  it("refuses a secret without a client id on `oauth`", () => {
    // Act
    const error = appErrorFrom(() =>
      parseServerSpec({
        name: "o",
        url: "https://mcp.example.com/mcp",
        auth: { type: "oauth", clientSecret: "x" },
      }),
    );

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.extra.errors).toEqual([
      {
        field: "auth.clientSecret",
        message: "Needs a clientId: a client secret goes with the client it belongs to.",
      },
    ]);
  });

  it("keeps the stored secret when the mask comes back; replaces it with a real value; drops it when left out", () => {
    // Prepare
    const stored = withSecret();
    const auth = (clientSecret?: string) => ({
      type: "client_credentials" as const,
      clientId: "gw",
      ...(clientSecret === undefined ? {} : { clientSecret }),
    });

    // Act
    const kept = applyServerPatch(stored, { auth: auth("[SECRET]") as ServerPatch["auth"] });
    const replaced = applyServerPatch(stored, { auth: auth("n3w") as ServerPatch["auth"] });
    const dropped = appErrorFrom(() => applyServerPatch(stored, { auth: auth() as ServerPatch["auth"] }));

    // Assess
    expect(secretOf(kept)).toBe("cl13nt-s3cret");
    expect(secretOf(replaced)).toBe("n3w");
    expect(dropped.code).toBe("server.invalid"); // client_credentials needs its secret
    expect(authSecretReplaced({ auth: auth("[SECRET]") as ServerPatch["auth"] })).toBe(false);
    expect(authSecretReplaced({ auth: auth("n3w") as ServerPatch["auth"] })).toBe(true);
  });

  it("refuses a mask when no secret is stored", () => {
    // Prepare
    const stored = storedHttp();

    // Act
    const error = appErrorFrom(() =>
      applyServerPatch(stored, {
        auth: { type: "oauth", mode: "shared", clientId: "c", clientSecret: "[SECRET]" },
      }),
    );

    // Assess
    expect(error.code).toBe("server.invalid");
    expect(error.detail).toContain(`auth.clientSecret: ${NO_STORED_VALUE}`);
  });

  it("refuses a URL moving to another origin while the stored secret is kept", () => {
    // Prepare
    const stored = withSecret();

    // Act
    const error = appErrorFrom(() => applyServerPatch(stored, { url: "https://elsewhere.example.net/mcp" }));
    const resent = applyServerPatch(stored, {
      url: "https://elsewhere.example.net/mcp",
      auth: { type: "client_credentials", clientId: "gw", clientSecret: "again" },
    });

    // Assess
    expect(error.code).toBe("server.credentials_origin_changed");
    expect(error.detail).not.toContain("cl13nt-s3cret");
    expect(secretOf(resent)).toBe("again");
  });

  it("drops tokens on a change of type, client, secret presence or token URL (upstreamAuthKey)", () => {
    // Prepare
    const stored = withSecret();
    const key = (spec: ServerSpec) => upstreamAuthKey(spec);

    // Act
    const other = (auth: Record<string, unknown>) =>
      key(applyServerPatch(stored, { auth: { clientSecret: "[SECRET]", ...auth } as ServerPatch["auth"] }));

    // Assess
    expect(other({ type: "client_credentials", clientId: "gw" })).toBe(key(stored));
    expect(other({ type: "client_credentials", clientId: "gw2" })).not.toBe(key(stored));
    expect(other({ type: "oauth", clientId: "gw" })).not.toBe(key(stored));
    expect(
      other({ type: "client_credentials", clientId: "gw", tokenUrl: "https://as.example.com/token" }),
    ).not.toBe(key(stored));
  });
});
