/**
 * An upstream MCP server in the same process, for unit tests (`@mcpgw/upstream/linked-upstream`, never
 * imported by production code): an SDK `Server` on one end of `InMemoryTransport.createLinkedPair()`,
 * the probe's client session on the other — the real protocol, no sockets.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { connectSession, type SessionOpener, type UpstreamTarget } from "./session";

/** What the linked server answers to one `tools/list` (it may throw: the call fails with that error). */
export type ListToolsHandler = (cursor: string | undefined) => Promise<ListToolsResult> | ListToolsResult;

export interface LinkedUpstream {
  /** The session opener to hand a probe (`open`) or a worker (`openSession`). */
  open: SessionOpener;
  /** The target of every session opened, in order: the URL and (opened) headers HTTP would have used. */
  targets: UpstreamTarget[];
}

/** A linked upstream whose `tools/list` is `listTools`; each session gets a server of its own. */
export function linkedUpstream(listTools: ListToolsHandler): LinkedUpstream {
  const targets: UpstreamTarget[] = [];
  const open: SessionOpener = async (target, options) => {
    targets.push(target);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = new Server({ name: "linked-upstream", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, (request) => listTools(request.params?.cursor));
    await server.connect(serverSide);
    return connectSession(clientSide, options);
  };
  return { open, targets };
}
