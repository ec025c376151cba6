import { describe, expect, it } from "vitest";
import { parseJsonMessages, UnreadableAnswerError } from "./json-messages";

const note = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } };
const answer = { jsonrpc: "2.0", id: 1, result: { content: [] } };

describe("parseJsonMessages", () => {
  it("reads one JSON value as it is", () => {
    expect(parseJsonMessages(JSON.stringify(answer))).toEqual(answer);
    expect(parseJsonMessages(JSON.stringify([note, answer]))).toEqual([note, answer]);
  });

  it("reads one JSON-RPC message a line (NDJSON) as their batch", () => {
    expect(parseJsonMessages(`${JSON.stringify(note)}\n${JSON.stringify(answer)}\n`)).toEqual([note, answer]);
    expect(parseJsonMessages(`${JSON.stringify(note)}\r\n\r\n${JSON.stringify(answer)}`)).toEqual([
      note,
      answer,
    ]);
  });

  it("refuses anything else, saying it is not JSON", () => {
    for (const text of [
      "{ nope",
      `${JSON.stringify(answer)}\n{ nope`,
      `${JSON.stringify(answer)}\n[1]`,
      "1\n2",
    ]) {
      expect(() => parseJsonMessages(text)).toThrow(UnreadableAnswerError);
      expect(() => parseJsonMessages(text)).toThrow(/its answer is not JSON/);
    }
  });
});
