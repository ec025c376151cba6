import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { probeUpstream } from "./probe";
import { connectSession, type SessionOpener, type UpstreamTarget } from "./session";

type ListTools = (cursor: string | undefined) => Promise<{ tools: unknown[]; nextCursor?: string }>;

/** An SDK server on the far end of a linked in-memory pair, answering tools/list with `list`. */
function linkedUpstream(list: ListTools): { open: SessionOpener; targets: UpstreamTarget[] } {
  const targets: UpstreamTarget[] = [];
  const open: SessionOpener = async (target, options) => {
    targets.push(target);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = new Server({ name: "linked", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const page = await list(request.params?.cursor);
      return page as { tools: [] };
    });
    await server.connect(serverSide);
    return connectSession(clientSide, options);
  };
  return { open, targets };
}

const target: UpstreamTarget = {
  url: "https://upstream.test/mcp",
  headers: { authorization: "Bearer sk-live-0123456789abcdef" },
};
const tool = (name: string) => ({ name, inputSchema: { type: "object" } });

describe("probeUpstream over a linked in-memory session", () => {
  it("lists every page of tools and times the connection", async () => {
    const { open, targets } = linkedUpstream(async (cursor) =>
      cursor ? { tools: [tool("b")] } : { tools: [tool("a")], nextCursor: "page-2" },
    );

    const result = await probeUpstream(target, { fetch, open });

    expect(result).toMatchObject({ ok: true, toolCount: 2, tools: [tool("a"), tool("b")] });
    expect(targets).toEqual([target]);
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

  it("refuses a cursor the upstream already returned (a loop)", async () => {
    const { open } = linkedUpstream(async () => ({ tools: [tool("a")], nextCursor: "same" }));

    const result = await probeUpstream(target, { fetch, open });

    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("already returned") });
  });
});
