import { type InstanceLease, isAlive, type RunnerFleet, type RunnerRegistration } from "../fleet";

/** The fleet in memory: the table's conditions, checked in one step (one process, no interleaving). */
export function createMemoryRunnerFleet(): RunnerFleet {
  const runners = new Map<string, RunnerRegistration>();
  const leases = new Map<string, InstanceLease>();
  return {
    async announce(runner) {
      runners.set(runner.id, { ...runner });
    },
    async withdraw(runnerId) {
      runners.delete(runnerId);
    },
    async runners() {
      return [...runners.values()].map((runner) => ({ ...runner }));
    },
    async lease(key) {
      const lease = leases.get(key);
      return lease && { ...lease };
    },
    async claim(key, runnerId, now) {
      const me = runners.get(runnerId);
      const held = leases.get(key);
      if (held?.owner === runnerId)
        return isAlive(me, now) ? { lease: { ...held }, taken: false } : { notAlive: true };
      if (!isAlive(me, now) || me?.draining) return { notAlive: true };
      const holder = held && runners.get(held.owner);
      if (holder && isAlive(holder, now)) return { holder: { ...holder } };
      const lease = { key, owner: runnerId, version: Math.max((held?.version ?? 0) + 1, now) };
      leases.set(key, lease);
      return { lease: { ...lease }, taken: true };
    },
    async release(key, runnerId, version) {
      const lease = leases.get(key);
      if (lease?.owner !== runnerId || (version !== undefined && lease.version !== version)) return false;
      leases.delete(key);
      return true;
    },
    async leasesOf(runnerId) {
      return [...leases.values()].filter((lease) => lease.owner === runnerId).map((lease) => ({ ...lease }));
    },
    async reap(now) {
      let reaped = 0;
      for (const [key, lease] of leases) {
        const owner = runners.get(lease.owner);
        if (owner && !isAlive(owner, now)) {
          leases.delete(key);
          reaped++;
        }
      }
      return reaped;
    },
  };
}
