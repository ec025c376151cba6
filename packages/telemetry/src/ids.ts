/**
 * Trace and span ids from the OS's cryptographic randomness. The SDK's default draws them from
 * `Math.random`, whose next outputs can be worked out from enough past ones; a trace id reaches callers
 * (in `traceparent`, in audit events), so one caller could guess the ids of another's calls. Bytes are
 * drawn 4 KiB at a time, which also makes an id cheaper than the default's.
 */
import { randomFillSync } from "node:crypto";
import type { IdGenerator } from "@opentelemetry/sdk-trace";

const POOL_BYTES = 4096;

/** Random trace ids (32 lowercase hex digits) and span ids (16), never all zeros (invalid in W3C). */
export class CryptoIdGenerator implements IdGenerator {
  private readonly pool = Buffer.alloc(POOL_BYTES);
  private next = POOL_BYTES;

  generateTraceId(): string {
    return this.take(16);
  }

  generateSpanId(): string {
    return this.take(8);
  }

  private take(bytes: number): string {
    if (this.next + bytes > POOL_BYTES) {
      randomFillSync(this.pool);
      this.next = 0;
    }
    const start = this.next;
    this.next += bytes;
    // A string of its own (not a slice holding a whole pool's text alive while the id lives).
    for (let i = start; i < start + bytes; i++)
      if (this.pool[i] !== 0) return this.pool.toString("hex", start, start + bytes);
    return this.take(bytes);
  }
}
