import { randomUUID } from "node:crypto";
import type { LookupAddress } from "node:dns";
import { getEventListeners } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { BufferedResponse } from "../buffered-response";
import { createGuardedFetch, ForbiddenAddressError, type Resolver } from "./guarded-fetch";
import { createPinnedFetch, type HopFetch } from "./pinned-fetch";

interface TestServer {
  origin: string;
  port: number;
  /** TCP connections the server accepted. */
  connections: number;
  /** Request lines and headers it received. */
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

/** Starts a node:http server on 127.0.0.1 (random port), recording requests; closed after each test. */
async function startServer(handler: Handler): Promise<TestServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      state.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      handler(req, res, body);
    });
  });
  const state: TestServer = { origin: "", port: 0, connections: 0, requests: [] };
  server.on("connection", () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  cleanups.push(() => closeServer(server));
  return state;
}

function closeServer(server: http.Server | tls.Server): Promise<void> {
  if ("closeAllConnections" in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A resolver that answers from a fixed table and counts its calls. */
function fakeDns(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

/** The default hop fetch, recording every hop it is asked to send. */
function recordingHops(): { fetchImpl: HopFetch; hops: string[] } {
  const pinned = createPinnedFetch();
  const hops: string[] = [];
  const fetchImpl: HopFetch = (url, init, addresses) => {
    hops.push(`${init.method} ${url.href}`);
    return pinned(url, init, addresses);
  };
  return { fetchImpl, hops };
}

describe("createGuardedFetch", () => {
  it("with allowPrivate, reaches a loopback server and streams the body", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      void released.then(() => res.end("data: second\n\n"));
    });
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const response = await guardedFetch(`${server.origin}/sse`);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${server.origin}/sse`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read(); // arrives while the server still holds the response open
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    release();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe("data: second\n\n");
  });

  it("sends method, headers and body like fetch", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const response = await guardedFetch(`${server.origin}/mcp?x=1`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify({ jsonrpc: "2.0" }),
    });
    expect(await response.text()).toBe("ok");
    expect(server.requests).toEqual([
      expect.objectContaining({
        method: "POST",
        url: "/mcp?x=1",
        body: '{"jsonrpc":"2.0"}',
        headers: expect.objectContaining({
          host: `127.0.0.1:${server.port}`,
          "content-type": "application/json",
          "content-length": "17",
          "x-api-key": "k",
        }),
      }),
    ]);
  });

  it("without allowPrivate, refuses a loopback server before connecting", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const guardedFetch = createGuardedFetch({ allowPrivate: false });

    await expect(guardedFetch(`${server.origin}/mcp`)).rejects.toThrow(ForbiddenAddressError);
    await expect(guardedFetch(`http://localhost:${server.port}/mcp`)).rejects.toThrow(ForbiddenAddressError);
    expect(server.connections).toBe(0);
  });

  it("refuses a hostname whose DNS answer is loopback, without connecting", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const dns = fakeDns({ "rebind.test": ["127.0.0.1"] });
    const guardedFetch = createGuardedFetch({ allowPrivate: false, lookup: dns });

    const failure = guardedFetch(`http://rebind.test:${server.port}/`);
    await expect(failure).rejects.toThrow(ForbiddenAddressError);
    await expect(failure).rejects.toThrow(/forbidden address: rebind\.test resolves to 127\.0\.0\.1/);
    expect(server.connections).toBe(0);
  });

  it("refuses a host if ANY resolved address is forbidden", async () => {
    const { fetchImpl, hops } = recordingHops();
    const dns = fakeDns({ "mixed.test": ["93.184.215.14", "169.254.169.254"] });
    const guardedFetch = createGuardedFetch({ allowPrivate: true, lookup: dns, fetchImpl });

    await expect(guardedFetch("http://mixed.test/")).rejects.toThrow(ForbiddenAddressError);
    expect(hops).toEqual([]);
  });

  it.each(["2001::a9fe:a9fe", "192.0.2.10", "192.0.0.9", "100::1", "2002:c000:20a::1"])(
    "refuses a hostname that resolves to the special-purpose address %s, even with allowPrivate",
    async (address) => {
      const { fetchImpl, hops } = recordingHops();
      const dns = fakeDns({ "special.test": [address] });
      const guardedFetch = createGuardedFetch({ allowPrivate: true, lookup: dns, fetchImpl });

      const failure = guardedFetch("http://special.test/mcp");

      await expect(failure).rejects.toThrow(ForbiddenAddressError);
      await expect(failure).rejects.toThrow(/an unspecified or reserved address/);
      expect(hops).toEqual([]);
    },
  );

  it("resolves once and connects to the vetted address, keeping the hostname in Host", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const dns = fakeDns({ "upstream.test": ["127.0.0.1"] });
    const guardedFetch = createGuardedFetch({ allowPrivate: true, lookup: dns });

    const response = await guardedFetch(`http://upstream.test:${server.port}/mcp`);
    expect(await response.text()).toBe("ok");
    expect(dns.calls).toEqual(["upstream.test"]);
    expect(server.requests[0]?.headers.host).toBe(`upstream.test:${server.port}`);
  });

  it("uses the original hostname for TLS SNI while connecting to the vetted IP", async () => {
    const serverNames: string[] = [];
    const tlsServer = tls.createServer({
      SNICallback: (servername, callback) => {
        serverNames.push(servername);
        callback(new Error("no certificate in this test"), undefined);
      },
    });
    await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => closeServer(tlsServer));
    const { port } = tlsServer.address() as AddressInfo;
    const guardedFetch = createGuardedFetch({
      allowPrivate: true,
      lookup: fakeDns({ "secure.test": ["127.0.0.1"] }),
    });

    await expect(guardedFetch(`https://secure.test:${port}/`)).rejects.toThrow(TypeError);
    expect(serverNames).toEqual(["secure.test"]);
  });

  it.each(["file:///etc/passwd", "ftp://example.com/", "gopher://example.com:70/_x", "data:text/plain,x"])(
    "refuses the scheme of %s",
    async (url) => {
      const { fetchImpl, hops } = recordingHops();
      const guardedFetch = createGuardedFetch({ allowPrivate: true, fetchImpl });
      await expect(guardedFetch(url)).rejects.toMatchObject({
        name: "ForbiddenAddressError",
        reason: "scheme",
      });
      expect(hops).toEqual([]);
    },
  );

  it.each([
    "http://169.254.169.254/latest/meta-data",
    "http://2852039166/latest/meta-data",
    "http://0xa9fea9fe/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://metadata.test/computeMetadata/v1/",
  ])("refuses a redirect to %s, even with allowPrivate", async (target) => {
    const server = await startServer((_req, res) => res.writeHead(302, { location: target }).end());
    const { fetchImpl, hops } = recordingHops();
    const dns = fakeDns({ "metadata.test": ["169.254.169.254"] });
    const guardedFetch = createGuardedFetch({ allowPrivate: true, fetchImpl, lookup: dns });

    await expect(guardedFetch(`${server.origin}/start`)).rejects.toThrow(ForbiddenAddressError);
    expect(hops).toEqual([`GET ${server.origin}/start`]); // no attempt on the metadata hop
  });

  it("follows allowed redirects, rewriting POST to GET on 302 and keeping the body on 307", async () => {
    const server = await startServer((req, res) => {
      if (req.url === "/a") res.writeHead(307, { location: "/b" }).end();
      else if (req.url === "/b") res.writeHead(302, { location: "/c" }).end();
      else res.end("done");
    });
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const response = await guardedFetch(`${server.origin}/a`, { method: "POST", body: "payload" });
    expect(await response.text()).toBe("done");
    expect(response.redirected).toBe(true);
    expect(response.url).toBe(`${server.origin}/c`);
    expect(server.requests.map(({ method, url, body }) => `${method} ${url} ${body}`)).toEqual([
      "POST /a payload",
      "POST /b payload",
      "GET /c ",
    ]);
  });

  it("drops credentials when a redirect leaves the origin", async () => {
    const other = await startServer((_req, res) => res.end("other"));
    const first = await startServer((_req, res) =>
      res.writeHead(302, { location: `http://other.test:${other.port}/` }).end(),
    );
    const dns = fakeDns({ "other.test": ["127.0.0.1"] });
    const guardedFetch = createGuardedFetch({ allowPrivate: true, lookup: dns });

    const headers = { authorization: "Bearer secret-token", "x-trace": "1" };
    expect(await (await guardedFetch(`${first.origin}/`, { headers })).text()).toBe("other");
    expect(first.requests[0]?.headers.authorization).toBe("Bearer secret-token");
    expect(other.requests[0]?.headers.authorization).toBeUndefined();
    expect(other.requests[0]?.headers["x-trace"]).toBe("1");
  });

  it("stops after 5 redirects", async () => {
    const server = await startServer((_req, res) => res.writeHead(302, { location: "/again" }).end());
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    await expect(guardedFetch(`${server.origin}/`)).rejects.toThrow(/too many redirects/);
    expect(server.requests).toHaveLength(6);
  });

  it('returns the redirect itself with redirect: "manual" (as the SDK transports request)', async () => {
    const server = await startServer((_req, res) => res.writeHead(302, { location: "/elsewhere" }).end());
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const response = await guardedFetch(`${server.origin}/`, { redirect: "manual" });

    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/elsewhere");
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a manual-mode redirect to a forbidden address before anyone can follow it", async () => {
    const server = await startServer((_req, res) =>
      res.writeHead(302, { location: "http://169.254.169.254/" }).end(),
    );
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const error = await guardedFetch(`${server.origin}/`, { redirect: "manual" }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ForbiddenAddressError);
    expect((error as Error).message).toMatch(/forbidden address: redirect to 169\.254\.169\.254/);
  });

  it("names the host in the refusal but never a header value", async () => {
    const guardedFetch = createGuardedFetch({ allowPrivate: true });
    const failure = guardedFetch("http://169.254.169.254/latest/meta-data?q=query-secret", {
      headers: { authorization: "Bearer header-secret" },
    });

    const error = await failure.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenAddressError);
    expect(error).toMatchObject({ name: "ForbiddenAddressError", host: "169.254.169.254" });
    const message = (error as Error).message;
    expect(message).toMatch(/forbidden address/);
    expect(message).toContain("169.254.169.254");
    expect(message).not.toMatch(/secret/);
  });

  it("aborts a streaming response when the signal fires", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
    });
    const controller = new AbortController();
    const guardedFetch = createGuardedFetch({ allowPrivate: true });

    const response = await guardedFetch(`${server.origin}/`, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
  });

  it("works as the fetch of the SDK's StreamableHTTPClientTransport", async () => {
    const mcp = new McpServer({ name: "test-upstream", version: "1.0.0" });
    mcp.registerTool("ping", { description: "answers pong" }, async () => ({
      content: [{ type: "text", text: "pong" }],
    }));
    const serverTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await mcp.connect(serverTransport);
    cleanups.push(() => mcp.close());
    const server = await startServer((req, res, body) => {
      void serverTransport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
    });
    const lookup = fakeDns({ "mcp.test": ["127.0.0.1"] });
    const client = new Client({ name: "gateway", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`http://mcp.test:${server.port}/mcp`), {
      fetch: createGuardedFetch({ allowPrivate: true, lookup }),
    });

    await client.connect(transport);
    const result = await client.callTool({ name: "ping" });
    expect(result.content).toEqual([{ type: "text", text: "pong" }]);
    await client.close();
    expect(server.requests.every((r) => r.headers.host === `mcp.test:${server.port}`)).toBe(true);
  });
});

