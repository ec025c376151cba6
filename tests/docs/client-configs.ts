/**
 * The MCP client configs of the docs, read as their clients read them: the fenced block under a
 * heading, the example URL and key swapped for a running gateway's, then each client's own parsing —
 * `claude mcp add`'s argv (Claude Code), `mcpServers` entries that run a command (Claude Desktop) or
 * name a `url` (Cursor), and `servers` entries with `${input:…}` prompts (VS Code).
 */

/** The gateway URL the docs write (`npm run dev`'s). */
export const DOC_ORIGIN = "http://127.0.0.1:8787";
/** Where the docs put the client API key. */
export const KEY_PLACEHOLDER = "<key>";

/** An HTTP client's connection: the URL and the headers it sends on every request. */
export interface HttpConnection {
  url: string;
  headers: Record<string, string>;
}

/** A stdio server entry: the command a client spawns, its arguments and the env it adds. */
export interface CommandEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The body of each fenced block of `lang` (```lang) in a markdown text, in order. */
export function codeBlocks(markdown: string, lang: string): string[] {
  const fence = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm");
  return [...markdown.matchAll(fence)].map((match) => match[1] ?? "");
}

/** The first fenced block of `lang` in the section under the heading `## <heading>`. */
export function blockUnder(markdown: string, heading: string, lang: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf("\n## ");
  const [block] = codeBlocks(end < 0 ? rest : rest.slice(0, end), lang);
  if (block === undefined) throw new Error(`no \`\`\`${lang} block under "## ${heading}"`);
  return block;
}

/**
 * The config with the docs' URL and key replaced by `origin` and `key`, as a newcomer edits it. Throws
 * when the config does not write the docs' URL (and `<key>`, when `withKey`): a config pointing
 * elsewhere would not be what the test runs.
 */
export function fillIn(config: string, origin: string, key: string, withKey = true): string {
  if (!config.includes(DOC_ORIGIN)) throw new Error(`the config does not name ${DOC_ORIGIN}`);
  if (withKey && !config.includes(KEY_PLACEHOLDER)) throw new Error(`the config has no ${KEY_PLACEHOLDER}`);
  return config.replaceAll(DOC_ORIGIN, origin).replaceAll(KEY_PLACEHOLDER, key);
}

/**
 * A one-line command's words as a POSIX shell makes them from literals: whitespace splits, single and
 * double quotes group. Anything the shell would expand or redirect outside quotes (`$ \` < > | ; & \\`)
 * or inside double quotes (`$ \` \\`) is refused: a documented command must paste as it reads.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i] ?? "";
    if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      const close = line.indexOf(char, i + 1);
      if (close < 0) throw new Error(`unclosed ${char} in: ${line}`);
      const quoted = line.slice(i + 1, close);
      if (char === '"' && /[$`\\]/.test(quoted)) throw new Error(`the shell would expand "${quoted}"`);
      word = (word ?? "") + quoted;
      i = close;
    } else if (/[$`<>|;&\\]/.test(char)) {
      throw new Error(`the shell would act on ${char} in: ${line}`);
    } else {
      word = (word ?? "") + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** A `Name: value` header as clients split it: at the first colon, the value trimmed. */
export function parseHeader(text: string): [string, string] {
  const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.*?)\s*$/.exec(text);
  if (!match) throw new Error(`not a "Name: value" header: ${text}`);
  return [match[1] ?? "", match[2] ?? ""];
}

/**
 * What `claude mcp add [options] <name> <url>` makes of its words: `-t/--transport <type>`,
 * `-s/--scope <scope>`, and `-H/--header <header...>` — variadic, as Claude Code declares it, so it
 * takes every following word up to the next option (a name or URL after it would be read as headers).
 */
export function parseClaudeMcpAdd(words: string[]): { name: string; transport: string } & HttpConnection {
  if (words[0] !== "claude" || words[1] !== "mcp" || words[2] !== "add") {
    throw new Error(`not a claude mcp add command: ${words.join(" ")}`);
  }
  const positional: string[] = [];
  const headers: Record<string, string> = {};
  let transport = "stdio"; // Claude Code's default
  for (let i = 3; i < words.length; i++) {
    const word = words[i] ?? "";
    if (word === "-t" || word === "--transport") transport = words[++i] ?? "";
    else if (word === "-s" || word === "--scope") i++;
    else if (word === "-H" || word === "--header") {
      while (i + 1 < words.length && !words[i + 1]?.startsWith("-")) {
        const [name, value] = parseHeader(words[++i] ?? "");
        headers[name] = value;
      }
    } else if (word.startsWith("-")) throw new Error(`an option this test does not know: ${word}`);
    else positional.push(word);
  }
  const [name, url, ...rest] = positional;
  if (!name || !url || rest.length > 0) throw new Error(`expected <name> <url>, got ${positional.join(" ")}`);
  return { name, transport, url, headers };
}

