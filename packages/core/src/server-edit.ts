import { AppError, describeIssues, type FieldProblem, fieldsRefused } from "./errors";
import { assertNever } from "./exhaustive";
import {
  ENV_MASKS,
  HEADER_MASKS,
  looksMasked,
  type MaskRule,
  maskedKeys,
  mergeMasked,
  SECRET_MASK,
} from "./masking";
import { secretMapOf, secretValues } from "./secret-map";
import {
  type HttpServerSpec,
  type ServerPatch,
  ServerSpec,
  type UpstreamAuth,
  upstreamAuthOf,
} from "./server";

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
export function submittedMasks(spec: ServerSpec): FieldProblem[] {
  const { field } = secretMapOf(spec.transport);
  const secret = upstreamAuthOf(spec)?.clientSecret;
  return [
    ...maskedKeys(secretValues(spec)).map((name) => ({ field: `${field}.${name}`, message: IS_A_MASK })),
    ...(secret !== undefined && looksMasked(secret)
      ? [{ field: "auth.clientSecret", message: IS_A_MASK }]
      : []),
  ];
}

/** Whether an edit gives `auth` a new client secret (a real value, not the mask that keeps the stored one). */
export function authSecretReplaced(patch: Pick<ServerPatch, "auth">): boolean {
  const secret = patch.auth?.clientSecret;
  return secret !== undefined && !looksMasked(secret);
}

/**
 * Whether the spec an edit leads to needs the stored client secret: the edit leaves `auth` alone, or
 * sends the mask back, while one is stored (`stored` is the masked view).
 */
export function keepsAuthSecret(stored: ServerSpec, patch: Pick<ServerPatch, "auth">): boolean {
  if (upstreamAuthOf(stored)?.clientSecret === undefined) return false;
  if (patch.auth === undefined) return true;
  const secret = patch.auth?.clientSecret;
  return secret !== undefined && looksMasked(secret);
}

/**
 * The spec after a partial edit. `headers` and `env`, when given, are the whole new map under the
 * mask rule (mask unchanged keeps the stored value, omitted removes it, other values replace it);
 * `null` clears `secretRef`/`secretFormat`. The transport cannot change, and a URL moving to another
 * origin must re-send or drop the stored headers (`server.credentials_origin_changed`).
 */
export function applyServerPatch(stored: ServerSpec, patch: ServerPatch): ServerSpec {
  if (patch.transport && patch.transport !== stored.transport) {
    throw invalid([
      {
        field: "transport",
        message: `Cannot change from ${stored.transport}: delete the server and create it again.`,
      },
    ]);
  }
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  // A format is meaningless without a reference: clearing the reference clears it unless one is given.
  if (patch.secretRef === null && patch.secretFormat === undefined) delete merged.secretFormat;
  Object.assign(merged, mergedSecrets(stored, patch));
  // The headers were judged where they came from: a submitted map by the route's schema (today's
  // rules), stored ones when they were stored. A rule added since must not lock a stored server out of
  // every edit (even disabling it): the rest of the spec is parsed, the merged headers carried over.
  const carried =
    stored.transport === "http" ? (merged.headers as Record<string, string> | undefined) : undefined;
  if (carried) delete merged.headers;
  const parsed = ServerSpec.safeParse(merged);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  return parsed.data.transport === "http" && carried ? { ...parsed.data, headers: carried } : parsed.data;
}

/**
 * The stored kind's secrets after the edit: its map under the mask rule and (HTTP) the client secret,
 * once a URL moving elsewhere has been checked not to take stored credentials along.
 */
function mergedSecrets(stored: ServerSpec, patch: ServerPatch): Record<string, unknown> {
  switch (stored.transport) {
    case "http":
      assertCredentialsStay(stored, patch);
      return {
        ...(patch.headers
          ? { headers: mergeOrThrow("headers", stored.headers, patch.headers, HEADER_MASKS) }
          : {}),
        ...(patch.auth ? { auth: mergeAuthSecret(stored.auth, patch.auth) } : {}),
      };
    case "stdio":
      return patch.env ? { env: mergeOrThrow("env", stored.env, patch.env, ENV_MASKS) } : {};
    default:
      return assertNever(stored);
  }
}

/**
 * Stored headers were given for the stored URL's origin: a URL moving to another origin (scheme, host
 * or port) may only keep headers whose real values are submitted again. Omitting `headers` (keeps them
 * all) or submitting a mask (keeps one) is refused; `headers: {}` or all-real values are fine.
 */
function assertCredentialsStay(stored: HttpServerSpec, patch: ServerPatch): void {
  const names = Object.keys(stored.headers);
  const secretKept = keepsAuthSecret(stored, patch);
  if ((names.length === 0 && !secretKept) || patch.url === undefined) return;
  const from = originOf(stored.url);
  const to = originOf(patch.url);
  // An unparseable URL is reported by validation; only a real origin change matters here.
  if (from === undefined || to === undefined || from === to) return;
  const kept = names.length === 0 ? [] : patch.headers ? keptByMask(stored.headers, patch.headers) : names;
  if (kept.length > 0) {
    throw new AppError(
      "server.credentials_origin_changed",
      `The URL moves from ${from} to ${to}; stored headers (${kept.join(", ")}) would go there. ` +
        "Submit their real values again, or drop them with `headers: {}`.",
      { headers: kept },
    );
  }
  // The secret goes to the authorization server the new URL's 401 names: that is the new URL's choice.
  if (secretKept) {
    throw new AppError(
      "server.credentials_origin_changed",
      `The URL moves from ${from} to ${to}; the stored auth.clientSecret would go to the authorization server it names. ` +
        "Submit the real secret again in `auth`, or drop it.",
      { auth: ["clientSecret"] },
    );
  }
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
    throw invalid(unmatchedMasks.map((name) => ({ field: `${field}.${name}`, message: NO_STORED_VALUE })));
  }
  return values;
}

/**
 * The submitted `auth` with its client secret resolved: the mask of the stored secret keeps it (under
 * whichever type the edit gives); any other mask is refused; a real value or no secret is taken as is.
 */
function mergeAuthSecret(stored: UpstreamAuth | undefined, submitted: UpstreamAuth): UpstreamAuth {
  const secret = submitted.clientSecret;
  if (secret === undefined || !looksMasked(secret)) return submitted;
  if (stored?.clientSecret === undefined || secret.trim() !== SECRET_MASK) {
    throw invalid([{ field: "auth.clientSecret", message: NO_STORED_VALUE }]);
  }
  return { ...submitted, clientSecret: stored.clientSecret } as UpstreamAuth;
}

/** What a submitted mask is told: a mask is never stored as a credential. */
const IS_A_MASK = "Is a mask, not a value: type the real value.";
const NO_STORED_VALUE = "The mask stands for no stored value: type the real value.";

function invalid(problems: FieldProblem[]) {
  return fieldsRefused("server.invalid", problems);
}
