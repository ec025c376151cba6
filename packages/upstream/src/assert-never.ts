/** A compile error when a union gains a member a switch does not handle (and a throw, should one slip through). */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
