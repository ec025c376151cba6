import { BufferedResponse, mediaTypeOf } from "./buffered-response";
import { parseJsonMessages } from "./json-messages";

/**
 * A fetch whose JSON answers read through {@link parseJsonMessages} (a {@link BufferedResponse} already
 * does so itself).
 */
export function lenientJson(fetchImpl: typeof fetch): typeof fetch {
  return async function lenientFetch(input, init) {
    const response = await fetchImpl(input, init);
    const type = mediaTypeOf(response);
    if (type !== "application/json" || response instanceof BufferedResponse) return response;
    Object.defineProperty(response, "json", {
      value: async () => parseJsonMessages(await response.text()),
    });
    return response;
  };
}
