/**
 * A runner's place in the fleet: its registration, renewed by a heartbeat, and the leases of the
 * instances it runs. An instance is served only under a lease this runner holds; asked for one that
 * another live runner holds, it answers `runner.not_owner` naming that runner, and never starts a
 * second child. Full (by children or memory) while another runner has room, it takes no new instance:
 * it says so in the registry and answers `runner.not_owner`, so the caller places it elsewhere. A
 * heartbeat that finds its registration had lapsed (the process was paused, the table out of reach)
 * checks its leases again and gives up the instances whose lease moved on.
 */
import { isAlive, type RunnerFleet, type RunnerRegistration } from "@mcpgw/aws";
import { AppError, errorFields, type Logger } from "@mcpgw/core";
import { recordFleetWrite } from "@mcpgw/telemetry";

/** The default of `leaseMs`: a dead runner's instances move on within 15 s. */
export const DEFAULT_LEASE_MS = 15_000;

export interface MembershipOptions {
  fleet: RunnerFleet;
  logger: Logger;
  /** This runner's id in the registry (unique per process). */
  id: string;
  /** Where others reach this runner's face (known once it listens). */
  url: () => string;
  /** The most children it runs. */
  capacity: number;
  /** How many more children it takes now: 0 when it is full (by its children, or by its memory). */
  free: () => number;
  /** Its build, shown in the registry. */
  version: string;
  /** How long a registration lives without a heartbeat (RUNNER_LEASE_SECONDS); the heartbeat runs at a third of it. */
  leaseMs?: number;
  /** Called for each instance whose lease this runner lost (its children must end). */
  onLost: (key: string) => void;
  now?: () => number;
}

/** What serving an instance needs from the fleet: its lease, held here; given back once it ends. */
export interface InstanceOwnership {
  /**
   * Resolves once this runner holds `key`'s lease; else `runner.not_owner` (naming the holder, when
   * live; or saying it is full, unless the caller was `followed` here after another runner refused).
   */
  own(key: string, options?: { followed?: boolean }): Promise<void>;
  /** Gives `key`'s lease up (its last child ended). */
  release(key: string): void;
  /** Whether it still holds `key`'s lease (it may be lost between `own` and a spawn). */
  holds(key: string): boolean;
}

/** A runner's registration and leases (see the module's doc). */
export class Membership implements InstanceOwnership {
  /** The leases it holds: placement key → the lease's version. */
  private readonly held = new Map<string, number>();
  /** Until when the registration last written keeps this runner alive (0: not yet written). */
  private aliveUntil = 0;
  private draining = false;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  /** Leases being given back, by key (a claim of that key waits for it; a stop waits for them all). */
  private readonly releasing = new Map<string, Promise<unknown>>();
  /** Ends every instance a fifth of the lease before the registration would lapse unrenewed. */
  private fence: NodeJS.Timeout | undefined;
  /** The room its last registration written showed (a full runner refusing says so once, not per refusal). */
  private announcedFree: number | undefined;
  /** The heartbeat under way that shows this runner full (one, however many are refused meanwhile). */
  private announcingFull: Promise<void> | undefined;
  /** The last read of the registry, when a full runner looked for room elsewhere. */
  private fleetRead: { at: number; runners: Promise<RunnerRegistration[]> } | undefined;
  readonly leaseMs: number;
  private readonly now: () => number;

  constructor(private readonly options: MembershipOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.now = options.now ?? Date.now;
  }

