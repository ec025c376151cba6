import { AppError, describeIssues } from "./errors";
import { ENV_MASKS, HEADER_MASKS, type MaskRule, maskedKeys, mergeMasked } from "./masking";
import { type HttpServerSpec, type ServerPatch, ServerSpec } from "./server";

/** Validates a new server's spec; throws `server.invalid` listing every problem. */
export function parseServerSpec(input: unknown): ServerSpec {
  const parsed = ServerSpec.safeParse(input);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  const masks = submittedMasks(parsed.data);
  if (masks.length > 0) throw invalid(masks);
  return parsed.data;
}

/**
 * Problems for every header or env value of `spec` that is a mask: a pasted mask (e.g. from this
 * gateway's own output) must never be stored as a credential. Empty when every value is real.
 */
export function submittedMasks(spec: ServerSpec): string[] {
  const [field, map] = spec.transport === "http" ? ["headers", spec.headers] : ["env", spec.env];
  return maskedKeys(map).map((name) => `${field}.${name}: is a mask; submit the real value`);
}

/**
 * The spec after a partial edit. `headers` and `env`, when given, are the whole new map under the
 * mask rule (mask unchanged keeps the stored value, omitted removes it, other values replace it);
 * `null` clears `secretRef`/`secretFormat`. The transport cannot change, and a URL moving to another
 * origin must re-send or drop the stored headers (`server.credentials_origin_changed`).
 */
export function applyServerPatch(stored: ServerSpec, patch: ServerPatch): ServerSpec {
  if (patch.transport && patch.transport !== stored.transport) {
    throw invalid([`transport: cannot change from ${stored.transport}; delete and re-create the server`]);
  }
  if (stored.transport === "http") assertCredentialsStay(stored, patch);
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  // A format is meaningless without a reference: clearing the reference clears it unless one is given.
  if (patch.secretRef === null && patch.secretFormat === undefined) delete merged.secretFormat;
  if (patch.headers && stored.transport === "http") {
    merged.headers = mergeOrThrow("headers", stored.headers, patch.headers, HEADER_MASKS);
  }
  if (patch.env && stored.transport === "stdio") {
    merged.env = mergeOrThrow("env", stored.env, patch.env, ENV_MASKS);
  }
  const parsed = ServerSpec.safeParse(merged);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  return parsed.data;
}

/**
 * Stored headers were given for the stored URL's origin: a URL moving to another origin (scheme, host
 * or port) may only keep headers whose real values are submitted again. Omitting `headers` (keeps them
 * all) or submitting a mask (keeps one) is refused; `headers: {}` or all-real values are fine.
 */
function assertCredentialsStay(stored: HttpServerSpec, patch: ServerPatch): void {
  const names = Object.keys(stored.headers);
  if (names.length === 0 || patch.url === undefined) return;
  const from = originOf(stored.url);
  const to = originOf(patch.url);
  // An unparseable URL is reported by validation; only a real origin change matters here.
  if (from === undefined || to === undefined || from === to) return;
  const kept = patch.headers ? keptByMask(stored.headers, patch.headers) : names;
  if (kept.length === 0) return;
  throw new AppError(
    "server.credentials_origin_changed",
    `The URL moves from ${from} to ${to}; stored headers (${kept.join(", ")}) would go there. ` +
      "Submit their real values again, or drop them with `headers: {}`.",
    { headers: kept },
  );
}

/** The submitted names whose masks keep a stored value (masks that match nothing are refused later). */
function keptByMask(stored: Record<string, string>, submitted: Record<string, string>): string[] {
  const { unmatchedMasks } = mergeMasked(stored, submitted, HEADER_MASKS);
  return maskedKeys(submitted).filter((name) => !unmatchedMasks.includes(name));
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function mergeOrThrow(
  field: "headers" | "env",
  stored: Record<string, string>,
  submitted: Record<string, string>,
  rule: MaskRule,
): Record<string, string> {
  const { values, unmatchedMasks } = mergeMasked(stored, submitted, rule);
  if (unmatchedMasks.length > 0) {
    throw invalid(
      unmatchedMasks.map(
        (name) => `${field}.${name}: the mask matches no stored value; submit the real value`,
      ),
    );
  }
  return values;
}

function invalid(problems: string[]): AppError {
  return new AppError("server.invalid", problems.join("; "), { errors: problems });
}
