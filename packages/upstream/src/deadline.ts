import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";

/**
 * One deadline for a call made of several requests (a task's creation and its result): `timeoutMs`
 * from the start, pushed back to `timeoutMs` from now by each {@link Deadline.extend} (progress), never
 * past `maxMs` from the start. Its signal aborts with the SDK's request-timeout error.
 */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #end: number;
  #timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly timeoutMs: number,
    maxMs: number,
  ) {
    this.#end = Date.now() + maxMs;
    this.#timer = this.#arm();
  }

  /** Aborts when the deadline passes. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Pushes the deadline back to `timeoutMs` from now, up to the ceiling. */
  extend(): void {
    if (this.#controller.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#timer = this.#arm();
  }

  /** Stops the clock (the call is over). */
  clear(): void {
    clearTimeout(this.#timer);
  }

  #arm(): ReturnType<typeof setTimeout> {
    const ms = Math.max(0, Math.min(this.timeoutMs, this.#end - Date.now()));
    return setTimeout(
      () => this.#controller.abort(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")),
      ms,
    );
  }
}
