import { granted, type RateBudget } from "../rate-budget";

/** Callers' minute budgets in memory (one process: the same arithmetic as the table's counters). */
export function createMemoryRateBudget(): RateBudget {
  const used = new Map<string, number>();
  return {
    async lease(caller, window, want, limit) {
      const key = `${caller}\0${window}`;
      const now = (used.get(key) ?? 0) + want;
      used.set(key, now);
      return granted(now, want, limit);
    },
  };
}
