/**
 * A server as a `.mcp.json` entry: what `parseMcpJson` (an import) reads back as the same server, with
 * the values it is given — the API's masked ones, where the console exports it, so no secret leaves;
 * an import then refuses the masks until real values replace them. Only what a `.mcp.json` holds is
 * kept: the timeout, OAuth, scope, secret reference and child limits are not. No dependency, so the
 * console bundles it alone.
 */

/** What an entry is made from: a server's spec fields as the API shows them (its kind's are read). */
export interface McpJsonSource {
  transport: "http" | "stdio";
  url?: string | undefined;
  headers?: Record<string, string> | undefined;
  relaySessionLogs?: boolean | undefined;
  command?: string | undefined;
  args?: string[] | undefined;
  env?: Record<string, string> | undefined;
  isolation?: string | undefined;
  enabled: boolean;
  pinning?: string | undefined;
}

/** The entry, its keys as the clients' configs and the import name them (defaults left out). */
export function mcpJsonEntry(server: McpJsonSource): Record<string, unknown> {
  const common = {
    ...(server.enabled ? {} : { disabled: true }),
    ...(server.pinning ? { pinning: server.pinning } : {}),
  };
  if (server.transport === "http") {
    return {
      type: "http",
      url: server.url,
      ...(server.headers && Object.keys(server.headers).length > 0 ? { headers: server.headers } : {}),
      ...(server.relaySessionLogs ? { relaySessionLogs: true } : {}),
      ...common,
    };
  }
  return {
    command: server.command,
    ...(server.args && server.args.length > 0 ? { args: server.args } : {}),
    ...(server.env && Object.keys(server.env).length > 0 ? { env: server.env } : {}),
    ...(server.isolation && server.isolation !== "shared" ? { isolation: server.isolation } : {}),
    ...common,
  };
}

/** A whole `.mcp.json` document of one server, as text (two-space indent). */
export function mcpJsonDocument(name: string, server: McpJsonSource): string {
  return JSON.stringify({ mcpServers: { [name]: mcpJsonEntry(server) } }, null, 2);
}
