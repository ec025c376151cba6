/** The longest a request waits at a child's gate for another caller's requests to end (10 s). */
export const DEFAULT_GATE_WAIT_MS = 10_000;

/** A request waiting at the gate, and how to let it go (with its release). */
interface Waiting {
  caller: string;
  asking: boolean;
  admit: (release: () => void) => void;
}

/** A caller's requests in flight at the child: how many, and how many of them its caller can be asked for. */
interface Held {
  count: number;
  asking: number;
}

/**
 * Who may have requests in flight at one child at once, so that the child's own requests (elicitation,
 * sampling, roots) — which over stdio carry no link to the call that caused them — can be told whose
 * they are. Once the child has asked a caller anything ({@link CallerGate.childAsks}), a request whose
 * caller can be asked (it declared elicitation, sampling or roots) waits until no other caller has a
 * request in flight at the child; while it is in flight, other callers' requests wait. Until then —
 * most servers never ask — nothing waits: callers overlap, and a first request of the child's during an
 * overlap is refused. Requests of one caller never wait for each other, nor do those of callers that
 * cannot be asked. Waiting is first come, first served, and bounded: past `waitMs` a request goes on
 * regardless — then the callers overlap, and the child's requests meanwhile are refused (see
 * {@link CallerGate.soleCaller}), never handed to a caller they may not belong to.
 */
export class CallerGate {
  private readonly held = new Map<string, Held>();
  private readonly queue: Waiting[] = [];
  /** Whether the child has asked a caller anything: only then do callers that can be asked go alone. */
  private serializing = false;

  constructor(private readonly waitMs = DEFAULT_GATE_WAIT_MS) {}

  /**
   * The one caller with requests in flight now; undefined when there is none or there are several (a
   * request of the child's then belongs to no caller that can be told).
   */
  get soleCaller(): string | undefined {
    if (this.held.size !== 1) return undefined;
    return this.held.keys().next().value;
  }

  /**
   * Waits until `caller`'s request may go to the child (see the class doc); resolves with its release
   * (call it once the child answered or the request was given up). Rejects when `signal` aborts first.
   */
  async enter(caller: string, asking: boolean, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.queue.length === 0 && this.admissible(caller, asking)) return this.hold(caller, asking);
    return new Promise<() => void>((resolve, reject) => {
      const waiting: Waiting = {
        caller,
        asking,
        admit: (release) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", leave);
          resolve(release);
        },
      };
      const leave = () => {
        clearTimeout(timer);
        this.remove(waiting);
        this.pump();
        reject(signal?.reason);
      };
      // Past the bound it goes on anyway (the overlap only makes the child's requests refused).
      const timer = setTimeout(() => {
        this.remove(waiting);
        waiting.admit(this.hold(caller, asking));
        this.pump();
      }, this.waitMs);
      timer.unref();
      signal?.addEventListener("abort", leave, { once: true });
      this.queue.push(waiting);
    });
  }

  /** The child asked a caller something: from now on, callers that can be asked go alone (see the class doc). */
  childAsks(): void {
    this.serializing = true;
  }

  /**
   * Counts a request of `caller` in flight without waiting (one that cannot be asked and must not wait,
   * e.g. a probe's list); resolves nothing, answers its release.
   */
  pass(caller: string): () => void {
    return this.hold(caller, false);
  }

  private admissible(caller: string, asking: boolean): boolean {
    if (!this.serializing) return true;
    for (const [other, held] of this.held) {
      if (other === caller) continue;
      if (asking || held.asking > 0) return false;
    }
    return true;
  }

  /** Counts a request in flight; answers its release (once; later calls do nothing). */
  private hold(caller: string, asking: boolean): () => void {
    const held = this.held.get(caller) ?? { count: 0, asking: 0 };
    held.count++;
    if (asking) held.asking++;
    this.held.set(caller, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.count--;
      if (asking) held.asking--;
      if (held.count === 0 && this.held.get(caller) === held) this.held.delete(caller);
      this.pump();
    };
  }

  private remove(waiting: Waiting): void {
    const index = this.queue.indexOf(waiting);
    if (index !== -1) this.queue.splice(index, 1);
  }

  /** Admits waiting requests in order, while the first of them may go (each held before the next is judged). */
  private pump(): void {
    for (;;) {
      const next = this.queue[0];
      if (!next || !this.admissible(next.caller, next.asking)) return;
      this.queue.shift();
      next.admit(this.hold(next.caller, next.asking));
    }
  }
}