describe("createGuardedFetch under load", () => {
  it("keeps the listener count of a long-lived signal flat over 10,000 calls", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const guarded = createGuardedFetch({ allowPrivate: true });
    const session = new AbortController(); // like a session's transport signal: it outlives every call
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const counts: number[] = [];

    try {
      for (let batch = 0; batch < 10_000 / 16; batch++) {
        const calls = Array.from({ length: 16 }, async () => {
          const response = await guarded(`${server.origin}/`, {
            method: "POST",
            body: "{}",
            signal: session.signal,
          });
          await response.text();
        });
        if (batch % 50 === 0) counts.push(getEventListeners(session.signal, "abort").length); // 16 in flight
        await Promise.all(calls);
      }
    } finally {
      process.off("warning", onWarning);
    }

    expect(server.requests).toHaveLength(10_000);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1);
    expect(getEventListeners(session.signal, "abort").length).toBeLessThanOrEqual(1);
    expect(warnings).not.toContain("MaxListenersExceededWarning");
    // Calls at steady concurrency reuse their sockets instead of opening one each.
    expect(server.connections).toBeLessThanOrEqual(32);
  }, 120_000);
});

describe("createGuardedFetch bodies", () => {
  it("hands over an answer that came whole as a buffered response, and one still arriving as a stream", async () => {
    const server = await startServer((req, res) => {
      if (req.url === "/whole") return void res.end('{"ok":true}');
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first ");
      setTimeout(() => res.end("last"), 50);
    });
    const guarded = createGuardedFetch({ allowPrivate: true });

    const whole = await guarded(`${server.origin}/whole`);
    const streamed = await guarded(`${server.origin}/slow`);

    expect(whole).toBeInstanceOf(BufferedResponse);
    expect(await whole.json()).toEqual({ ok: true });
    expect(streamed).not.toBeInstanceOf(BufferedResponse);
    expect(await streamed.text()).toBe("first last");
  });
});
