import { holdsAt, type SweepRun, type SweepRuns } from "../sweep-runs";

/** The sweep's runs in memory: the table's conditions, checked in one step. */
export function createMemorySweepRuns(): SweepRuns {
  let record: SweepRun | undefined;
  return {
    async last() {
      return record && { ...record };
    },
    async begin(run, last, maxHoldMs) {
      const free = last
        ? record?.token === last.token && !holdsAt(record, run.startedAt, maxHoldMs)
        : record === undefined;
      if (free) record = { ...run };
      return free;
    },
    async end(token, holdsUntil, jobs) {
      if (record?.token !== token) return false;
      record = { ...record, holdsUntil, jobs };
      return true;
    },
  };
}
