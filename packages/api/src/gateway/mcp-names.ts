/**
 * How `/mcp` names what it aggregates, reversibly: prompts as `<server>__<prompt>`; resource URIs as
 * `<scheme>://mcpgw/<server>/<original URI, percent-encoded>` — the scheme kept, so a `ui://` resource
 * of MCP Apps is still one — and templates the same way, their `{…}` expressions left as they are so
 * a client still expands them.
 */
import { TOOL_SEPARATOR } from "@mcpgw/core";

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const GATEWAY_URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/mcpgw\/([^/]+)\/(.+)$/s;

/** A server's prompt as `/mcp` names it. */
export function gatewayPromptName(server: string, prompt: string): string {
  return `${server}${TOOL_SEPARATOR}${prompt}`;
}

/** The server and its own prompt name behind a `/mcp` prompt name; undefined for any other name. */
export function parseGatewayPromptName(name: string): { server: string; name: string } | undefined {
  const at = name.indexOf(TOOL_SEPARATOR);
  if (at <= 0 || at + TOOL_SEPARATOR.length >= name.length) return undefined;
  return { server: name.slice(0, at), name: name.slice(at + TOOL_SEPARATOR.length) };
}

/** A server's resource URI as `/mcp` shows it. */
export function gatewayUri(server: string, uri: string): string {
  return `${schemeOf(uri)}://mcpgw/${server}/${encodeURIComponent(uri)}`;
}

/** A server's resource template as `/mcp` shows it: expansions of it are gateway URIs of the server. */
export function gatewayUriTemplate(server: string, template: string): string {
  const encoded = template
    .split(/(\{[^{}]*\})/)
    .map((part) => (part.startsWith("{") && part.endsWith("}") ? part : encodeURIComponent(part)))
    .join("");
  return `${schemeOf(template)}://mcpgw/${server}/${encoded}`;
}

/**
 * The server and its own URI behind a gateway URI (or template); undefined for a URI not of the
 * gateway's form — including one whose embedded URI does not carry the scheme it is shown under.
 */
export function parseGatewayUri(uri: string): { server: string; uri: string } | undefined {
  const match = GATEWAY_URI.exec(uri);
  if (!match) return undefined;
  const [, scheme, server, encoded] = match as unknown as [string, string, string, string];
  let original: string;
  try {
    original = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  if (schemeOf(original) !== scheme) return undefined;
  return { server, uri: original };
}

function schemeOf(uri: string): string {
  return SCHEME.exec(uri)?.[1] ?? "mcpgw";
}