  /** Registers this runner, then renews its registration every third of `leaseMs`. */
  async join(): Promise<void> {
    await this.announce();
    this.timer = setInterval(
      () => {
        this.beating = this.beating.then(() => this.heartbeat());
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    this.timer.unref();
  }

  async own(key: string, { followed = false }: { followed?: boolean } = {}): Promise<void> {
    if (this.held.has(key) && this.registered) return;
    // A release of this key under way ends first: else it could delete the lease claimed again here.
    await this.releasing.get(key);
    if (!this.registered) {
      throw new AppError("runner.not_owner", "This runner's registration lapsed: it takes no instances now.");
    }
    if (!followed && (await this.fullForNew(key))) {
      throw new AppError("runner.not_owner", "This runner is full: another runner of the fleet has room.");
    }
    const now = this.now();
    const outcome = await this.options.fleet.claim(key, this.options.id, now);
    if ("lease" in outcome) {
      if (outcome.taken) recordFleetWrite("claim");
      this.held.set(key, outcome.lease.version);
      return;
    }
    if ("holder" in outcome) {
      throw new AppError("runner.not_owner", `Another runner (${outcome.holder.id}) serves this instance.`, {
        owner: { id: outcome.holder.id, url: outcome.holder.url },
      });
    }
    throw new AppError(
      "runner.not_owner",
      "This runner takes no instances now (it is stopping, or its registration lapsed).",
    );
  }

  release(key: string): void {
    const version = this.held.get(key);
    if (version === undefined) return;
    this.held.delete(key);
    recordFleetWrite("release");
    const released = this.options.fleet.release(key, this.options.id, version).catch((error) => {
      this.options.logger.warn("could not give a lease back", { key, ...errorFields(error) });
    });
    this.releasing.set(key, released);
    void released.finally(() => {
      if (this.releasing.get(key) === released) this.releasing.delete(key);
    });
  }

  /**
   * Whether to refuse `key` for fullness: this runner has no room, another live one has, the lease is
   * not this runner's already (one it lost track of — a fence, a failed release — it serves on), and the
   * registry shows it full (written once, however many are refused meanwhile; unwritten, it refuses
   * nothing, as the caller would be sent straight back).
   */
  private async fullForNew(key: string): Promise<boolean> {
    if (this.options.free() > 0 || !(await this.roomElsewhere())) return false;
    if ((await this.options.fleet.lease(key))?.owner === this.options.id) return false;
    if (this.announcedFree !== 0) {
      if (!this.announcingFull) {
        this.beating = this.beating.then(() => this.heartbeat());
        this.announcingFull = this.beating.finally(() => {
          this.announcingFull = undefined;
        });
      }
      await this.announcingFull;
    }
    return this.announcedFree === 0;
  }

  /** Whether another live runner, not draining, takes more children now. */
  private async roomElsewhere(): Promise<boolean> {
    const now = this.now();
    // One registry read a second at most, however many instances are refused meanwhile.
    if (!this.fleetRead || now - this.fleetRead.at >= 1_000) {
      const runners = this.options.fleet.runners();
      this.fleetRead = { at: now, runners };
      runners.catch(() => {
        if (this.fleetRead?.runners === runners) this.fleetRead = undefined;
      });
    }
    const runners = await this.fleetRead.runners;
    return runners.some(
      (runner) =>
        runner.id !== this.options.id && isAlive(runner, now) && !runner.draining && runner.free > 0,
    );
  }

  /** Whether its registration is current: written, and not lapsed (a heartbeat reached the table in time). */
  get registered(): boolean {
    // Short of the fence's margin: once it fired, nothing is served or claimed until a heartbeat lands.
    return this.aliveUntil - this.leaseMs / 5 > this.now();
  }

  /** Whether it holds `key`'s lease now (checked again right before a child is spawned for it). */
  holds(key: string): boolean {
    return this.held.has(key) && this.registered;
  }

  /** This runner's id in the registry. */
  get id(): string {
    return this.options.id;
  }

  /** The placement keys whose lease this runner holds. */
  get leases(): string[] {
    return [...this.held.keys()];
  }

  /**
   * Stops taking instances: the registry shows it draining (placement passes it by, and claims by it
   * fail), so callers of new instances are sent elsewhere.
   */
  async drain(): Promise<void> {
    this.draining = true;
    await this.announce();
  }

  /** Gives every lease back and leaves the registry (its children have ended). */
  async leave(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    clearTimeout(this.fence);
    await Promise.all(this.releasing.values());
    const held = [...this.held];
    this.held.clear();
    const released = await Promise.all(
      held.map(([key, version]) =>
        this.options.fleet.release(key, this.options.id, version).then(
          () => true,
          () => false,
        ),
      ),
    );
    // A lease not given back stays this runner's until its registration lapses (then any runner may
    // take it, and the sweep reaps it): withdrawn now, nothing would ever reap it.
    if (released.every(Boolean)) await this.options.fleet.withdraw(this.options.id);
    else this.options.logger.warn("left the fleet with leases not given back: they pass on once it lapses");
  }

  private async announce(): Promise<void> {
    const now = this.now();
    const aliveUntil = now + this.leaseMs;
    const registration = {
      id: this.options.id,
      url: this.options.url(),
      capacity: this.options.capacity,
      free: Math.max(0, this.options.free()),
      version: this.options.version,
      aliveUntil,
      draining: this.draining,
    };
    // A heartbeat may meet a claim's transaction on the same item (DynamoDB cancels one): tried again.
    for (let attempt = 0; ; attempt++) {
      recordFleetWrite("heartbeat");
      try {
        await this.options.fleet.announce(registration);
        this.announcedFree = registration.free;
        break;
      } catch (error) {
        if (attempt >= 2) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
    const lapsed = this.aliveUntil !== 0 && !isAlive({ aliveUntil: this.aliveUntil }, now);
    // After a lapse, the leases are checked before the fast path trusts them again.
    if (lapsed) await this.recheckLeases();
    this.aliveUntil = aliveUntil;
    this.armFence(aliveUntil);
  }

  /**
   * Unrenewed by a fifth of the lease before `aliveUntil` (a heartbeat failing or hanging), this runner
   * gives up every instance: others may take them once it lapses, and two children must never serve one.
   */
  private armFence(aliveUntil: number): void {
    clearTimeout(this.fence);
    const margin = this.leaseMs / 5;
    this.fence = setTimeout(
      () => this.loseAll("its registration was not renewed in time"),
      Math.max(0, aliveUntil - margin - this.now()),
    );
    this.fence.unref();
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.announce();
    } catch (error) {
      // The fence ends every instance if no heartbeat gets through in time.
      this.options.logger.warn("runner heartbeat failed", errorFields(error));
    }
  }

  /** After a lapse: the instances whose lease another runner took meanwhile end here. */
  private async recheckLeases(): Promise<void> {
    for (const key of [...this.held.keys()]) {
      const lease = await this.options.fleet.lease(key);
      if (lease?.owner === this.options.id) continue;
      this.held.delete(key);
      this.options.logger.warn("lease lost while this runner's registration had lapsed", { key });
      this.options.onLost(key);
    }
  }

  private loseAll(why: string): void {
    if (this.held.size === 0) return;
    this.options.logger.warn("giving up every instance", { why, instances: this.held.size });
    for (const key of [...this.held.keys()]) {
      this.held.delete(key);
      this.options.onLost(key);
    }
  }
}
