import { describe, expect, it } from "vitest";
import { AppError } from "./errors";
import { MAX_QUALIFIED_LENGTH, parseQualifiedName, qualifyToolName, ServerName } from "./names";

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

const SHORTENED = /^(?<server>[A-Za-z0-9_-]+?)__(?<prefix>[A-Za-z0-9_-]*)_(?<hash>[0-9a-f]{8})$/;

describe("ServerName", () => {
  it.each([
    ["a single letter", "a"],
    ["a single upper-case letter", "Z"],
    ["a single digit", "7"],
    ["two characters", "ab"],
    ["inner dash and underscore", "my-server_2"],
    ["dash next to underscore", "a-_-b"],
    ["32 characters", "a".repeat(32)],
    ["32 characters with a punctuated middle", `a${"-_".repeat(15)}b`],
  ])("accepts %s", (_label, name) => {
    // Prepare / Act
    const result = ServerName.safeParse(name);

    // Assess
    expect(result.success).toBe(true);
    expect(result.data).toBe(name);
  });

  it.each([
    ["an empty name", ""],
    ["33 characters", "a".repeat(33)],
    ["a leading dash", "-abc"],
    ["a trailing dash", "abc-"],
    ["a leading underscore", "_abc"],
    ["a trailing underscore", "abc_"],
    ["a lone dash", "-"],
    ["a dot", "a.b"],
    ["a slash", "a/b"],
    ["a space", "a b"],
    ["surrounding whitespace", " ab "],
    ["a trailing newline", "ab\n"],
    ["accented letters", "café"],
    ["non-Latin letters", "сервер"],
    ["full-width letters", "ａｂ"],
    ["an emoji", "a😀b"],
  ])("rejects %s", (_label, name) => {
    // Prepare / Act
    const result = ServerName.safeParse(name);

    // Assess
    expect(result.success).toBe(false);
  });

  it.each([["a__b"], ["a___b"], ["github__tools"], [`${"a".repeat(15)}__${"b".repeat(15)}`]])(
    "rejects %s because it contains the tool separator",
    (name) => {
      // Prepare / Act
      const result = ServerName.safeParse(name);

      // Assess
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => issue.message)).toContainEqual(
        expect.stringContaining("__"),
      );
    },
  );
});

