import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";

/** A running local HTTP listener. */
export interface Listener {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves `app` on 127.0.0.1:`port` (0 picks a free one); resolves once it is listening. */
export function listen(app: Pick<Hono, "fetch">, port: number, hostname = "127.0.0.1"): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      resolve({
        url: `http://${hostname}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.once("error", reject);
  });
}
