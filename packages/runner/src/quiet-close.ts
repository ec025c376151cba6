/**
 * Closing an HTTP server without racing its clients. A server that closes an idle keep-alive
 * connection can meet a request its client is writing on it that very moment: the client sees the
 * connection reset and cannot tell whether the request was served. A leaving fleet runner must not do
 * that to the gateway (a reset call is a failed call; a refused connection is a clean "look it up
 * again"). So, once it leaves, every response ends its connection, and it stops listening only after
 * its clients closed the idle ones they kept (their keep-alive timeout is under the server's).
 */
import type { Server } from "node:http";
import { setTimeout as delay } from "node:timers/promises";

/** How often {@link QuietClose.close} looks whether any connection is still open. */
const POLL_MS = 25;

/** A server's quiet close (see the module's doc). */
export interface QuietClose {
  /** From now on, every response ends its connection (`Connection: close`): none is kept for reuse. */
  leave(): void;
  /**
   * Resolves once no connection is open (each client closed its own), or after `maxWaitMs`: then the
   * server may stop listening with nothing in flight on a connection it would cut.
   */
  quiet(maxWaitMs: number): Promise<void>;
}

/** Makes `server`'s {@link QuietClose}: call once, before it serves. */
export function quietClose(server: Server): QuietClose {
  let leaving = false;
  // First of the request listeners: the app's response then carries the header.
  server.prependListener("request", (_request, response) => {
    if (leaving) response.shouldKeepAlive = false;
  });
  const open = () =>
    new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count ?? 0)));
  return {
    leave() {
      leaving = true;
    },
    async quiet(maxWaitMs) {
      const until = Date.now() + maxWaitMs;
      while ((await open()) > 0 && Date.now() < until) await delay(POLL_MS);
    },
  };
}
