import { IDENTITY_NAME } from "./name-rules";

/** Whether `name` may name a user or group. */
export function isIdentityName(name: string): boolean {
  return IDENTITY_NAME.test(name);
}
