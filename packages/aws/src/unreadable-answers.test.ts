import { describe, expect, it } from "vitest";
import { retryUnreadableAnswers, UnreadableAnswer } from "./unreadable-answers";

/** The middleware as a client's stack would hold it, run around `inner`. */
function wrapped(inner: () => Promise<unknown>) {
  let middleware: ((next: () => Promise<unknown>, context: object) => () => Promise<unknown>) | undefined;
  retryUnreadableAnswers({ middlewareStack: { add: (m: never) => (middleware = m) } } as never);
  if (!middleware) throw new Error("not added");
  return middleware(inner, { clientName: "DynamoDBClient", commandName: "TransactWriteItemsCommand" });
}

describe("retryUnreadableAnswers", () => {
  it("an answer the parser could not read becomes a retryable UnreadableAnswer that says so", async () => {
    const parse = Object.assign(new SyntaxError("Unexpected end of JSON input"), {
      $response: { statusCode: 200 },
      $metadata: { httpStatusCode: 200 },
    });
    const error = await wrapped(() => Promise.reject(parse))().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreadableAnswer);
    expect(error).toMatchObject({ $retryable: {}, $metadata: { httpStatusCode: 200 }, cause: parse });
    expect((error as Error).message).toBe(
      "The DynamoDBClient answer to TransactWriteItemsCommand could not be read (HTTP 200, not JSON or cut short)",
    );
  });

  it("any other error, and every answer, pass as they are", async () => {
    const other = new Error("ConditionalCheckFailed");
    await expect(wrapped(() => Promise.reject(other))()).rejects.toBe(other);
    await expect(wrapped(() => Promise.resolve("ok"))()).resolves.toBe("ok");
  });
});
