import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { DeadlineError } from "./classify-failure";
import { linkedUpstream } from "./linked-upstream";
import { legacyVerdict, probeUpstream } from "./probe";
import type { UpstreamTarget } from "./session";

const target: UpstreamTarget = {
  url: "https://upstream.test/mcp",
  headers: { authorization: "Bearer sk-live-0123456789abcdef" },
};
const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });

describe("probeUpstream over a linked in-memory session", () => {
  it("lists every page of tools and times the connection", async () => {
    const { open, targets } = linkedUpstream(async (cursor) =>
      cursor ? { tools: [tool("b")] } : { tools: [tool("a")], nextCursor: "page-2" },
    );

    const result = await probeUpstream(target, { fetch, open });

    expect(result).toMatchObject({ ok: true, toolCount: 2, tools: [tool("a"), tool("b")] });
    expect(targets).toEqual([target]);
  });

  it("as a liveness check, lists nothing unless told to; a 2025 session is pinged instead", async () => {
    let lists = 0;
    const { open } = linkedUpstream(async () => {
      lists++;
      return { tools: [tool("a")] };
    });
    const seen: Array<string | undefined> = [];

    const alive = await probeUpstream(target, {
      fetch,
      open,
      listToolsIf: (profile) => {
        seen.push(profile?.protocolVersion);
        return false;
      },
    });
    const relisted = await probeUpstream(target, { fetch, open, listToolsIf: () => true });

    expect(alive).toMatchObject({ ok: true, alive: true, latencyMs: expect.any(Number) });
    expect(alive).not.toHaveProperty("tools");
    expect(seen).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)]);
    expect(relisted).toMatchObject({ ok: true, toolCount: 1 });
    expect(lists).toBe(1);
  });

  it("fails with the upstream's error, scrubbed of the target's header values", async () => {
    const { open } = linkedUpstream(async () => {
      throw new McpError(ErrorCode.InternalError, "bad token Bearer sk-live-0123456789abcdef");
    });

    const result = await probeUpstream(target, { fetch, open });

    expect(result).toMatchObject({ ok: false, reason: "failed" });
    expect(result.ok === false && result.error).not.toContain("sk-live-0123456789abcdef");
  });

  it("gives up at its deadline on an upstream that never answers: not_responding", async () => {
    const { open } = linkedUpstream(() => new Promise(() => {}));

    const result = await probeUpstream(target, { fetch, open, deadlineMs: 200 });

    expect(result).toMatchObject({ ok: false, reason: "not_responding" });
  });

  it("calls a tools list the schema refuses deterministic (retrying cannot help); a timeout is not", async () => {
    const { open } = linkedUpstream(async () => ({ tools: [{ name: 42 }] }) as never);
    const hung = linkedUpstream(() => new Promise(() => {}));

    const refused = await probeUpstream(target, { fetch, open });
    const slow = await probeUpstream(target, { fetch, open: hung.open, deadlineMs: 200 });

    expect(refused).toMatchObject({ ok: false, reason: "failed", deterministic: true });
    expect(slow).toMatchObject({ ok: false, reason: "not_responding" });
    expect(slow).not.toHaveProperty("deterministic");
  });

  it("refuses a cursor the upstream already returned (a loop)", async () => {
    const { open } = linkedUpstream(async () => ({ tools: [tool("a")], nextCursor: "same" }));

    const result = await probeUpstream(target, { fetch, open });

    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("already returned") });
  });
});

describe("legacyVerdict: what a failed 2025 attempt on a 2026 server means", () => {
  const fetchFailed = (code: string) =>
    Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(code), { code }) });

  it("no 2025 only when the server said so: an HTTP 4xx, a JSON-RPC error", () => {
    expect(legacyVerdict(new StreamableHTTPError(404, "Not Found"))).toBe("refused");
    expect(legacyVerdict(new StreamableHTTPError(400, "Bad Request: unsupported protocol version"))).toBe(
      "refused",
    );
    expect(legacyVerdict(new McpError(ErrorCode.MethodNotFound, "initialize"))).toBe("refused");
    expect(legacyVerdict(new Error("connect failed", { cause: new McpError(-32602, "bad version") }))).toBe(
      "refused",
    );
  });

  it("unknown when it said nothing: a timeout, a reset, a closed connection, a 5xx — the check keeps what it knew", () => {
    expect(legacyVerdict(new DeadlineError("no 2025 answer within 5 s"))).toBe("unknown");
    expect(legacyVerdict(new McpError(ErrorCode.RequestTimeout, "Request timed out"))).toBe("unknown");
    expect(legacyVerdict(new McpError(ErrorCode.ConnectionClosed, "Connection closed"))).toBe("unknown");
    expect(legacyVerdict(fetchFailed("ECONNRESET"))).toBe("unknown");
    expect(legacyVerdict(new StreamableHTTPError(503, "Service Unavailable"))).toBe("unknown");
    expect(legacyVerdict(new StreamableHTTPError(429, "Too Many Requests"))).toBe("unknown");
    expect(legacyVerdict(new StreamableHTTPError(408, "Request Timeout"))).toBe("unknown");
    expect(legacyVerdict(new Error("socket hang up"))).toBe("unknown");
  });
});
