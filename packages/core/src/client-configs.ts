/**
 * The configs that connect the common MCP clients to a gateway endpoint — one source for the docs
 * (docs/clients.md holds exactly these, for `npm run dev`'s URL and a `<key>` placeholder; a test
 * compares) and for the console, which fills in a server's or a key's URL and, at a key's creation,
 * the key itself. Pure text: no dependency, so the console bundles it alone.
 */

/** The MCP clients a config is given for, in the order they are shown. */
export const MCP_CLIENTS = ["claude-code", "claude-desktop", "cursor", "vscode"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** The mcp-remote release Claude Desktop's config runs (the one the docs' tests run). */
export const MCP_REMOTE = "mcp-remote@0.15.1";

/** One client's config: which client, where it goes, its language (for a code block) and its text. */
export interface ClientConfig {
  client: McpClient;
  title: string;
  /** Where the text goes, in a few words. */
  where: string;
  language: "sh" | "json";
  text: string;
}

/** What a config connects: the endpoint's URL, the name the client lists it under, and the key. */
export interface ConfigTarget {
  /** The MCP endpoint, e.g. `https://gateway.example.com/mcp` or `…/mcp/<server>`. */
  url: string;
  /** The name the client shows (a server name, or `gateway`). */
  name: string;
  /** The client API key, or a placeholder such as `<key>` for the reader to replace. */
  key: string;
}

/** Each client's config for `target`, in {@link MCP_CLIENTS} order. */
export function clientConfigs(target: ConfigTarget): ClientConfig[] {
  const { url, name, key } = target;
  const q = (value: string) => JSON.stringify(value);
  const bearer = `Bearer ${key}`;
  return [
    {
      client: "claude-code",
      title: "Claude Code",
      where: "run in a terminal",
      language: "sh",
      text: `claude mcp add --transport http ${shellWord(name)} ${shellWord(url)} --header ${q(`Authorization: ${bearer}`)}`,
    },
    {
      client: "claude-desktop",
      title: "Claude Desktop",
      where: "claude_desktop_config.json, through mcp-remote",
      language: "json",
      text: [
        "{",
        `  "mcpServers": {`,
        `    ${q(name)}: {`,
        `      "command": "npx",`,
        `      "args": ["-y", ${q(MCP_REMOTE)}, ${q(url)}, "--header", "Authorization:\${AUTH_HEADER}"],`,
        `      "env": { "AUTH_HEADER": ${q(bearer)} }`,
        "    }",
        "  }",
        "}",
      ].join("\n"),
    },
    {
      client: "cursor",
      title: "Cursor",
      where: "~/.cursor/mcp.json",
      language: "json",
      text: [
        "{",
        `  "mcpServers": {`,
        `    ${q(name)}: {`,
        `      "url": ${q(url)},`,
        `      "headers": { "Authorization": ${q(bearer)} }`,
        "    }",
        "  }",
        "}",
      ].join("\n"),
    },
    {
      client: "vscode",
      title: "VS Code",
      where: ".vscode/mcp.json (VS Code asks for the key once and keeps it in its secret storage)",
      language: "json",
      text: [
        "{",
        `  "inputs": [{ "type": "promptString", "id": ${q(`${name}-key`)}, "description": "MCP Gateway API key", "password": true }],`,
        `  "servers": {`,
        `    ${q(name)}: {`,
        `      "type": "http",`,
        `      "url": ${q(url)},`,
        `      "headers": { "Authorization": ${q(`Bearer \${input:${name}-key}`)} }`,
        "    }",
        "  }",
        "}",
      ].join("\n"),
    },
  ];
}

/** `word` as one shell word: as is when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
