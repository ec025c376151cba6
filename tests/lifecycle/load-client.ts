/**
 * A load client of the data plane: tool calls by REST (`POST /v1/tools/{name}/call`) or on one MCP
 * session of `/mcp`, each settled into one {@link Outcome} — answered, or an HTTP-like status with the
 * gateway's error code — so load tests and benches count refusals and 5xx the same way.
 */

import { ERROR_CODES } from "@mcpgw/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { TEST_ADMIN_TOKEN } from "../support/app";

/**
 * How one call ended: `ok`, or the HTTP status, code and detail. An MCP error has the status its
 * gateway code has on REST (an unknown code: 500 for a JSON-RPC internal error, else 400).
 */
export type Outcome = { ok: true } | Refused;

/** A call that did not answer. */
export type Refused = { ok: false; status: number; code: string; detail: string };

export interface LoadClient {
  baseUrl: string;
  mcp: Client;
  close(): Promise<void>;
}

/** Opens a client with its own `/mcp` session (the admin token as its bearer). */
export async function openLoadClient(baseUrl: string): Promise<LoadClient> {
  const mcp = new Client({ name: "load-client", version: "1" });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
    }),
  );
  return { baseUrl, mcp, close: () => mcp.close() };
}

/** Calls `tool` by REST or on the client's `/mcp` session; never throws. */
export async function callOutcome(
  client: LoadClient,
  via: "rest" | "mcp",
  tool: string,
  args: Record<string, unknown>,
): Promise<Outcome> {
  return via === "rest" ? restCall(client.baseUrl, tool, args) : mcpCall(client.mcp, tool, args);
}

async function restCall(baseUrl: string, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const response = await fetch(`${baseUrl}/v1/tools/${encodeURIComponent(tool)}/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ arguments: args }),
    });
    const text = await response.text();
    if (response.status === 200) return { ok: true };
    let problem: { code?: string; detail?: string } = {};
    try {
      problem = JSON.parse(text);
    } catch {
      problem = { detail: text.slice(0, 200) };
    }
    return {
      ok: false,
      status: response.status,
      code: problem.code ?? "",
      detail: problem.detail ?? "",
    };
  } catch (error) {
    return { ok: false, status: 599, code: "network", detail: String(error) };
  }
}

async function mcpCall(mcp: Client, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const result = await mcp.callTool({ name: tool, arguments: args });
    if (result.isError) return { ok: false, status: 200, code: "tool.error", detail: JSON.stringify(result) };
    return { ok: true };
  } catch (error) {
    if (error instanceof StreamableHTTPError)
      return { ok: false, status: error.code ?? 599, code: "http", detail: error.message };
    if (error instanceof McpError) {
      const data = error.data as { code?: string } | undefined;
      const known = data?.code ? ERROR_CODES[data.code as keyof typeof ERROR_CODES] : undefined;
      const status = known?.[0] ?? (error.code === ErrorCode.InternalError ? 500 : 400);
      return { ok: false, status, code: data?.code ?? String(error.code), detail: error.message };
    }
    return { ok: false, status: 599, code: "network", detail: String(error) };
  }
}
