import { type ToolCallResult, textParts } from "@mcpgw/upstream";

/**
 * The REST body of a tool result — `{content, structuredContent?, _meta?, text, isError}` — written
 * part by part as the client reads it, so a large text is never held twice (once in `content`, once
 * joined into `text`) nor serialised into one string.
 */
export function toolResultResponse(result: ToolCallResult): Response {
  const encoder = new TextEncoder();
  const chunks = resultChunks(result);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
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
