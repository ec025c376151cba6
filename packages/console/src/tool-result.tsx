/**
 * A tool call's result: text parts as text, images as images (a `data:` URL, which the page's CSP
 * allows for images only), structured content and any other part as formatted JSON. A result with
 * `isError` says "Error" in words, not by colour alone.
 */
import type { CallResult, ContentPart } from "./types";

/** Image types shown as images; anything else stays JSON. */
const IMAGE_TYPE = /^image\/[a-z0-9.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

export function ToolResult(props: { result: CallResult; callName: string; elapsedMs: number }) {
  const { result, callName } = props;
  const failed = result.isError;
  return (
    <div class={`result${failed ? " is-error" : ""}`} data-result={failed ? "error" : "ok"}>
      <p class={`result-label${failed ? " is-error" : ""}`}>
        {failed ? "Error: the tool reported a failure" : "Result"}
        <span class="help"> · {Math.round(props.elapsedMs)} ms</span>
      </p>
      {result.content.map((part, index) => (
        <Part key={index} part={part} alt={`Image ${index + 1} returned by ${callName}`} />
      ))}
      {result.content.length === 0 && result.structuredContent === undefined ? (
        <p class="help">The tool returned no content.</p>
      ) : null}
      {result.structuredContent !== undefined ? (
        <>
          <p class="result-sub">Structured content</p>
          <pre class="result-json">{JSON.stringify(result.structuredContent, null, 2)}</pre>
        </>
      ) : null}
    </div>
  );
}

function Part({ part, alt }: { part: ContentPart; alt: string }) {
  if (part.type === "text" && typeof part.text === "string") {
    return <pre class="result-text">{part.text}</pre>;
  }
  if (
    part.type === "image" &&
    typeof part.data === "string" &&
    typeof part.mimeType === "string" &&
    IMAGE_TYPE.test(part.mimeType) &&
    BASE64.test(part.data)
  ) {
    return (
      <img
        class="result-image"
        src={`data:${part.mimeType};base64,${part.data.replace(/\s/g, "")}`}
        alt={`${alt} (${part.mimeType})`}
      />
    );
  }
  return (
    <>
      <p class="result-sub">{part.type} content</p>
      <pre class="result-json">{JSON.stringify(part, null, 2)}</pre>
    </>
  );
}
