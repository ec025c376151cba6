import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderSecretFile } from "./secret-file";
import { SECRET_FORMATS } from "./server";

/** java.util.Properties#load for the single-line entries the renderer writes (no continuations, no comments). */
function loadProperties(text: string): Record<string, string> {
  const unescapeText = (part: string) =>
    part.replace(/\\(u[0-9a-fA-F]{4}|[\s\S])/g, (_match, escaped: string) => {
      if (escaped.length === 5) return String.fromCharCode(Number.parseInt(escaped.slice(1), 16));
      return ({ t: "\t", n: "\n", r: "\r", f: "\f" } as Record<string, string>)[escaped] ?? escaped;
    });
  const result: Record<string, string> = {};
  for (const line of text.split("\n").filter((item) => item !== "")) {
    let end = 0;
    while (end < line.length && !"=: \t\f".includes(line.charAt(end)))
      end += line.charAt(end) === "\\" ? 2 : 1;
    let start = end;
    while (start < line.length && " \t\f".includes(line.charAt(start))) start++;
    if ("=:".includes(line.charAt(start)) && start < line.length) {
      start++;
      while (start < line.length && " \t\f".includes(line.charAt(start))) start++;
    }
    result[unescapeText(line.slice(0, end))] = unescapeText(line.slice(start));
  }
  return result;
}

/** Reads the renderer's YAML: one `<JSON string>: <JSON string>` mapping entry per line. */
function loadYamlLines(text: string): Record<string, string> {
  if (text === "{}\n") return {};
  const result: Record<string, string> = {};
  for (const line of text.split("\n").filter((item) => item !== "")) {
    const match = /^("(?:[^"\\]|\\.)*"): (.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) throw new Error(`not a "key": "value" line: ${line}`);
    const key: unknown = JSON.parse(match[1]);
    const value: unknown = JSON.parse(match[2]);
    if (typeof key !== "string" || typeof value !== "string") throw new Error(`not a string pair: ${line}`);
    result[key] = value;
  }
  return result;
}

