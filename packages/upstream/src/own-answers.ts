/**
 * What the gateway answers itself for a caller of a 2026-07-28 upstream. A 2026 upstream asks only for
 * what the request's envelope declares (else -32021), so the gateway declares roots for every caller:
 * a caller that declared no roots has none to offer, and the gateway answers the upstream's
 * `roots/list` questions for it with an empty list — the truthful answer — instead of the call failing.
 * The caller is asked only the rest.
 */
import { declaresCapabilityFor } from "./call-context";

/** The gateway's answer to a `roots/list` question for a caller that declared no roots. */
export const NO_ROOTS = { roots: [] };

const ROOTS_QUESTION = { method: "roots/list" } as const;

/** The client capabilities a 2026 upstream is told of: the caller's own, and roots in any case. */
export function capabilitiesForUpstream(
  caller: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return declaresCapabilityFor(caller, ROOTS_QUESTION)
    ? (caller as Record<string, unknown>)
    : { ...caller, roots: {} };
}

/** An upstream's questions split: those the gateway answers for the caller (with the answers), and the rest. */
export interface SplitQuestions {
  answers: Record<string, unknown>;
  rest: Record<string, unknown>;
}

/**
 * Splits an `input_required`'s `inputRequests`: a `roots/list` question is the gateway's to answer
 * ({@link NO_ROOTS}) when the caller did not declare roots; every other question is the caller's.
 */
export function splitQuestions(
  inputRequests: Record<string, unknown> | undefined,
  caller: Record<string, unknown> | undefined,
): SplitQuestions {
  const answers: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, question] of Object.entries(inputRequests ?? {})) {
    const method = (question as { method?: unknown } | null)?.method;
    if (method === "roots/list" && !declaresCapabilityFor(caller, ROOTS_QUESTION)) answers[key] = NO_ROOTS;
    else rest[key] = question;
  }
  return { answers, rest };
}
