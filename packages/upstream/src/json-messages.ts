/**
 * An upstream's JSON answer, read as liberally as its meaning allows: one JSON value, as the protocol
 * says; else — some stateless servers write one JSON-RPC message a line (NDJSON) under
 * `content-type: application/json` — every line a JSON-RPC message, read as the batch they are. Anything
 * else is refused with an error that says what was wrong with the answer.
 */

/** An upstream answer the gateway cannot read; its message says why. */
export class UnreadableAnswerError extends Error {
  override readonly name = "UnreadableAnswerError";
}

/** The messages of a JSON body: its one value, or (NDJSON) the array of its lines' messages. */
export function parseJsonMessages(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
    const messages = lines.length > 1 ? lines.map(jsonRpcMessage) : [];
    if (messages.length > 0 && messages.every((message) => message !== undefined)) return messages;
    throw new UnreadableAnswerError(
      `its answer is not JSON (${error instanceof Error ? error.message : String(error)}), nor one JSON-RPC message a line`,
    );
  }
}

/** A line's JSON-RPC message (an object with `jsonrpc: "2.0"`), else undefined. */
function jsonRpcMessage(line: string): unknown {
  try {
    const value: unknown = JSON.parse(line);
    const plain = typeof value === "object" && value !== null && !Array.isArray(value);
    return plain && (value as { jsonrpc?: unknown }).jsonrpc === "2.0" ? value : undefined;
  } catch {
    return undefined;
  }
}
