import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A running {@link startOtlpReceiver}. */
export interface OtlpReceiver {
  url: string;
  /** Each payload received, as sent (the exporter's JSON text). */
  payloads: string[];
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP receiver on 127.0.0.1 (what OTEL_EXPORTER_OTLP_ENDPOINT names): keeps each JSON payload
 * POSTed to `path` (`/v1/traces`, `/v1/metrics`) and hands it, parsed, to `onPayload`; answers 415 to
 * anything else (another path, another encoding).
 */
export async function startOtlpReceiver<T>(
  path: string,
  onPayload: (payload: T) => void = () => {},
): Promise<OtlpReceiver> {
  const payloads: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url !== path || req.headers["content-type"] !== "application/json")
      return void res.writeHead(415).end();
    const text = Buffer.concat(chunks).toString("utf8");
    payloads.push(text);
    onPayload(JSON.parse(text) as T);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    payloads,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
