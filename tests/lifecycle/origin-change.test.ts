/**
 * Credentials stay with their origin: a URL edit that would carry stored headers to another origin is
 * refused, and the new origin receives nothing — not from the API, not from the worker's probe. The
 * same edit re-sending the header values does reach it (the control: the path is real), with only the
 * re-sent values.
 */
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack, waitFor } from "../support/stack";
import { createServer, reaches, uniqueName } from "./helpers";

/** A bare listener on 127.0.0.1 standing for the "new origin": it records every request it gets. */
async function startListener() {
  const seen: IncomingHttpHeaders[] = [];
  const server = createHttpServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not here"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe("URL moved to another origin", () => {
  let stack: Stack;
  let upstream: Upstream;
  let listener: Awaited<ReturnType<typeof startListener>>;
  const token = `sk-origin-${randomUUID()}`;

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startUpstream({ requireBearer: token });
    listener = await startListener();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([upstream?.close(), listener?.close()]);
  });

  it("without the headers re-sent: 400, nothing stored, the new origin receives nothing; re-sent: it does", async () => {
    // Prepare: a connected server whose stored Authorization belongs to the upstream's origin
    const id = await createServer(stack, {
      name: uniqueName("origin"),
      url: upstream.url,
      headers: { Authorization: `Bearer ${token}`, "X-Trace": "origin-test" },
    });
    await reaches(stack, id, "connected");
    const before = (await stack.call("GET", `/v1/servers/${id}`)).body;

    // Act: move the URL to the listener, keeping the stored headers by omission and by their masks
    const omitted = await stack.call("PATCH", `/v1/servers/${id}`, { url: listener.url });
    const masked = await stack.call("PATCH", `/v1/servers/${id}`, {
      url: listener.url,
      headers: { Authorization: "Bearer [SECRET]", "X-Trace": "[SECRET]" },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await stack.sweep();
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    // Assess: not one request reached the new origin; both edits refused, nothing changed
    expect(listener.seen).toEqual([]);
    for (const refused of [omitted, masked]) {
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "server.credentials_origin_changed" });
    }
    const after = (await stack.call("GET", `/v1/servers/${id}`)).body;
    expect(after).toMatchObject({ url: upstream.url, version: before.version });
    expect(await stack.store.servers.get(id)).toMatchObject({
      url: upstream.url,
      headers: { Authorization: `Bearer ${token}`, "X-Trace": "origin-test" },
    });

    // Act (control): the same move with a real value re-sent is allowed, and the probe goes there
    const fresh = `sk-fresh-${randomUUID()}`;
    const moved = await stack.call("PATCH", `/v1/servers/${id}`, {
      url: listener.url,
      headers: { Authorization: `Bearer ${fresh}` },
    });
    expect(moved.status).toBe(200);
    await waitFor(
      async () => listener.seen.length,
      (n) => n > 0,
      { timeoutMs: 10_000 },
    );

    // Assess: the new origin got the re-sent value only, never the old one or the dropped header
    for (const headers of listener.seen) {
      expect(headers.authorization).toBe(`Bearer ${fresh}`);
      expect(headers["x-trace"]).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain(token);
    }
  });
});
