/**
 * How the gateway and the worker reach a stdio instance in a fleet of runners: the runner holding its
 * lease, or — none alive holding it — the one placement picks (rendezvous, weighted by free room; see
 * `placeOn`), which takes the lease as it serves. The owner is looked up when a session opens; a warm
 * session keeps its runner's URL, so a warm call pays no lookup.
 */
import { placeOn } from "@mcpgw/core";
import type { Verdict } from "./reach/verdict";
import type { RunnerEndpoint } from "./target";

/** A runner as the registry shows it (the fields placement reads). */
export interface FleetRunner {
  id: string;
  url: string;
  free: number;
  aliveUntil: number;
  draining: boolean;
}

/** What the directory reads of the fleet (the store's `fleet`). */
export interface FleetView {
  runners(): Promise<FleetRunner[]>;
  lease(key: string): Promise<{ owner: string } | undefined>;
}

/** The default of `refreshMs`: how long a read of the registry serves placements. */
export const FLEET_REFRESH_MS = 2_000;

/** The runners of a fleet, as callers reach them (see the module's doc). */
export class RunnerDirectory {
  private cached: { at: number; runners: Promise<FleetRunner[]> } | undefined;
  /** The runners of the last read that answered. */
  private last: FleetRunner[] | undefined;
  /** Runners refused here, by id: the registration they had then (a newer one brings them back). */
  private readonly down = new Map<string, number>();
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly fleet: FleetView,
    /** The runner token every runner of the fleet takes. */
    readonly token: string,
    options: { refreshMs?: number; now?: () => number } = {},
  ) {
    this.refreshMs = options.refreshMs ?? FLEET_REFRESH_MS;
    this.now = options.now ?? Date.now;
  }

  /** The live runners (registered, heartbeat current), read at most once per `refreshMs`. */
  async live(): Promise<FleetRunner[]> {
    const now = this.now();
    if (!this.cached || now - this.cached.at >= this.refreshMs) {
      const runners = this.fleet.runners();
      this.cached = { at: now, runners };
      runners.then(
        (read) => {
          this.last = read;
          for (const id of this.down.keys())
            if (!read.some((runner) => runner.id === id)) this.down.delete(id);
        },
        () => {
          if (this.cached?.runners === runners) this.cached = undefined;
        },
      );
    }
    return (await this.cached.runners).filter(
      (runner) => runner.aliveUntil > now && (this.down.get(runner.id) ?? -1) < runner.aliveUntil,
    );
  }

  /**
   * The runner to ask for the instance of `key` (a placement key): its lease's live holder, else the
   * live runner, not draining, that placement picks. Undefined when the fleet has no live runner.
   */
  async endpointFor(key: string): Promise<RunnerEndpoint | undefined> {
    const [lease, runners] = await Promise.all([this.fleet.lease(key), this.live()]);
    const holder = lease && runners.find((runner) => runner.id === lease.owner);
    if (holder) return this.endpoint(holder);
    const taking = runners.filter((runner) => !runner.draining);
    // When every runner is full, placement still picks one (by the same hash): it answers its cap.
    const roomy = taking.some((runner) => runner.free > 0);
    const id = placeOn(
      key,
      taking.map((runner) => ({ id: runner.id, weight: roomy ? runner.free : 1 })),
    );
    const chosen = taking.find((runner) => runner.id === id);
    return chosen && this.endpoint(chosen);
  }

  /**
   * Reads the registry again on the next lookup: a runner answered that it does not take the instance
   * (another holds it now, or it is full and said so in the registry).
   */
  refresh(): void {
    this.cached = undefined;
  }

  /**
   * Leaves the runner whose face `url` is under out of placement here until it heartbeats again (its
   * connection was refused: it stopped, though the registry read may still show it).
   */
  markDown(url: string): void {
    const origin = originOf(url);
    const runner = this.last?.find((candidate) => originOf(candidate.url) === origin);
    if (runner) this.down.set(runner.id, runner.aliveUntil);
  }

  /**
   * Seconds until a runner lost now has surely lapsed (the latest registration's end, a second on):
   * when its instances can start elsewhere, and so when a retry of its servers should come (each
   * retry of theirs, however often they failed meanwhile). Read from the registry afresh: a cached read
   * may be older than the lost runner's last heartbeat, and a retry timed by it would come before the
   * runner lapsed, find its lease still held, and fail — which would read as the server failed.
   */
  async failoverSeconds(): Promise<number> {
    this.refresh();
    const read = await this.live().then(
      () => true,
      () => false,
    );
    const known = this.last ?? [];
    const now = this.now();
    // The runners that refused a connection are the lost ones, each as the registry shows it now (it may
    // have heartbeated since it was marked down); when none is known, or the registry could not be read
    // afresh, any might be.
    const lost = known.filter((runner) => this.down.has(runner.id) && runner.aliveUntil > now);
    const runners = read && lost.length > 0 ? lost : known;
    const latest = Math.max(0, ...runners.map((runner) => runner.aliveUntil - now));
    return Math.ceil(latest / 1_000) + 1;
  }

  /** Every live runner (a stop of a server's or a thread's children goes to each). */
  async everyEndpoint(): Promise<RunnerEndpoint[]> {
    return (await this.live()).map((runner) => this.endpoint(runner));
  }

  private endpoint(runner: FleetRunner): RunnerEndpoint {
    return { url: runner.url, token: this.token };
  }
}

