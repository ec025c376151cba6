import {
  type CallToolRequest,
  Client,
  type JSONRPCErrorResponse,
  type JSONRPCResponse,
  type RequestOptions,
  type StandardSchemaV1,
} from "@modelcontextprotocol/client";

/** The era codec's own result check, as `Client.request()` would use it. */
type ResultCheck = StandardSchemaV1<unknown, Record<string, unknown>>;

/**
 * The SDK's `Client`, with a `tools/call` that goes through the same request funnel (era gate, result
 * decoding, the era's own result validation) without the probe `request()` makes per call: asked for a
 * spec method without a result schema, it first validates `undefined` against the era's schema to learn
 * whether there is one — a validation failure built and formatted into a message on every request. The
 * check is made here once per era, from the same codec and with the same messages.
 *
 * And a response settles its request only after the notifications that arrived before it: the SDK
 * hands a notification to its handler a microtask after it arrives but settles a response at once,
 * dropping the request's progress handler — so progress that came in the same read as the result
 * (one JSON batch, or a finished event stream) would otherwise find no one to tell.
 */
export class GatewayClient extends Client {
  #toolResult: { codec: object; check: ResultCheck } | undefined;

  /** Settles the request after every notification dispatched before it (one microtask later). */
  protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
    queueMicrotask(() => {
      try {
        super._onresponse(response);
      } catch (error) {
        // Where the transport's own dispatch would have caught it: the client's error handler.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** `tools/call` with `params` as given, its result validated by the negotiated era's codec. */
  requestToolCall(
    params: CallToolRequest["params"],
    options?: RequestOptions,
  ): Promise<Record<string, unknown>> {
    return this.request({ method: "tools/call", params }, this.#toolResultCheck(), options);
  }

  #toolResultCheck(): ResultCheck {
    const codec = this._wireCodec();
    if (this.#toolResult?.codec !== codec) {
      const method = "tools/call";
      const check: ResultCheck = {
        "~standard": {
          version: 1,
          vendor: "mcp-wire-codec",
          validate(value) {
            const outcome = codec.validateResult(method, value);
            if (outcome.ok) return { value: outcome.value as Record<string, unknown> };
            return {
              issues: [{ message: outcome.reason === "invalid" ? outcome.message : `not-in-era: ${method}` }],
            };
          },
        },
      };
      this.#toolResult = { codec, check };
    }
    return this.#toolResult.check;
  }
}
