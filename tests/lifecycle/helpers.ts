import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo, Server as NetServer } from "node:net";
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

export { parkedPort } from "../../scripts/lib/processes";
export {
  createServer,
  logLines,
  reaches,
  type StatusView,
  settled,
  statusReader,
  uniqueName,
} from "../support/servers";

/** An HTTP server on 127.0.0.1 that answers every request with a 302 to `location`. */
export interface Redirector {
  url: string;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startRedirector(location: string): Promise<Redirector> {
  let requests = 0;
  const server: Server = createHttpServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(302, { location }).end();
  });
  const { url } = await listenLocal(server);
  return {
    url,
    get requests() {
      return requests;
    },
    close: () => closeHttp(server),
  };
}

/** Starts `server` on a free port of 127.0.0.1; answers the port and the MCP URL there. */
export async function listenLocal(server: NetServer): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}/mcp` };
}

/** Closes an HTTP server and every connection it still holds. */
export function closeHttp(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Receives (and deletes) every message currently visible on a queue, until one empty long poll. */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  waitSeconds = 1,
): Promise<Array<{ body: string; attributes: Record<string, string> }>> {
  const all: Array<{ body: string; attributes: Record<string, string> }> = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return all;
    for (const message of Messages)
      all.push({
        body: message.Body ?? "",
        attributes: (message.Attributes ?? {}) as Record<string, string>,
      });
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}