describe("qualifyToolName", () => {
  it("joins server and tool with `__` when the result is short and safe", () => {
    // Prepare
    const server = "github";
    const tool = "create_issue";

    // Act
    const qualified = qualifyToolName(server, tool);

    // Assess
    expect(qualified).toBe("github__create_issue");
  });

  it.each([["get-user"], ["A1"], ["x"], ["already__qualified"]])(
    "keeps the plain form for the safe tool name %s",
    (tool) => {
      // Prepare / Act
      const qualified = qualifyToolName("srv", tool);

      // Assess
      expect(qualified).toBe(`srv__${tool}`);
    },
  );

  it("keeps the plain form at exactly 64 characters", () => {
    // Prepare
    const server = "srv";
    const tool = "t".repeat(MAX_QUALIFIED_LENGTH - server.length - 2);

    // Act
    const qualified = qualifyToolName(server, tool);

    // Assess
    expect(MAX_QUALIFIED_LENGTH).toBe(64);
    expect(qualified).toBe(`srv__${tool}`);
    expect(qualified).toHaveLength(64);
  });

  it("shortens a name that would be 65 characters to at most 64, keeping server and a tool prefix", () => {
    // Prepare
    const server = "srv";
    const tool = "t".repeat(MAX_QUALIFIED_LENGTH - server.length - 2 + 1);

    // Act
    const qualified = qualifyToolName(server, tool);

    // Assess
    expect(`${server}__${tool}`).toHaveLength(65);
    expect(qualified.length).toBeLessThanOrEqual(64);
    expect(qualified).not.toBe(`${server}__${tool}`);
    const match = SHORTENED.exec(qualified);
    expect(match?.groups?.server).toBe("srv");
    expect(tool.startsWith(match?.groups?.prefix ?? "-")).toBe(true);
  });

  it.each([
    ["a one-character server", "s"],
    ["a 3-character server", "srv"],
    ["a 32-character server", "s".repeat(32)],
  ])("uses the full 64 characters for a very long tool name on %s", (_label, server) => {
    // Prepare
    const tool = "very_long_tool_name_".repeat(10);

    // Act
    const qualified = qualifyToolName(server, tool);

    // Assess
    expect(qualified).toHaveLength(64);
    expect(qualified.startsWith(`${server}__`)).toBe(true);
    expect(qualified).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("is deterministic", () => {
    // Prepare
    const tool = `${"x".repeat(80)}.with.dots`;

    // Act
    const first = qualifyToolName("srv", tool);
    const second = qualifyToolName("srv", tool);

    // Assess
    expect(second).toBe(first);
  });

  it("gives distinct names to distinct long tools sharing a long prefix", () => {
    // Prepare
    const prefix = "search_repositories_by_topic_and_language_and_owner_";
    const tools = [`${prefix}ascending`, `${prefix}descending`, `${prefix}ascending_v2`];

    // Act
    const names = tools.map((tool) => qualifyToolName("github", tool));

    // Assess
    expect(new Set(names).size).toBe(tools.length);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
  });

  it.each([
    ["a dot", "files.read"],
    ["a slash", "files/read"],
    ["a space", "read file"],
    ["a colon", "files:read"],
    ["non-ASCII letters", "lire_fichier_é"],
    ["an empty tool name", ""],
  ])("uses the shortened form for a tool name with %s", (_label, tool) => {
    // Prepare / Act
    const qualified = qualifyToolName("srv", tool);

    // Assess
    expect(qualified).toMatch(SHORTENED);
    expect(qualified).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(qualified.startsWith("srv__")).toBe(true);
  });

  it("keeps tools that differ only in an unsafe character apart", () => {
    // Prepare
    const tools = ["files.read", "files/read", "files read", "files_read"];

    // Act
    const names = tools.map((tool) => qualifyToolName("srv", tool));

    // Assess
    expect(names[3]).toBe("srv__files_read");
    expect(new Set(names).size).toBe(tools.length);
  });

  it("hashes the tool name, so the suffix does not depend on the server", () => {
    // Prepare
    const tool = "files.read";

    // Act
    const onA = SHORTENED.exec(qualifyToolName("a", tool))?.groups?.hash;
    const onB = SHORTENED.exec(qualifyToolName("b", tool))?.groups?.hash;

    // Assess
    expect(onA).toMatch(/^[0-9a-f]{8}$/);
    expect(onB).toBe(onA);
  });
});

describe("parseQualifiedName", () => {
  it.each([
    ["github", "create_issue"],
    ["a", "b"],
    ["my-server_2", "get-user"],
    ["s".repeat(32), "t".repeat(30)],
    ["srv", "tool__with__separators"],
  ])("round-trips %s / %s", (server, tool) => {
    // Prepare
    const qualified = qualifyToolName(server, tool);

    // Act
    const parsed = parseQualifiedName(qualified);

    // Assess
    expect(parsed).toEqual({ server, tool });
  });

  it("splits a shortened name into the server and the shortened tool part", () => {
    // Prepare
    const qualified = qualifyToolName("srv", `${"x".repeat(70)}.y`);

    // Act
    const parsed = parseQualifiedName(qualified);

    // Assess
    expect(parsed.server).toBe("srv");
    expect(`srv__${parsed.tool}`).toBe(qualified);
  });

  it("splits at the first separator", () => {
    // Prepare / Act
    const parsed = parseQualifiedName("a___b");

    // Assess
    expect(parsed).toEqual({ server: "a", tool: "_b" });
  });

  it("accepts a qualified name of exactly 64 characters", () => {
    // Prepare
    const qualified = `srv__${"t".repeat(59)}`;

    // Act
    const parsed = parseQualifiedName(qualified);

    // Assess
    expect(qualified).toHaveLength(64);
    expect(parsed).toEqual({ server: "srv", tool: "t".repeat(59) });
  });

  it.each([
    ["no separator", "github_create_issue"],
    ["an empty string", ""],
    ["an empty server", "__create_issue"],
    ["an empty tool", "github__"],
    ["a server with a leading dash", "-github__tool"],
    ["a server with a trailing dash", "github-__tool"],
    ["a server with a dot", "git.hub__tool"],
    ["a non-ASCII server", "gïthub__tool"],
    ["a 33-character server", `${"s".repeat(33)}__tool`],
    ["65 characters", `srv__${"t".repeat(60)}`],
  ])("rejects %s with tool.invalid_name", (_label, qualified) => {
    // Prepare / Act
    const error = appErrorFrom(() => parseQualifiedName(qualified));

    // Assess
    expect(error.code).toBe("tool.invalid_name");
    expect(error.status).toBe(400);
    expect(error.detail).toContain("<server>__<tool>");
  });

  it("names the offending input in the error, truncated when very long", () => {
    // Prepare
    const short = "nope";
    const long = `srv__${"t".repeat(500)}`;

    // Act
    const shortError = appErrorFrom(() => parseQualifiedName(short));
    const longError = appErrorFrom(() => parseQualifiedName(long));

    // Assess
    expect(shortError.detail).toContain("'nope'");
    expect(longError.detail).toContain("…");
    expect(longError.detail.length).toBeLessThan(200);
  });
});