/** What `/bin/sh` sees after sourcing an env file, for each key. */
function sourceWithShell(text: string, keys: string[]): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "secret-file-test-"));
  try {
    const file = join(dir, "secrets.env");
    writeFileSync(file, text);
    const script = `. "$1"; printf '%s\\0' ${keys.map((key) => `"$${key}"`).join(" ")}`;
    const output = execFileSync("/bin/sh", ["-c", script, "sh", file], { encoding: "utf8" });
    const values = output.split("\0").slice(0, keys.length);
    return Object.fromEntries(keys.map((key, index) => [key, values[index] ?? ""]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Values that need escaping in at least one format. */
const TRICKY = {
  SPACES: "hello world",
  LEADING_SPACE: " leading",
  QUOTES: `say "hi" and 'bye'`,
  NEWLINES: "line1\nline2\r\nline3",
  TAB: "a\tb",
  EQUALS: "a=b",
  COLON: "host:5432",
  HASH: "#not-a-comment",
  BANG: "!important",
  UNICODE: "héllo wörld € 😀",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion that must stay literal
  DOLLAR: "$HOME and ${PATH}",
  COMMAND: "`id` $(id)",
  BACKSLASH: "C:\\path\\to",
  EMPTY: "",
  YAMLISH: "- [x]: {y} & *z | > ~ null true 0x10",
};

describe("renderSecretFile key order and layout", () => {
  const values = { b: "2", a: "1", C: "3", _u: "4", "1d": "5" };

  it.each(SECRET_FORMATS)("sorts keys by code unit in %s", (format) => {
    // Prepare / Act
    const text = renderSecretFile(values, format);

    // Assess
    const positions = ["1d", "C", "_u", "a", "b"].map((key) => text.indexOf(`${key}`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
  });

  it.each(SECRET_FORMATS)("ends %s output with exactly one newline", (format) => {
    // Prepare / Act
    const text = renderSecretFile(values, format);

    // Assess
    expect(text.endsWith("\n")).toBe(true);
    expect(text.endsWith("\n\n")).toBe(false);
  });

  it.each(SECRET_FORMATS)("does not modify the input map in %s", (format) => {
    // Prepare
    const input = { b: "2", a: "1" };

    // Act
    renderSecretFile(input, format);

    // Assess
    expect(Object.keys(input)).toEqual(["b", "a"]);
  });
});

describe("renderSecretFile env", () => {
  it("writes sorted KEY=value lines", () => {
    // Prepare / Act
    const text = renderSecretFile(
      { TOKEN: "abc123", API_URL: "https://api.example.com/v1", EMPTY: "" },
      "env",
    );

    // Assess
    expect(text).toBe("API_URL=https://api.example.com/v1\nEMPTY=\nTOKEN=abc123\n");
  });

  it.each([
    ["spaces", "hello world", '"hello world"'],
    ["double quotes", 'say "hi"', '"say \\"hi\\""'],
    ["single quotes", "it's", `"it's"`],
    ["a newline", "a\nb", '"a\\nb"'],
    ["a carriage return", "a\rb", '"a\\rb"'],
    ["an equals sign", "a=b", "a=b"],
    ["a colon", "a:b", "a:b"],
    ["a hash", "a#b", '"a#b"'],
    ["unicode", "héllo", '"héllo"'],
    ["a dollar", "$HOME", '"\\$HOME"'],
    ["a backtick", "`id`", '"\\`id\\`"'],
    ["a backslash", "a\\b", '"a\\\\b"'],
    ["safe punctuation", "user@host/path.v1_2%+,-", "user@host/path.v1_2%+,-"],
  ])("escapes %s", (_label, value, expected) => {
    // Prepare / Act
    const text = renderSecretFile({ KEY: value }, "env");

    // Assess
    expect(text).toBe(`KEY=${expected}\n`);
  });

  it("keeps every single-line value exact when sourced by a POSIX shell", () => {
    // Prepare
    const values = Object.fromEntries(
      Object.entries(TRICKY).filter(([, value]) => !/[\r\n]/.test(value)),
    ) as Record<string, string>;
    const text = renderSecretFile(values, "env");

    // Act
    const seen = sourceWithShell(text, Object.keys(values));

    // Assess
    expect(seen).toEqual(values);
  });

  it("renders an empty map as an empty file", () => {
    // Prepare / Act / Assess
    expect(renderSecretFile({}, "env")).toBe("");
  });
});

describe("renderSecretFile properties", () => {
  it("writes sorted key=value lines", () => {
    // Prepare / Act
    const text = renderSecretFile({ "db.user": "app", "db.password": "pa55" }, "properties");

    // Assess
    expect(text).toBe("db.password=pa55\ndb.user=app\n");
  });

  it.each([
    ["a space in the middle", "a b", "a b"],
    ["a leading space", " a", "\\ a"],
    ["a trailing space", "a ", "a "],
    ["separators and comment marks", "a=b:c#d!e", "a\\=b\\:c\\#d\\!e"],
    ["line breaks and a tab", "1\n2\r3\t4", "1\\n2\\r3\\t4"],
    ["a backslash", "C:\\dir", "C\\:\\\\dir"],
    ["Latin-1", "héllo", "h\\u00e9llo"],
    ["the euro sign", "€", "\\u20ac"],
    ["an emoji (surrogate pair)", "😀", "\\ud83d\\ude00"],
    ["control characters", "\u0001\u007f", "\\u0001\\u007f"],
    ["quotes and a dollar", `"$x'`, `"$x'`],
  ])("escapes %s in a value", (_label, value, expected) => {
    // Prepare / Act
    const text = renderSecretFile({ key: value }, "properties");

    // Assess
    expect(text).toBe(`key=${expected}\n`);
  });

  it.each([
    ["a space", "my key", "my\\ key"],
    ["an equals sign", "a=b", "a\\=b"],
    ["a colon", "a:b", "a\\:b"],
    ["a leading hash", "#k", "\\#k"],
    ["a leading bang", "!k", "\\!k"],
    ["unicode", "clé", "cl\\u00e9"],
  ])("escapes %s in a key", (_label, key, expected) => {
    // Prepare / Act
    const text = renderSecretFile({ [key]: "v" }, "properties");

    // Assess
    expect(text).toBe(`${expected}=v\n`);
  });

  it("loads back exactly with java.util.Properties rules", () => {
    // Prepare
    const values = { ...TRICKY, "key with spaces": "v", "k=e:y": "w", "#hash": "x", ünï: "y" };

    // Act
    const loaded = loadProperties(renderSecretFile(values, "properties"));

    // Assess
    expect(loaded).toEqual(values);
  });

  it("writes only printable ASCII", () => {
    // Prepare / Act
    const text = renderSecretFile(TRICKY, "properties");

    // Assess
    expect(text).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it("renders an empty map as an empty file", () => {
    // Prepare / Act / Assess
    expect(renderSecretFile({}, "properties")).toBe("");
  });
});

describe("renderSecretFile json", () => {
  it("writes a sorted, two-space indented object", () => {
    // Prepare / Act
    const text = renderSecretFile({ token: "abc", api_url: "https://x.example" }, "json");

    // Assess
    expect(text).toBe('{\n  "api_url": "https://x.example",\n  "token": "abc"\n}\n');
  });

  it("escapes quotes, backslashes and control characters", () => {
    // Prepare / Act
    const text = renderSecretFile({ k: 'a"b\\c\nd\te\u0001' }, "json");

    // Assess
    expect(text).toBe('{\n  "k": "a\\"b\\\\c\\nd\\te\\u0001"\n}\n');
  });

  it("parses back exactly", () => {
    // Prepare
    const text = renderSecretFile(TRICKY, "json");

    // Act
    const parsed: unknown = JSON.parse(text);

    // Assess
    expect(parsed).toEqual(TRICKY);
    expect(Object.keys(parsed as object)).toEqual(Object.keys(TRICKY).sort());
  });

  it("renders an empty map as an empty object", () => {
    // Prepare / Act / Assess
    expect(renderSecretFile({}, "json")).toBe("{}\n");
  });
});

describe("renderSecretFile yaml", () => {
  it("writes sorted, double-quoted key: value lines", () => {
    // Prepare / Act
    const text = renderSecretFile({ token: "abc", api_url: "https://x.example" }, "yaml");

    // Assess
    expect(text).toBe('"api_url": "https://x.example"\n"token": "abc"\n');
  });

  it.each([
    ["quotes", 'say "hi"', '"say \\"hi\\""'],
    ["a newline", "a\nb", '"a\\nb"'],
    ["a YAML boolean", "true", '"true"'],
    ["a YAML null", "null", '"null"'],
    ["a number", "0x10", '"0x10"'],
    ["a colon and hash", "a: b # c", '"a: b # c"'],
    ["unicode", "héllo 😀", '"héllo 😀"'],
    ["a dollar", "$HOME", '"$HOME"'],
    ["an empty string", "", '""'],
    ["a line separator", "a\u2028b", '"a\\u2028b"'],
    ["a DEL character", "a\u007fb", '"a\\u007fb"'],
  ])("quotes %s", (_label, value, expected) => {
    // Prepare / Act
    const text = renderSecretFile({ key: value }, "yaml");

    // Assess
    expect(text).toBe(`"key": ${expected}\n`);
  });

  it("writes lines that are valid JSON on both sides of ': ' and load back exactly", () => {
    // Prepare
    const values = { ...TRICKY, 'key": "with': "separator", "key: colon": "v", ünï: "y" };

    // Act
    const loaded = loadYamlLines(renderSecretFile(values, "yaml"));

    // Assess
    expect(loaded).toEqual(values);
  });

  it("writes only characters YAML allows, and no YAML 1.1 line breaks inside scalars", () => {
    // Prepare
    const values = { ...TRICKY, CONTROL: "\u0000\u0007\u001b\u007f\u0085\u009f\u2028\u2029\ufeff\uffff" };

    // Act
    const text = renderSecretFile(values, "yaml");

    // Assess
    expect(text).toMatch(/^[\t\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd\u{10000}-\u{10ffff}]*$/u);
    expect(text.split("\n")).toHaveLength(Object.keys(values).length + 1);
    expect(loadYamlLines(text)).toEqual(values);
  });

  it("renders an empty map as an empty YAML mapping", () => {
    // Prepare / Act / Assess
    expect(renderSecretFile({}, "yaml")).toBe("{}\n");
  });
});
