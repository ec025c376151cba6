import { describe, expect, it } from "vitest";
import { looksMasked } from "./masking";
import { McpJsonDocument, parseMcpJson } from "./mcp-json";
import { SERVER_NAME_RULE } from "./name-rules";
import { ServerName } from "./names";
import { HTTP_URL, NO_CR_LF_NUL, NOT_BLANK, NOT_MASKED } from "./patterns";
import { HttpUrl } from "./server";

/** A small seeded PRNG (mulberry32): the same cases on every run. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const text = (alphabet: string, min: number, max: number) =>
    Array.from({ length: min + int(max - min + 1) }, () => pick([...alphabet])).join("");
  return { int, pick, text };
}

const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** URL-ish strings near the documented shape: most match it, some just miss. */
function urlCandidates(count: number): string[] {
  const r = random(7);
  const hex = () => r.text("0123456789abcdefABCDEF", 1, 4);
  const host = () =>
    r.pick([
      () => Array.from({ length: 1 + r.int(3) }, () => r.text(`${ALNUM}_-`, 1, 6)).join("."),
      () => Array.from({ length: 4 }, () => String(r.int(300))).join("."),
      () => `[${Array.from({ length: 8 }, hex).join(":")}]`,
      () =>
        `[${Array.from({ length: r.int(4) }, hex).join(":")}::${Array.from({ length: r.int(4) }, hex).join(":")}]`,
      () => `[::ffff:${Array.from({ length: 4 }, () => String(r.int(256))).join(".")}]`,
      () => `xn--${r.text(ALNUM, 1, 4)}.${r.text("abc", 1, 3)}`,
    ])();
  const rest = () => r.text(`${ALNUM}-._~!$&'()*+,;=:@/?#%`, 0, 12);
  return Array.from(
    { length: count },
    () =>
      `${r.pick(["http", "https", "HTTP", "hTtPs"])}://${host()}${r.pick(["", `:${r.int(70_000)}`])}${r.pick(["", "/", "?", "#"])}${rest()}`,
  );
}

describe("HTTP_URL, the upstream URL rule as the API document shows it", () => {
  it("matches only URLs the server accepts (sampled near its shape)", () => {
    // Prepare
    const candidates = urlCandidates(5_000);

    // Act
    const matching = candidates.filter((url) => HTTP_URL.test(url));
    const refused = matching.filter((url) => !HttpUrl.safeParse(url).success);

    // Assess
    expect(matching.length).toBeGreaterThan(1_000);
    expect(refused).toEqual([]);
  });

  it.each([
    ["http://localhost:3000/mcp"],
    ["https://mcp.example.com/mcp?team=1#frag"],
    ["http://127.0.0.1:8080"],
    ["https://[::1]:8443/mcp"],
    ["http://[::ffff:169.254.169.254]/"],
    ["HTTPS://MCP.EXAMPLE.COM/mcp"],
  ])("documents %s as valid", (url) => {
    expect(HTTP_URL.test(url)).toBe(true);
  });

  it.each([
    ["http://0x7f.1/"],
    ["http://2130706433/"],
    ["http://１６９．２５４．１６９．２５４/"],
    ["http://localhost./"],
    ["http://bücher.example/"],
  ])("leaves out %s, which parses (so the upstream policy can name what it refuses)", (url) => {
    expect(HTTP_URL.test(url)).toBe(false);
    expect(HttpUrl.safeParse(url).success).toBe(true);
  });

  it.each([
    ["ftp://x.example/"],
    ["https://user:pass@x.example/"],
    ["http://a.999/"],
    ["http://[1::2::3]/"],
    ["http://x.example:65536/"],
    ["http://x.example/a b"],
    ["http://x.example/%zz"],
    ["http://x.example/#a#b"],
  ])("refuses %s", (url) => {
    expect(HTTP_URL.test(url)).toBe(false);
  });
});

describe("documented patterns that restate a rule checked in code", () => {
  const r = random(11);
  const samples = (alphabet: string, max: number, count = 3_000) =>
    Array.from({ length: count }, () => r.text(alphabet, 0, max));

  it("SERVER_NAME_RULE accepts exactly the names ServerName accepts", () => {
    for (const name of [...samples(`${ALNUM.slice(0, 4)}09_-.`, 34), "a__b", "a_b", "-a", "a-"]) {
      expect(SERVER_NAME_RULE.test(name), name).toBe(ServerName.safeParse(name).success);
    }
  });

  it("NOT_MASKED holds exactly for values that are not masks", () => {
    const values = [
      ...samples("[SECRET] \t\n\u00a0\ufeff\u200bx", 12),
      "[SECRET]",
      "Bearer [SECRET]",
      "  Bearer [SECRET] \n",
      "[SECRET]\u3000",
      "[SECRET]\u200b",
      "x[SECRET]y",
    ];
    for (const value of values)
      expect(NOT_MASKED.test(value), JSON.stringify(value)).toBe(!looksMasked(value));
  });

  it("NOT_BLANK holds exactly for text that trim() leaves non-empty", () => {
    for (const value of [
      ...samples(" \t\n\r\u000b\f\u00a0\u1680\u2007\u2028\u202f\u3000\ufeff\u001c\u200bx", 4),
    ]) {
      expect(NOT_BLANK.test(value), JSON.stringify(value)).toBe(value.trim().length > 0);
    }
  });

  it("NO_CR_LF_NUL refuses CR, LF and NUL anywhere", () => {
    for (const value of ["a\rb", "a\nb", "a\u0000b", "ab\n"]) expect(NO_CR_LF_NUL.test(value)).toBe(false);
    expect(NO_CR_LF_NUL.test("a\tb\u2028")).toBe(true);
  });
});

describe("McpJsonDocument, the import document as the API document shows it", () => {
  const documents: unknown[] = [
    { mcpServers: { a: { command: "npx" } } },
    { mcpServers: { a: { command: " " } } },
    { mcpServers: { a: { type: "stdio", url: "https://x.example" } } },
    { mcpServers: { a: { type: "http", url: "https://x.example", command: "npx" } } },
    { mcpServers: { a: { url: "https://x.example", command: "" } } },
    { mcpServers: { a: { url: "https://x.example", command: "npx" } } },
    { mcpServers: { a: { url: "https://x.example", headers: { "X-Key": "v\n" } } } },
    { mcpServers: { a: { url: "ftp://x.example" } } },
    { mcpServers: { a: { type: "sse", url: "https://x.example/sse", autoApprove: [] } } },
    { mcpServers: { a__b: { command: "npx" } } },
    { mcpServers: { a: { command: "npx", env: { "1BAD": "x" } } } },
    { mcpServers: { a: { command: "npx", args: [1] } } },
    { mcpServers: { a: null } },
    { mcpServers: {} },
    { mcpServers: [] },
    { servers: { a: { command: "npx" } } },
    { servers: { a: { command: "npx" } }, mcpServers: { b: { command: "" } } },
    { mcpServers: { a: { command: "npx" } }, servers: "ignored" },
    { inputs: [], servers: { a: { type: "http", url: "https://x.example" } } },
    {},
    { other: 1 },
  ];

  it.each(documents.map((document) => [JSON.stringify(document), document]))(
    "accepts %s exactly when the import does",
    (_, document) => {
      let imported = true;
      try {
        parseMcpJson(document);
      } catch {
        imported = false;
      }
      expect(McpJsonDocument.safeParse(document).success).toBe(imported);
    },
  );
});
