/**
 * A TCP link to a service that a test can cut and mend, as a network fault does: cut, the port stops
 * listening (new connections are refused) and every open connection is reset; mended, it listens
 * again on the same port. The real client and the real service on either side, nothing mocked.
 */
import { connect, createServer, type Socket } from "node:net";

export interface CuttableLink {
  /** `http://127.0.0.1:<port>`: the service's endpoint through the link. */
  endpoint: string;
  cut(): Promise<void>;
  mend(): Promise<void>;
  close(): Promise<void>;
}

/** A link on 127.0.0.1 to `target` (an `http://host:port` endpoint). */
export async function startCuttableLink(target: string): Promise<CuttableLink> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(port), hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  const listen = (at: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(at, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const linkPort = await listen(0);
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    endpoint: `http://127.0.0.1:${linkPort}`,
    cut,
    mend: async () => {
      await listen(linkPort);
    },
    close: () => (server.listening ? cut() : Promise.resolve()),
  };
}
