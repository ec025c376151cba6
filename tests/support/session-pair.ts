/**
 * Two sets of 2025 sessions over one HTTP server, as the gateway serves a session's requests (its Node
 * adapter, `LegacySessions`, a POST's event stream settled): `/fast/mcp` with the fast path, `/sdk/mcp`
 * with every request on the SDK transport's own path. For tests and the bench that compare the two.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Server } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { LegacySessions } from "../../packages/api/src/gateway/mcp-sessions";
import { settleEventStream } from "../../packages/api/src/gateway/settle-stream";

/** A running pair: `${origin}/fast/mcp` and `${origin}/sdk/mcp`; always `close()` it. */
export interface SessionPair {
  origin: string;
  close(): Promise<void>;
}

/** Starts the pair on 127.0.0.1, each session served by a server `newServer` makes. */
export async function startSessionPair(newServer: () => Server): Promise<SessionPair> {
  const authInfo = { token: "", clientId: "tester", scopes: [], extra: {} };
  const key = Buffer.alloc(32, 7);
  const paths = {
    fast: new LegacySessions(key, newServer, undefined, undefined, true),
    sdk: new LegacySessions(key, newServer, undefined, undefined, false),
  };
  const app = new Hono();
  app.all("/:path/mcp", async (c) => {
    const sessions = paths[c.req.param("path") as keyof typeof paths];
    if (!sessions) return c.notFound();
    const body = c.req.method === "POST" ? await c.req.json() : undefined;
    const response = await sessions.handle(c.req.raw, body, "tester", "", authInfo);
    return c.req.method === "POST" ? settleEventStream(response) : response;
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      await Promise.all([paths.fast.close(), paths.sdk.close()]);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
