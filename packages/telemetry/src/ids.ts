/**
 * Trace and span ids from the OS's cryptographic randomness. The SDK's default draws them from
 * `Math.random`, whose next outputs can be worked out from enough past ones; a trace id reaches callers
 * (in `traceparent`, in audit events), so one caller could guess the ids of another's calls. Drawn
 * 4 KiB at a time and turned into hex once per draw, which also makes an id cheaper than the default's.
 */
import { randomBytes } from "node:crypto";
import type { IdGenerator } from "@opentelemetry/sdk-trace";

const POOL_BYTES = 4096;
/** An id of only zeros is invalid in W3C trace context. */
const ALL_ZEROS = /^0+$/;

/** Random trace ids (32 hex digits) and span ids (16), never all zeros. */
export class CryptoIdGenerator implements IdGenerator {
  private pool = "";
  private next = 0;

  generateTraceId(): string {
    return this.take(32);
  }

  generateSpanId(): string {
    return this.take(16);
  }

  private take(digits: number): string {
    if (this.next + digits > this.pool.length) {
      this.pool = randomBytes(POOL_BYTES).toString("hex");
      this.next = 0;
    }
    const id = this.pool.slice(this.next, this.next + digits);
    this.next += digits;
    return ALL_ZEROS.test(id) ? this.take(digits) : id;
  }
}
