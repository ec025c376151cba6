/**
 * Connection lifecycle — outbound safety (SSRF). Literal metadata/link-local hosts in every spelling are
 * refused at create and at PATCH (400 `server.url_forbidden`); an upstream that redirects to one settles
 * `failed` with "forbidden address" and no socket is opened to it; with private upstreams disallowed,
 * literal loopback/private hosts are refused, and a hostname that resolves to loopback settles `failed`
 * with "forbidden address" while the upstream behind it sees no connection at all.
 */
import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import net from "node:net";
import { checkUrl, createGuardedFetch } from "@mcpgw/upstream";
import { afterAll, afterEach, beforeAll, describe, it, vi } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack } from "../support/stack";
import { createServer, type Redirector, settled, startRedirector, uniqueName } from "./helpers";

/** Cloud-metadata and link-local hosts, spelled every way URL parsers and inet_aton accept. */
const METADATA_HOSTS = [
  "169.254.169.254",
  "2852039166",
  "0xa9fea9fe",
  "0xA9.0xFE.0xA9.0xFE",
  "0251.0376.0251.0376",
  "169.254.43518",
  "169.254.169.254.",
  "１６９．２５４．１６９．２５４", // full-width digits and dots
  "[::ffff:169.254.169.254]",
  "[::ffff:a9fe:a9fe]",
  "[fd00:ec2::254]",
  "169.254.1.1",
  "169.254.170.2",
  "[fe80::1]",
  "0.0.0.0",
];

/** Loopback and private literals: refused only when private upstreams are disallowed. */
const PRIVATE_HOSTS = [
  "127.0.0.1",
  "127.1",
  "2130706433",
  "0x7f000001",
  "localhost",
  "LOCALHOST.",
  "api.localhost",
  "[::1]",
  "[::ffff:127.0.0.1]",
  "10.0.0.1",
  "172.16.5.4",
  "192.168.1.1",
  "[fd12:3456::1]",
];

/** Records the destination of every TCP connect attempted in this process while active. */
function recordConnects() {
  const targets: string[] = [];
  const original = net.Socket.prototype.connect;
  const spy = vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (first && typeof first === "object" && "host" in first) {
      const { host, port } = first as { host?: string; port?: number };
      targets.push(`${host}:${port}`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  });
  return { targets, restore: () => spy.mockRestore() };
}

describe("connection lifecycle: SSRF guard (private upstreams allowed, as in dev)", () => {
  let stack: Stack;
  const redirectors: Redirector[] = [];

  beforeAll(async () => {
    stack = await startStack({ allowPrivateUpstreams: true });
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(redirectors.map((r) => r.close()));
  });

  it.for(METADATA_HOSTS)("create with http://%s/ → 400 server.url_forbidden", async (host, { expect }) => {
    for (const url of [`http://${host}/`, `https://${host}:8443/mcp`]) {
      const response = await stack.call("POST", "/v1/servers", { name: uniqueName("meta"), url });
      expect(response.status, url).toBe(400);
      expect(response.body.code, url).toBe("server.url_forbidden");
    }
  });

  it("PATCH to a metadata/link-local URL in any spelling → 400, and the server is unchanged", async ({
    expect,
  }) => {
    const created = await stack.call("POST", "/v1/servers", {
      name: uniqueName("patched"),
      url: "http://127.0.0.1:9/mcp",
      enabled: false,
    });
    expect(created.status).toBe(201);
    for (const host of METADATA_HOSTS) {
      const response = await stack.call("PATCH", `/v1/servers/${created.body.id}`, {
        url: `http://${host}/`,
      });
      expect(response.status, host).toBe(400);
      expect(response.body.code, host).toBe("server.url_forbidden");
    }
    const after = await stack.call("GET", `/v1/servers/${created.body.id}`);
    expect(after.body).toMatchObject({ url: "http://127.0.0.1:9/mcp", version: created.body.version });
  });

  it("non-http(s) schemes are refused", async ({ expect }) => {
    for (const url of ["file:///etc/passwd", "ftp://example.com/", "gopher://169.254.169.254/"]) {
      const response = await stack.call("POST", "/v1/servers", { name: uniqueName("scheme"), url });
      expect(response.status, url).toBe(400);
    }
  });

  it.for([
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/latest/api/token",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://169.254.1.1:8080/",
  ])(
    "an upstream that 302-redirects to %s → failed, 'forbidden address', no socket to it",
    async (location, { expect }) => {
      const redirector = await startRedirector(location);
      redirectors.push(redirector);
      const connects = recordConnects();
      try {
        const id = await createServer(stack, { name: uniqueName("redirect"), url: redirector.url });
        const status = await settled(stack, id);
        expect(status).toMatchObject({ state: "failed", reason: "failed", toolCount: 0 });
        expect(status.lastError).toContain("forbidden address");
        expect(status.error).toContain("forbidden address");
        expect(redirector.requests).toBeGreaterThan(0); // the first hop was made…
        // …the redirect target never was.
        expect(connects.targets.filter((t) => /^(169\.254\.|fd00:ec2::254|2852039166)/.test(t))).toEqual([]);
        expect(connects.targets.some((t) => t.endsWith(`:${new URL(redirector.url).port}`))).toBe(true);
      } finally {
        connects.restore();
      }
    },
  );
});

