import { type ToolCallResult, textParts } from "@mcpgw/upstream";

/** Results up to this many characters go as one body (one write); larger ones stream part by part. */
export const WHOLE_BODY_CHARS = 64 * 1024;

/**
 * The REST body of a tool result — `{content, structuredContent?, _meta?, text, isError}`. A small
 * one is sent whole (headers and body in one write); past {@link WHOLE_BODY_CHARS} the rest is
 * written part by part as the client reads it, so a large text is never held twice (once in
 * `content`, once joined into `text`) nor serialised into one string.
 */
export function toolResultResponse(result: ToolCallResult): Response {
  const headers = { "content-type": "application/json" };
  const chunks = resultChunks(result);
  let head = "";
  for (let next = chunks.next(); !next.done; next = chunks.next()) {
    head += next.value;
    if (head.length > WHOLE_BODY_CHARS) return new Response(streamed(head, chunks), { status: 200, headers });
  }
  return new Response(head, { status: 200, headers });
}

/** `head`, then the rest of `chunks`, one chunk per read. */
function streamed(head: string, chunks: Generator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let first: string | undefined = head;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = first === undefined ? chunks.next() : { done: false, value: first };
      first = undefined;
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
}

function* resultChunks(result: ToolCallResult): Generator<string> {
  yield '{"content":[';
  for (const [index, part] of result.content.entries())
    yield `${index > 0 ? "," : ""}${JSON.stringify(part)}`;
  yield "]";
  if (result.structuredContent) yield `,"structuredContent":${JSON.stringify(result.structuredContent)}`;
  if (result._meta) yield `,"_meta":${JSON.stringify(result._meta)}`;
  yield ',"text":"';
  for (const [index, text] of textParts(result.content).entries())
    yield `${index > 0 ? "\\n" : ""}${JSON.stringify(text).slice(1, -1)}`;
  yield `","isError":${result.isError}}`;
}
