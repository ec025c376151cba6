/**
 * Faults injected into the real AWS SDK clients (not mocks): a middleware that makes chosen commands
 * fail the way a service fault does, until removed. The request never reaches the emulator.
 */

/** An error shaped like an AWS service fault (5xx). */
export function serviceFault(): Error {
  return Object.assign(new Error("We encountered an internal error. Please try again."), {
    name: "InternalServerError",
    $fault: "server",
    $metadata: { httpStatusCode: 500 },
  });
}

interface MiddlewareClient {
  middlewareStack: {
    add(middleware: never, options: { step: "initialize"; name?: string }): void;
    remove(name: string): boolean;
  };
}

/**
 * Makes every command of `client` for which `matches(commandName, input)` holds fail with `error`.
 * For a DynamoDB document client, names and inputs are the low-level ones (`TransactWriteItemsCommand`,
 * marshalled attribute values).
 */
export function injectFault(
  client: MiddlewareClient,
  matches: (commandName: string, input: unknown) => boolean,
  error: () => Error = serviceFault,
): { readonly hits: number; remove(): void } {
  let hits = 0;
  const name = `fault-${Math.random().toString(36).slice(2)}`;
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: unknown }) => {
        if (matches(context.commandName ?? "", args.input)) {
          hits++;
          throw error();
        }
        return next(args);
      }) as never,
    { step: "initialize", name },
  );
  return {
    get hits() {
      return hits;
    },
    remove: () => {
      client.middlewareStack.remove(name);
    },
  };
}
