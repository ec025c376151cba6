/**
 * A `Response` whose whole body is already in memory — an upstream answer that arrived complete in
 * one read. Its text and JSON come straight from the bytes; a body stream is made only when someone
 * asks for `body`. An answer that arrives in pieces stays a streamed `Response`.
 */

import { parseJsonMessages } from "./json-messages";

/** The status line and headers of a {@link BufferedResponse}. */
export interface BufferedInit {
  status: number;
  statusText?: string;
  /** Copied into the response's own headers. */
  headers?: Headers;
  /** Or as node's `rawHeaders` (name, value, name, value…): appended to them, nothing in between. */
  rawHeaders?: readonly string[];
  url?: string;
}

/** Appends node's flat `rawHeaders` list to `headers`. */
export function appendRawHeaders(headers: Headers, raw: readonly string[]): void {
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
}

const decoder = new TextDecoder();

/**
 * A complete upstream answer: `bytes` is its body as received; with `json` (the parsed messages of
 * a finished event stream), the body reads as that value's JSON.
 */
export class BufferedResponse extends Response {
  #used = false;
  #stream: ReadableStream<Uint8Array> | undefined;
  /** Parsed already (a finished event stream's messages): what `json()` answers. */
  #json: { value: unknown } | undefined;

  constructor(
    readonly bytes: Uint8Array,
    init: BufferedInit,
    json?: { value: unknown },
  ) {
    super(null, {
      status: init.status,
      statusText: init.statusText ?? "",
      ...(init.headers ? { headers: init.headers } : {}),
    });
    if (init.rawHeaders) appendRawHeaders(this.headers, init.rawHeaders);
    this.#json = json;
    if (init.url !== undefined) Object.defineProperty(this, "url", { value: init.url });
  }

  /**
   * From now on this answer reads as `value`'s JSON — a finished event stream's parsed messages —
   * and says so in its content type (its length no longer applies). Nothing has read it yet.
   */
  readAsJson(value: unknown): this {
    this.#json = { value };
    this.headers.set("content-type", "application/json");
    this.headers.delete("content-length");
    return this;
  }

  /**
   * What `json()` would answer, read without using the body up (so it can still be read): for a look
   * at an answer before deciding who reads it.
   */
  peekJson(): unknown {
    return this.#json ? this.#json.value : parseJsonMessages(decoder.decode(this.bytes));
  }

  /** The body's bytes, once: a body is read at most once, as fetch's are. */
  #take(): Uint8Array {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#content();
  }

  /** What the body reads as: the bytes, or the parsed value's JSON text. */
  #content(): Uint8Array {
    return this.#json ? Buffer.from(JSON.stringify(this.#json.value)) : this.bytes;
  }

  /** The body as a stream, made on first use (what the SDK's SSE reader and a cancel need). */
  get #body(): ReadableStream<Uint8Array> {
    const bytes = this.#content();
    this.#stream ??= new ReadableStream<Uint8Array>({
      start(controller) {
        if (bytes.byteLength > 0) controller.enqueue(bytes);
        controller.close();
      },
    });
    return this.#stream;
  }

  static {
    // Response's body readers and `body`/`bodyUsed` (typed as properties by undici, which a subclass
    // method cannot override) are redefined on the prototype: nothing is made per instance for them.
    Object.defineProperties(BufferedResponse.prototype, {
      text: {
        value: async function text(this: BufferedResponse): Promise<string> {
          return decoder.decode(this.#take());
        },
      },
      json: {
        value: async function json(this: BufferedResponse): Promise<unknown> {
          if (!this.#json) return parseJsonMessages(decoder.decode(this.#take()));
          if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
          this.#used = true;
          return this.#json.value;
        },
      },
      arrayBuffer: {
        value: async function arrayBuffer(this: BufferedResponse): Promise<ArrayBuffer> {
          const bytes = this.#take();
          return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
        },
      },
      clone: {
        value: function clone(this: BufferedResponse): BufferedResponse {
          if (this.#used) throw new TypeError("Response.clone: Body has already been consumed.");
          const { status, statusText, url } = this;
          return new BufferedResponse(
            this.bytes,
            { status, statusText, headers: this.headers, url },
            this.#json,
          );
        },
      },
      body: {
        get(this: BufferedResponse) {
          return this.#body;
        },
      },
      bodyUsed: {
        get(this: BufferedResponse) {
          return this.#used || (this.#stream?.locked ?? false);
        },
      },
    });
  }
}

/** A response's media type: its `content-type` without parameters, lower-cased ("" when none). */
export function mediaTypeOf(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}
