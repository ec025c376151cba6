/**
 * The benches' raw HTTP client: REST and JSON-RPC posts over one keep-alive `node:http` Agent, each
 * answer read whole — the cheapest client side of a call, the same for every path it calls.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

/** The arguments of every bench's `echo` call: its answer carries the text back. */
export const ECHO_ARGUMENTS = { text: "hello" };

/** An answer read whole by the raw client. */
interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * A raw client: one keep-alive `node:http` Agent (at most `maxSockets` connections) for every path it
 * calls, so that each costs the client the same. A call's answer is read whole and checked (status 200, the echoed text, no tool error).
 */
export function rawClient(maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const post = (url: URL, headers: OutgoingHttpHeaders, body: string) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const request = httpRequest(
        url,
        { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text: Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  const check = (what: string, answer: RawAnswer) => {
    if (answer.status !== 200 || !answer.text.includes('"hello"') || answer.text.includes('"isError":true'))
      throw new Error(`${what} → ${answer.status} ${answer.text.slice(0, 500)}`);
  };
  return {
    agent,
    /** `POST /v1/tools/{name}/call` at `url` with `token`: `{arguments}` in, the tool's result out. */
    rest(url: string, token: string) {
      const target = new URL(url);
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const body = JSON.stringify({ arguments: ECHO_ARGUMENTS });
      return async () => check(`REST call ${url}`, await post(target, headers, body));
    },
    /**
     * A 2025 session on the MCP endpoint `url` — initialize, then notifications/initialized — and its
     * call: a tools/call POST with the session id and protocol version headers.
     */
    async session(url: string, token?: string) {
      const target = new URL(url);
      const base = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      };
      const opened = await post(
        target,
        base,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: "bench", version: "1" },
          },
        }),
      );
      const sessionId = opened.headers["mcp-session-id"];
      const version = opened.status === 200 ? rpcResult(opened.text)?.protocolVersion : undefined;
      if (typeof sessionId !== "string" || typeof version !== "string")
        throw new Error(`initialize ${url} → ${opened.status} ${opened.text.slice(0, 500)}`);
      const headers = { ...base, "mcp-session-id": sessionId, "mcp-protocol-version": version };
      const initialized = await post(
        target,
        headers,
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      );
      if (initialized.status !== 202)
        throw new Error(`notifications/initialized ${url} → ${initialized.status}`);
      let id = 0;
      return async () => {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name: "echo", arguments: ECHO_ARGUMENTS },
        });
        check(`tools/call ${url}`, await post(target, headers, body));
      };
    },
  };
}

/** The result of the JSON-RPC answer in `text`: a JSON body, or an event stream's message (not its priming event). */
function rpcResult(text: string): { protocolVersion?: unknown } | undefined {
  const json = text.trimStart().startsWith("{")
    ? text
    : text
        .split("\n")
        .find((line) => line.startsWith("data:") && line.includes('"jsonrpc"'))
        ?.slice("data:".length);
  return json ? (JSON.parse(json) as { result?: { protocolVersion?: unknown } }).result : undefined;
}