describe("connection lifecycle: SSRF guard (private upstreams disallowed, as deployed)", () => {
  let stack: Stack;
  let upstream: Upstream;
  /** A name our injected resolver answers with 127.0.0.1, like a rebinding or internal DNS record. */
  const FAKE_NAME = "internal-upstream.lifecycle.test";
  const resolver = async (name: string): Promise<LookupAddress[]> =>
    name === FAKE_NAME ? [{ address: "127.0.0.1", family: 4 }] : lookup(name, { all: true });

  beforeAll(async () => {
    stack = await startStack({ allowPrivateUpstreams: false });
    upstream = await startUpstream({});
  });
  afterEach(() => upstream.resetCounters());
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("literal loopback and private hosts → 400 server.url_forbidden (create and PATCH)", async ({
    expect,
  }) => {
    for (const host of [...PRIVATE_HOSTS, ...METADATA_HOSTS]) {
      const response = await stack.call("POST", "/v1/servers", {
        name: uniqueName("private"),
        url: `http://${host}:${upstream.port}/mcp`,
      });
      expect(response.status, host).toBe(400);
      expect(response.body.code, host).toBe("server.url_forbidden");
    }
    const created = await stack.call("POST", "/v1/servers", {
      name: uniqueName("public"),
      url: "https://mcp.example.com/mcp",
      enabled: false,
    });
    expect(created.status).toBe(201);
    for (const host of PRIVATE_HOSTS) {
      const response = await stack.call("PATCH", `/v1/servers/${created.body.id}`, {
        url: `http://${host}:${upstream.port}/mcp`,
      });
      expect(response.status, host).toBe(400);
      expect(response.body.code, host).toBe("server.url_forbidden");
    }
    expect(upstream.connections).toBe(0);
  });

  it("a name whose DNS answer is loopback (injected resolver) → failed, 'forbidden address', zero connections", async ({
    expect,
  }) => {
    const url = `http://${FAKE_NAME}:${upstream.port}/mcp`;
    expect(checkUrl(url, { allowPrivate: false }).ok).toBe(true); // a name: only DNS can tell
    // Control: with private upstreams allowed, the same resolver's answer does reach the upstream.
    const permissive = createGuardedFetch({ allowPrivate: true, lookup: resolver });
    await (await permissive(url, { method: "POST", body: "{}" })).text();
    expect(upstream.connections).toBeGreaterThan(0);
    upstream.resetCounters();

    const original = stack.worker.fetch;
    stack.worker.fetch = createGuardedFetch({ allowPrivate: false, lookup: resolver });
    try {
      const id = await createServer(stack, { name: uniqueName("fake-dns"), url });
      const status = await settled(stack, id);
      expect(status).toMatchObject({ state: "failed", reason: "failed", toolCount: 0 });
      expect(status.lastError).toContain("forbidden address");
      expect(status.lastError).toContain("127.0.0.1");
      expect(upstream.connections).toBe(0);
      expect(upstream.requests).toBe(0);
    } finally {
      stack.worker.fetch = original;
    }
  });
});
