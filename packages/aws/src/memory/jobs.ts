import { randomUUID } from "node:crypto";
import type { Job } from "@mcpgw/core";
import { MAX_RECEIVE_COUNT, VISIBILITY_TIMEOUT_SECONDS } from "../bootstrap";
import { type JobQueue, QueueError, type ReceivedJob } from "../jobs";

/** A message on the in-memory queue, as a test may look at it. */
export interface QueuedJob {
  messageId: string;
  body: string;
  /** The delay it was sent with. */
  delaySeconds: number;
  receiveCount: number;
}

/** The job queue in memory, plus what tests look at. */
export interface MemoryJobQueue extends JobQueue {
  /** The jobs waiting or in flight (received, not acknowledged), in the order sent; `job` is the parsed body. */
  pending(): Array<QueuedJob & { job: Job | undefined }>;
  /** Messages moved aside after `maxReceiveCount` receives (the dead-letter queue). */
  deadLetters(): QueuedJob[];
  /** Puts a raw body on the queue, as anyone with send rights could (a malformed job). */
  sendRaw(body: string, delaySeconds?: number): void;
}

interface Message extends QueuedJob {
  visibleAt: number;
  receipt: string | undefined;
}

/**
 * SQS's semantics that the worker relies on, in memory: delays (0–900 s), long-poll receives of up to
 * 10, a visibility timeout after each receive (so an unacknowledged job comes back), acknowledgement by
 * the latest receipt, and a dead-letter list after `maxReceiveCount` receives.
 */
export function createMemoryJobQueue(
  options: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number } = {},
): MemoryJobQueue {
  const visibilityMs = (options.visibilityTimeoutSeconds ?? VISIBILITY_TIMEOUT_SECONDS) * 1_000;
  const maxReceiveCount = options.maxReceiveCount ?? MAX_RECEIVE_COUNT;
  let messages: Message[] = [];
  const dead: QueuedJob[] = [];
  /** Receives waiting for a message: woken by every send. */
  const waiting = new Set<() => void>();

  function put(body: string, delaySeconds: number): void {
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > 900)
      throw new QueueError(`Could not enqueue a job: delay ${delaySeconds} s is not 0–900`);
    messages.push({
      messageId: randomUUID(),
      body,
      delaySeconds,
      receiveCount: 0,
      visibleAt: Date.now() + delaySeconds * 1_000,
      receipt: undefined,
    });
    for (const wake of waiting) wake();
  }

  /** Waits until `ms` pass, a job is sent, or `signal` aborts. */
  function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(ms, 0));
      waiting.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  const view = ({ messageId, body, delaySeconds, receiveCount }: Message): QueuedJob => ({
    messageId,
    body,
    delaySeconds,
    receiveCount,
  });

  return {
    async send(job, delaySeconds = 0) {
      put(JSON.stringify(job), delaySeconds);
    },

    async sendMany(jobs, delaySeconds) {
      for (const job of jobs) put(JSON.stringify(job), delaySeconds?.(job) ?? 0);
    },

    sendRaw(body, delaySeconds = 0) {
      put(body, delaySeconds);
    },

    async receive({ max = 10, waitSeconds = 0, signal } = {}) {
      const deadline = Date.now() + waitSeconds * 1_000;
      for (;;) {
        signal?.throwIfAborted();
        const now = Date.now();
        const received: ReceivedJob[] = [];
        for (const message of messages) {
          if (received.length >= Math.min(max, 10)) break;
          if (message.visibleAt > now) continue;
          if (message.receiveCount >= maxReceiveCount) {
            dead.push(view(message));
            message.visibleAt = Number.POSITIVE_INFINITY;
            continue;
          }
          message.receiveCount++;
          message.visibleAt = now + visibilityMs;
          message.receipt = randomUUID();
          received.push({ messageId: message.messageId, body: message.body, receipt: message.receipt });
        }
        messages = messages.filter((message) => message.visibleAt !== Number.POSITIVE_INFINITY);
        if (received.length > 0 || now >= deadline) return received;
        const nextVisible = Math.min(...messages.map((message) => message.visibleAt));
        await pause(Math.min(deadline, nextVisible) - now, signal);
      }
    },

    async depth() {
      const now = Date.now();
      return messages.filter((message) => message.visibleAt <= now).length;
    },

    async ack(receipts) {
      const acked = new Set(receipts);
      messages = messages.filter((message) => message.receipt === undefined || !acked.has(message.receipt));
    },

    pending() {
      return messages.map((message) => ({ ...view(message), job: parsed(message.body) }));
    },

    deadLetters() {
      return dead.map((message) => ({ ...message }));
    },
  };
}

function parsed(body: string): Job | undefined {
  try {
    return JSON.parse(body) as Job;
  } catch {
    return undefined;
  }
}
