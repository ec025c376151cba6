/**
 * `Authorization` headers leave the system masked as `<scheme> [SECRET]`. When an edit submits the
 * mask unchanged the stored value is kept; a header left out is removed; any other value replaces it.
 */

export const SECRET_MASK = "[SECRET]";

/** True for the header whose value is never shown (case-insensitive). */
export function isMaskedHeader(name: string): boolean {
  return name.toLowerCase() === "authorization";
}

/** `Bearer abc` → `Bearer [SECRET]`; a value without a scheme → `[SECRET]`. */
export function maskAuthorization(value: string): string {
  const scheme = /^\s*([A-Za-z][A-Za-z0-9._~+-]*)\s+\S/.exec(value)?.[1];
  return scheme ? `${scheme} ${SECRET_MASK}` : SECRET_MASK;
}

/** Headers as the API shows them: `Authorization` masked, the rest as configured. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      isMaskedHeader(name) ? maskAuthorization(value) : value,
    ]),
  );
}

/** True when a submitted value is a mask (so it can never be stored as a real credential). */
export function looksMasked(value: string): boolean {
  return value.trim().endsWith(SECRET_MASK);
}

/**
 * The headers to store after an edit submitted `submitted` over `stored`: a masked value equal to the
 * mask of the stored one keeps it. Returns the names of masked values that match nothing stored.
 */
export function mergeMaskedHeaders(
  stored: Record<string, string>,
  submitted: Record<string, string>,
): { headers: Record<string, string>; unmatchedMasks: string[] } {
  const storedByLower = new Map(Object.entries(stored).map(([name, value]) => [name.toLowerCase(), value]));
  const headers: Record<string, string> = {};
  const unmatchedMasks: string[] = [];
  for (const [name, value] of Object.entries(submitted)) {
    if (!isMaskedHeader(name) || !looksMasked(value)) {
      headers[name] = value;
      continue;
    }
    const previous = storedByLower.get(name.toLowerCase());
    if (previous !== undefined && maskAuthorization(previous) === value.trim()) headers[name] = previous;
    else unmatchedMasks.push(name);
  }
  return { headers, unmatchedMasks };
}
