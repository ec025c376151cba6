/** What each signal's one abort listener runs: the requests waiting on it. */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `onAbort` when `signal` aborts; returns the undo. However many requests wait on a signal at once
 * (a session's long-lived one carries every call in flight), it has one listener of ours, added once.
 */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const waiting = new Set<() => void>();
    waiters = waiting;
    abortWaiters.set(signal, waiting);
    signal.addEventListener(
      "abort",
      () => {
        abortWaiters.delete(signal);
        for (const waiter of waiting) waiter();
      },
      { once: true },
    );
  }
  waiters.add(onAbort);
  return () => void waiters.delete(onAbort);
}