/** A URL's origin (scheme, host and port); undefined when it is no URL. */
function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}

/** How stdio servers are reached: one runner at a fixed URL, or a fleet's directory. */
export type RunnerRoute = RunnerEndpoint | RunnerDirectory;

/** What a server whose runner was lost says (its error text would only be the runner's refusal). */
export const RUNNER_LOST =
  "the stdio runner serving it was lost; it starts on another runner once that one's registration lapses";

/** The status fields {@link isMoving} reads (a stored status has them). */
export interface MovingStatus {
  state: string;
  lastError: string | null;
  lastSuccessfulConnectionAt: string | null;
  lastConnectionFailureAt: string | null;
  nextAttemptAt?: string | null | undefined;
  /** When the current generation began (an edit, a reconnect); null when never superseded. */
  supersededAt: string | null;
}

/**
 * True for a server whose calls go ahead while it moves off a lost runner: `connecting` because its
 * runner was lost (`lastError` {@link RUNNER_LOST}, its last failure after its last success), its
 * current generation having connected (the catalogue is this generation's), and the lost runner lapsed
 * by now (its retry's time, `nextAttemptAt`, has come: a call before it could only reach the lost
 * runner again, and is refused without trying).
 */
export function isMoving(status: MovingStatus, now = Date.now()): boolean {
  const { lastSuccessfulConnectionAt: served, lastConnectionFailureAt: lost, supersededAt } = status;
  return (
    status.state === "connecting" &&
    status.lastError === RUNNER_LOST &&
    served !== null &&
    lost !== null &&
    lost >= served &&
    (supersededAt === null || served >= supersededAt) &&
    typeof status.nextAttemptAt === "string" &&
    Date.parse(status.nextAttemptAt) <= now
  );
}

/** What {@link runnerLoss} makes of a failure: the verdict to record, as moving, and when to retry. */
export interface RunnerLoss {
  verdict: Verdict;
  moving: true;
  retry: { retryDelaySeconds: number; maxRetryDelaySeconds: number };
}

/**
 * A stdio server of a fleet that could not be reached has lost its runner (it died, or is being
 * replaced): the verdict says so, it is recorded as moving (`connecting`, not `failed`), and its retry
 * (`recordFailure`'s options) comes once that runner has lapsed and its instance can start on another —
 * however often it failed meanwhile. Undefined for any other failure.
 */
export async function runnerLoss(
  route: RunnerRoute | undefined,
  transport: "http" | "stdio",
  verdict: Verdict,
): Promise<RunnerLoss | undefined> {
  if (transport !== "stdio" || !(route instanceof RunnerDirectory) || verdict.reason !== "unreachable")
    return undefined;
  const seconds = await route.failoverSeconds();
  return {
    verdict: { ...verdict, error: RUNNER_LOST },
    moving: true,
    retry: { retryDelaySeconds: seconds, maxRetryDelaySeconds: seconds },
  };
}

/** The route the settings name (RUNNER_URL, or RUNNER_FLEET over the store's `fleet`), if any. */
export function runnerRoute(
  setting: RunnerEndpoint | { fleet: true; token: string } | undefined,
  fleet: FleetView,
): RunnerRoute | undefined {
  if (!setting) return undefined;
  return "fleet" in setting ? new RunnerDirectory(fleet, setting.token) : setting;
}

/**
 * The runner to ask for the instance of placement key `key` (`followed`: asked again after a runner of
 * the fleet refused it); undefined without a (live) runner.
 */
export async function runnerFor(
  route: RunnerRoute | undefined,
  key: string,
  followed = false,
): Promise<RunnerEndpoint | undefined> {
  if (!route) return undefined;
  if (!(route instanceof RunnerDirectory)) return route;
  const endpoint = await route.endpointFor(key);
  return endpoint && followed ? { ...endpoint, followed } : endpoint;
}

/** Every runner a stop must reach: the one, or each live runner of the fleet. */
export async function everyRunner(route: RunnerRoute | undefined): Promise<RunnerEndpoint[]> {
  if (!route) return [];
  return route instanceof RunnerDirectory ? route.everyEndpoint() : [route];
}
