/**
 * An AWS answer the SDK cannot parse — a body cut short or not JSON at all (an emulator's HTML error
 * page, a connection dropped mid-body) — is a fault of the transport, not of the request: it is tried
 * again like any transient fault (a transaction safely so, by its ClientRequestToken), and if every
 * attempt's answer is unreadable the error says so, instead of surfacing the parser's SyntaxError.
 */
import type { DeserializeMiddleware, MiddlewareStack } from "@aws-sdk/types";

/** The SDK's error when every attempt's answer was unreadable. Retryable. */
export class UnreadableAnswer extends Error {
  override readonly name = "UnreadableAnswer";
  /** Marks the error transient for the SDK's retry strategy. */
  readonly $retryable = {};
}

interface ParseFailure {
  name?: string;
  $response?: { statusCode?: number };
  $metadata?: Record<string, unknown>;
}

const unreadableAnswers: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
  try {
    return await next(args);
  } catch (error) {
    const failure = error as ParseFailure;
    if (failure?.name !== "SyntaxError") throw error;
    const status = failure.$response?.statusCode;
    throw Object.assign(
      new UnreadableAnswer(
        `The ${context.clientName ?? "AWS"} answer to ${context.commandName ?? "a request"} could not be read (HTTP ${status ?? "?"}, not JSON or cut short)`,
        { cause: error },
      ),
      { $metadata: failure.$metadata ?? {} },
    );
  }
};

/** Adds the retry of unreadable answers to a client (around its deserializer). */
export function retryUnreadableAnswers(client: { middlewareStack: MiddlewareStack<never, never> }): void {
  client.middlewareStack.add(unreadableAnswers as never, {
    step: "deserialize",
    priority: "high",
    name: "retryUnreadableAnswers",
  });
}
