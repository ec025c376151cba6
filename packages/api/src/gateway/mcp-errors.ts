/** What crosses the MCP wire when something fails, and the opaque list cursor. */
import { storeUnavailable } from "@mcpgw/aws";
import { AppError, RPC } from "@mcpgw/core";
import { CallFailure, errorDataAsSent } from "@mcpgw/upstream";
import { ProtocolError } from "@modelcontextprotocol/server";

/**
 * Errors that cross the wire as JSON-RPC, from the one error table: an upstream's own JSON-RPC error
 * (on tools/call as on every forwarded request) passes through with its code, its (scrubbed) message
 * and its data; a gateway problem carries its table code and its dotted code in `data.code` (the store
 * unavailable is `store.unavailable`, with `data.retryAfter`); anything else is an internal error that
 * says nothing more.
 */
export function toMcpError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const upstream = upstreamRpcError(error);
  if (upstream) return upstream;
  if (error instanceof CallFailure && error.kind === "too_large")
    return toMcpError(new AppError("upstream.response_too_large", error.message));
  if (error instanceof CallFailure)
    return new ProtocolError(RPC.INTERNAL_ERROR, `upstream ${error.kind}: ${error.message}`);
  const unavailable = error instanceof AppError ? undefined : storeUnavailable(error);
  if (unavailable) return toMcpError(unavailable);
  if (!(error instanceof AppError)) return new ProtocolError(RPC.INTERNAL_ERROR, "internal error");
  return new ProtocolError(error.rpcCode, error.detail, { code: error.code, ...error.extra });
}

/** An upstream's JSON-RPC error behind `error` (through AppError and CallFailure causes), as sent on. */
function upstreamRpcError(error: unknown): ProtocolError | undefined {
  for (let link = error, depth = 0; link instanceof Error && depth < 4; link = link.cause, depth++) {
    if (link instanceof CallFailure && link.kind === "rpc" && link.cause instanceof ProtocolError) {
      // The failure's text is already scrubbed of credentials; the SDK's "MCP error -N:" prefixes go.
      return new ProtocolError(
        link.cause.code,
        link.message.replace(/^(MCP error -?\d+: )+/, ""),
        boundedData(link.cause),
      );
    }
  }
  return undefined;
}

/** The largest upstream error `data` passed on, as JSON bytes. */
export const MAX_ERROR_DATA_BYTES = 64 * 1024;

/**
 * An upstream error's `data` as sent, when it is at most {@link MAX_ERROR_DATA_BYTES} as JSON; else what
 * the SDK kept of it (a -32042's elicitations) within that bound; else none.
 */
function boundedData(error: ProtocolError): unknown {
  for (const data of [errorDataAsSent(error), error.data]) {
    if (data === undefined) return undefined;
    if (Buffer.byteLength(JSON.stringify(data) ?? "") <= MAX_ERROR_DATA_BYTES) return data;
  }
  return undefined;
}

/**
 * A gateway problem as a JSON-RPC error response: the HTTP status and JSON-RPC code from the table
 * (`status` overrides the former), the dotted code in `data.code`; `Retry-After` when it says when.
 */
export function rpcErrorResponse(
  error: AppError,
  id: string | number | null = null,
  status = error.status,
): Response {
  const body = {
    jsonrpc: "2.0",
    error: { code: error.rpcCode, message: error.detail, data: { code: error.code, ...error.extra } },
    id,
  };
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (status === 413) headers.connection = "close";
  if (typeof error.extra.retryAfter === "number") headers["retry-after"] = String(error.extra.retryAfter);
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * A refused MCP request (`rate_limited`): one JSON-RPC request gets its error response as its answer —
 * HTTP 200, what MCP clients hand to their caller (code -32029, `data.retryAfter`); anything else (a
 * GET stream, a notification, a batch) is HTTP 429 with the same error. Both carry `Retry-After`.
 */
export function refusedResponse(error: AppError, body: unknown): Response {
  const { id, method } = (Array.isArray(body) ? {} : (body ?? {})) as { id?: unknown; method?: unknown };
  const request = typeof method === "string" && (typeof id === "string" || typeof id === "number");
  return request ? rpcErrorResponse(error, id, 200) : rpcErrorResponse(error);
}

/** The list cursor for the page starting at `offset`: opaque to clients, as MCP asks. */
export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString("base64url");
}

/** The offset a cursor stands for (0 without one); one that names no whole offset ≥ 0 is invalid params. */
export function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  try {
    const offset = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown }).o;
    if (typeof offset === "number" && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new ProtocolError(RPC.INVALID_PARAMS, "invalid cursor");
}
