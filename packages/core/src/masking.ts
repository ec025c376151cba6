/**
 * Header and env values leave the system masked: `Authorization` as `<scheme> [SECRET]`, every other
 * header value and every env value as `[SECRET]`. When an edit submits a value equal to the current
 * mask of the stored one, the stored value is kept; a key left out is removed; any other value
 * replaces it.
 */

export const SECRET_MASK = "[SECRET]";

/** How one kind of map (HTTP headers, stdio env) is masked and how its keys compare. */
export interface MaskRule {
  /** What the API shows for `value` stored under `name`. */
  mask(name: string, value: string): string;
  /** The key under which names are the same (headers are case-insensitive, env names are not). */
  key(name: string): string;
}

/** True for the header whose mask keeps its scheme (case-insensitive). */
export function isAuthorizationHeader(name: string): boolean {
  return name.toLowerCase() === "authorization";
}

/** `Bearer abc` → `Bearer [SECRET]`; a value without a scheme → `[SECRET]`. */
export function maskAuthorization(value: string): string {
  const scheme = /^\s*([A-Za-z][A-Za-z0-9._~+-]*)\s+\S/.exec(value)?.[1];
  return scheme ? `${scheme} ${SECRET_MASK}` : SECRET_MASK;
}

/** Headers: `Authorization` keeps its scheme, every other value is `[SECRET]`; names case-insensitive. */
export const HEADER_MASKS: MaskRule = {
  mask: (name, value) => (isAuthorizationHeader(name) ? maskAuthorization(value) : SECRET_MASK),
  key: (name) => name.toLowerCase(),
};

/** Env: every value is `[SECRET]`; names are case-sensitive. */
export const ENV_MASKS: MaskRule = {
  mask: () => SECRET_MASK,
  key: (name) => name,
};

/** A map as the API shows it: every value replaced by its mask under `rule`. */
export function maskMap(map: Record<string, string>, rule: MaskRule): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, rule.mask(name, value)]));
}

/** Headers as the API shows them (every value masked). */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return maskMap(headers, HEADER_MASKS);
}

/** Env as the API shows it (every value masked). */
export function maskEnv(env: Record<string, string>): Record<string, string> {
  return maskMap(env, ENV_MASKS);
}

/** True when a submitted value is a mask (so it can never be stored as a real credential). */
export function looksMasked(value: string): boolean {
  return value.trim().endsWith(SECRET_MASK);
}

/** The keys of `map` whose values are masks: refused wherever real values are required. */
export function maskedKeys(map: Record<string, string>): string[] {
  return Object.entries(map)
    .filter(([, value]) => looksMasked(value))
    .map(([name]) => name);
}

/**
 * The map to store after an edit submitted `submitted` over `stored`: a masked value equal to the
 * current mask of the stored value under the same key keeps the stored value (under the submitted
 * spelling of the key); any other value is taken as is. Returns the keys of masks that match nothing.
 */
export function mergeMasked(
  stored: Record<string, string>,
  submitted: Record<string, string>,
  rule: MaskRule,
): { values: Record<string, string>; unmatchedMasks: string[] } {
  const storedByKey = new Map(Object.entries(stored).map(([name, value]) => [rule.key(name), value]));
  const values: Record<string, string> = {};
  const unmatchedMasks: string[] = [];
  for (const [name, value] of Object.entries(submitted)) {
    if (!looksMasked(value)) {
      values[name] = value;
      continue;
    }
    const previous = storedByKey.get(rule.key(name));
    if (previous !== undefined && rule.mask(name, previous) === value.trim()) values[name] = previous;
    else unmatchedMasks.push(name);
  }
  return { values, unmatchedMasks };
}

/** An `auth` as the API shows it: its client secret (when it has one) as `[SECRET]`. */
export function maskAuth<T extends { clientSecret?: string | undefined }>(auth: T): T {
  return auth.clientSecret === undefined ? auth : { ...auth, clientSecret: SECRET_MASK };
}
