import http, { type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { QuietClose } from "./quiet-close";

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/**
 * A Hono app on Node (as the runner serves) answering "ok" — and, at `/stream`, an event stream that
 * names `Connection: keep-alive` itself, as the MCP SDK's transport does — its quiet close, and how
 * each of its connections ended.
 */
async function serve() {
  const quiet = new QuietClose();
  const app = new Hono();
  app.use("*", quiet.endingConnections());
  app.get("/", (c) => c.text("ok"));
  app.get("/stream", () => {
    const headers = { "content-type": "text/event-stream", connection: "keep-alive" };
    return new Response("event: message\ndata: ok\n\n", { headers });
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  const ends: Array<"client" | "server"> = [];
  server.on("connection", (socket: Socket) => {
    let closedByClient = false;
    socket.on("end", () => {
      closedByClient = true;
    });
    socket.on("close", () => ends.push(closedByClient ? "client" : "server"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stops.push(() => server.close());
  stops.push(() => server.closeAllConnections());
  const { port } = server.address() as AddressInfo;
  return { server, quiet, ends, url: `http://127.0.0.1:${port}` };
}

/** A keep-alive client whose idle connections close after `idleMs` (as the gateway's do, under 5 s). */
function keepAliveClient(idleMs: number) {
  const agent = new http.Agent({ keepAlive: true, timeout: idleMs });
  stops.push(() => agent.destroy());
  return (url: string) =>
    new Promise<{ connection: string | undefined; body: string }>((resolve, reject) => {
      http
        .get(url, { agent }, (response) => {
          let body = "";
          response.on("data", (chunk) => {
            body += chunk;
          });
          response.on("end", () => resolve({ connection: response.headers.connection, body }));
        })
        .on("error", reject);
    });
}

describe("QuietClose", () => {
  it("keeps connections for reuse until the server leaves, and none after — an event stream's too", async () => {
    const { quiet, url } = await serve();
    const get = keepAliveClient(5_000);
    expect(await get(url)).toEqual({ connection: "keep-alive", body: "ok" });
    expect((await get(`${url}/stream`)).connection).toBe("keep-alive");
    quiet.leave();
    expect(await get(url)).toEqual({ connection: "close", body: "ok" });
    expect(await get(`${url}/stream`)).toEqual({ connection: "close", body: "event: message\ndata: ok\n\n" });
  });

  it("after it leaves, the server ends each connection once its answer is sent, an event stream's too", async () => {
    const { quiet, ends, url } = await serve();
    const get = keepAliveClient(5_000);
    quiet.leave();
    await get(`${url}/stream`);
    await get(url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ends).toEqual(["server", "server"]);
  });

  it("waits for the client to close the idle connection it kept, so the server cuts none", async () => {
    const { quiet, server, ends, url } = await serve();
    const get = keepAliveClient(300);
    await get(url); // its connection is now idle in the client's pool
    quiet.leave();
    const started = Date.now();
    await quiet.quiet(server, 3_000);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(200);
    expect(waited).toBeLessThan(3_000);
    expect(ends).toEqual(["client"]);
  });

  it("waits no longer than its bound for a client that keeps its connection open", async () => {
    const { quiet, server } = await serve();
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    stops.push(() => socket.destroy());
    await new Promise((resolve) => socket.once("connect", resolve));
    quiet.leave();
    const started = Date.now();
    await quiet.quiet(server, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("does not wait when no connection is open", async () => {
    const { quiet, server } = await serve();
    quiet.leave();
    const started = Date.now();
    await quiet.quiet(server, 3_000);
    expect(Date.now() - started).toBeLessThan(200);
  });
});
