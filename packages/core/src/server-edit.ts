import { AppError, describeIssues } from "./errors";
import { isMaskedHeader, looksMasked, mergeMaskedHeaders } from "./masking";
import { type ServerPatch, ServerSpec } from "./server";

/** Validates a new server's spec; throws `server.invalid` listing every problem. */
export function parseServerSpec(input: unknown): ServerSpec {
  const parsed = ServerSpec.safeParse(input);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  if (parsed.data.transport === "http") {
    const masked = Object.entries(parsed.data.headers).filter(
      ([name, value]) => isMaskedHeader(name) && looksMasked(value),
    );
    if (masked.length > 0)
      throw invalid(masked.map(([name]) => `headers.${name}: is a mask; submit the real value`));
  }
  return parsed.data;
}

/**
 * The spec after a partial edit. `headers`, when given, is the whole new map under the mask rule
 * (mask unchanged keeps the stored secret, omitted removes it, other values replace it); `null`
 * clears `secretRef`/`secretFormat`. The transport cannot change.
 */
export function applyServerPatch(stored: ServerSpec, patch: ServerPatch): ServerSpec {
  if (patch.transport && patch.transport !== stored.transport) {
    throw invalid([`transport: cannot change from ${stored.transport}; delete and re-create the server`]);
  }
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  // A format is meaningless without a reference: clearing the reference clears it unless one is given.
  if (patch.secretRef === null && patch.secretFormat === undefined) delete merged.secretFormat;
  if (patch.headers && stored.transport === "http") {
    const { headers, unmatchedMasks } = mergeMaskedHeaders(stored.headers, patch.headers);
    if (unmatchedMasks.length > 0) {
      throw invalid(
        unmatchedMasks.map(
          (name) => `headers.${name}: the mask matches no stored value; submit the real value`,
        ),
      );
    }
    merged.headers = headers;
  }
  const parsed = ServerSpec.safeParse(merged);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  return parsed.data;
}

function invalid(problems: string[]): AppError {
  return new AppError("server.invalid", problems.join("; "), { errors: problems });
}