/** One named entry of a JSON config's server map (`mcpServers` or `servers`). */
function entryOf(config: unknown, map: string, name: string): Record<string, unknown> {
  const entry = (config as Record<string, Record<string, unknown> | undefined>)[map]?.[name];
  if (!entry || typeof entry !== "object") throw new Error(`no ${map}.${name} entry`);
  return entry as Record<string, unknown>;
}

function stringRecord(value: unknown, what: string): Record<string, string> {
  const record = (value ?? {}) as Record<string, unknown>;
  for (const [key, inner] of Object.entries(record)) {
    if (typeof inner !== "string") throw new Error(`${what}.${key} is not a string`);
  }
  return record as Record<string, string>;
}

/** A Claude Desktop `mcpServers` entry: stdio only, so it must name a `command`. */
export function desktopEntry(json: string, name: string): CommandEntry {
  const entry = entryOf(JSON.parse(json), "mcpServers", name);
  if (typeof entry.command !== "string") throw new Error("Claude Desktop runs only command (stdio) entries");
  const args = entry.args ?? [];
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) {
    throw new Error("args must be strings");
  }
  return { command: entry.command, args, env: stringRecord(entry.env, "env") };
}

/**
 * The arguments an `npx [-y] <package>@<version> …` command passes to the package's bin, once npx has
 * resolved it: the doc pins `version` (the one the tests run), so the config a reader copies is the
 * one tested.
 */
export function npxPackageArgs(entry: CommandEntry, pkg: string, version: string): string[] {
  if (entry.command !== "npx") throw new Error(`expected npx, got ${entry.command}`);
  const at = entry.args.findIndex((arg) => !arg.startsWith("-"));
  const spec = entry.args[at] ?? "";
  if (spec !== `${pkg}@${version}`) throw new Error(`npx runs ${spec}, not ${pkg}@${version}`);
  return entry.args.slice(at + 1);
}

/** A Cursor `mcpServers` entry with a `url`: streamable HTTP with its `headers`. */
export function cursorEntry(json: string, name: string): HttpConnection {
  const entry = entryOf(JSON.parse(json), "mcpServers", name);
  if (typeof entry.url !== "string") throw new Error("a remote Cursor entry names a url");
  return { url: entry.url, headers: stringRecord(entry.headers, "headers") };
}

/**
 * A VS Code `servers` entry of type `http`, each `${input:<id>}` in its URL and headers replaced by the
 * answer to that declared `promptString` input (VS Code asks the user for it).
 */
export function vscodeEntry(json: string, name: string, answers: Record<string, string>): HttpConnection {
  const config = JSON.parse(json) as { inputs?: Array<{ type?: string; id?: string }> };
  const entry = entryOf(config, "servers", name);
  if (entry.type !== "http") throw new Error(`expected type "http", got ${String(entry.type)}`);
  if (typeof entry.url !== "string") throw new Error("an http entry names a url");
  const declared = new Set(
    (config.inputs ?? []).filter((input) => input.type === "promptString").map((input) => input.id),
  );
  const resolve = (text: string) =>
    text.replace(/\$\{input:([^}]+)\}/g, (_, id: string) => {
      const answer = answers[id];
      if (!declared.has(id) || answer === undefined)
        throw new Error(`\${input:${id}} is not a declared input`);
      return answer;
    });
  const headers = Object.fromEntries(
    Object.entries(stringRecord(entry.headers, "headers")).map(([key, value]) => [key, resolve(value)]),
  );
  return { url: resolve(entry.url), headers };
}

/**
 * The headers `mcp-remote` sends for these arguments, worked out as it does: each `--header Name:value`
 * split at the first colon, then every `${VAR}` in a value replaced from its environment (one not set
 * stays as written).
 */
export function mcpRemoteHeaders(args: string[], env: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  args.forEach((arg, i) => {
    if (arg !== "--header" || i + 1 >= args.length) return;
    const match = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(args[i + 1] ?? "");
    if (!match) throw new Error(`mcp-remote ignores the header ${args[i + 1]}`);
    headers[match[1] ?? ""] = (match[2] ?? "").replace(/\$\{([^}]+)}/g, (text, name: string) =>
      Object.hasOwn(env, name) ? (env[name] ?? "") : text,
    );
  });
  return headers;
}
