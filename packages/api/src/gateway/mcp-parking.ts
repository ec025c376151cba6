/**
 * Parked calls: how a 2026-07-28 caller answers a 2025 upstream that asks mid-call. The 2025 upstream
 * sends a request (elicitation, sampling, roots) and waits on its open call; a 2026 caller can only
 * be asked through an `input_required` result and answers on a retry — a new HTTP request. So the
 * upstream call is parked in this process: the first request gets `input_required` with the
 * questions, the retry (its `requestState` names the parked call) hands the answers to the waiting
 * upstream call and waits for what comes next — the result, or more questions.
 *
 * The parked call lives in the process that started it: a retry must reach the same process (true
 * of one long-lived gateway; on Lambda, only while the retry lands on the same warm environment).
 */
import { randomUUID } from "node:crypto";
import type { CallContext, UpstreamAsk } from "@mcpgw/upstream";

/** What a round of a parked call ends with. */
export type RoundOutcome<T> =
  | { kind: "result"; value: T }
  | { kind: "error"; error: unknown }
  | { kind: "input"; inputRequests: Record<string, UpstreamAsk> };

interface Question {
  ask: UpstreamAsk;
  sent: boolean;
  resolve(answer: Record<string, unknown>): void;
  reject(error: unknown): void;
}

/** How long a parked call waits for the retry that answers it before it is abandoned. */
export const PARKED_TTL_MS = 10 * 60_000;
/** At most this many calls parked per process; past it the oldest is abandoned. */
export const MAX_PARKED = 1_000;

/** One upstream call waiting on its caller's answers. */
export class ParkedCall<T> {
  readonly id = randomUUID();
  /** Where the call's progress and logs go now: the request of the current round. */
  relay: CallContext | undefined;
  private readonly questions = new Map<string, Question>();
  private settled: RoundOutcome<T> | undefined;
  private wake: (() => void) | undefined;
  private asked = 0;
  private readonly controller = new AbortController();
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    run: (ask: (ask: UpstreamAsk) => Promise<Record<string, unknown>>, signal: AbortSignal) => Promise<T>,
    relay: CallContext,
    private readonly onDone: (call: ParkedCall<T>) => void,
    private readonly ttlMs: number,
  ) {
    this.relay = relay;
    run((ask) => this.ask(ask), this.controller.signal).then(
      (value) => this.settle({ kind: "result", value }),
      (error: unknown) => this.settle({ kind: "error", error }),
    );
  }

  /** The next outcome: the result once the upstream call ends, or the questions not yet sent. */
  async next(): Promise<RoundOutcome<T>> {
    this.pause();
    for (;;) {
      if (this.settled) {
        this.onDone(this);
        return this.settled;
      }
      const unsent = [...this.questions].filter(([, question]) => !question.sent);
      if (unsent.length > 0) {
        for (const [, question] of unsent) question.sent = true;
        this.park();
        return { kind: "input", inputRequests: Object.fromEntries(unsent.map(([key, q]) => [key, q.ask])) };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /**
   * Hands the caller's answers to the questions they name; a question left unanswered is asked
   * again in the next round.
   */
  answer(inputResponses: Record<string, unknown> | undefined): void {
    for (const [key, question] of this.questions) {
      const answer = inputResponses?.[key];
      if (answer && typeof answer === "object") {
        this.questions.delete(key);
        question.resolve(answer as Record<string, unknown>);
      } else {
        question.sent = false;
      }
    }
  }

  /** Gives up: the upstream call is cancelled and its questions refused. */
  abandon(reason: string): void {
    this.controller.abort(new Error(reason));
    for (const question of this.questions.values()) question.reject(new Error(reason));
    this.questions.clear();
    this.settle({ kind: "error", error: new Error(reason) });
    this.onDone(this);
  }

  private ask(ask: UpstreamAsk): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.questions.set(`q${++this.asked}`, { ask, sent: false, resolve, reject });
      this.wake?.();
    });
  }

  private settle(outcome: RoundOutcome<T>): void {
    this.settled ??= outcome;
    this.wake?.();
  }

  /** Between rounds the call waits for its retry, at most `ttlMs`. */
  private park(): void {
    this.expiry = setTimeout(() => this.abandon("the caller did not answer in time"), this.ttlMs);
    this.expiry.unref();
  }

  private pause(): void {
    clearTimeout(this.expiry);
    this.wake = undefined;
  }
}

/** The calls parked in this process, by id. */
export class ParkedCalls {
  private readonly calls = new Map<string, ParkedCall<unknown>>();

  constructor(private readonly ttlMs = PARKED_TTL_MS) {}

  /**
   * Starts an upstream call that may park; `run` gets the `ask` that parks it. `relay` is where its
   * progress and logs go until a retry takes over.
   */
  start<T>(
    run: (ask: (ask: UpstreamAsk) => Promise<Record<string, unknown>>, signal: AbortSignal) => Promise<T>,
    relay: CallContext,
  ): ParkedCall<T> {
    if (this.calls.size >= MAX_PARKED) {
      const oldest = this.calls.values().next().value;
      oldest?.abandon("too many calls are waiting for answers");
    }
    const call = new ParkedCall<T>(run, relay, (done) => this.calls.delete(done.id), this.ttlMs);
    this.calls.set(call.id, call as ParkedCall<unknown>);
    return call;
  }

  /** The parked call with this id, if it is still waiting in this process. */
  get<T>(id: string): ParkedCall<T> | undefined {
    return this.calls.get(id) as ParkedCall<T> | undefined;
  }

  /** Calls parked now (for tests and metrics). */
  get size(): number {
    return this.calls.size;
  }
}
