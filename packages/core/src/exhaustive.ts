/**
 * The default branch of a `switch` that handles every member of a union: with all members handled
 * its argument is `never`, so a new member is a compile error at every switch that must decide it.
 */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
