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
import type { MiddlewareHandler } from "hono";

/** How often {@link QuietClose.quiet} looks whether any connection is still open. */
const POLL_MS = 25;

/** A server's quiet close (see the module's doc). */
export class QuietClose {
  #leaving = false;

  /** From now on, every response {@link endingConnections} passes ends its connection. */
  leave(): void {
    this.#leaving = true;
  }

  /**
   * Middleware: once the server leaves, each response says `Connection: close` — set on the response
   * itself, so it overrides the `keep-alive` an MCP transport's event stream names — and Node ends
   * the connection after it. A response whose headers went out before stays as it was.
   */
  endingConnections(): MiddlewareHandler {
    return async (c, next) => {
      await next();
      if (this.#leaving) c.res.headers.set("connection", "close");
    };
  }

  /**
   * Resolves once `server` has no connection open (each client closed its own), or after `maxWaitMs`:
   * then it may stop listening with nothing in flight on a connection it would cut.
   */
  async quiet(server: Server, maxWaitMs: number): Promise<void> {
    const open = () =>
      new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count ?? 0)));
    const until = Date.now() + maxWaitMs;
    while ((await open()) > 0 && Date.now() < until) await delay(POLL_MS);
  }
}
