/** A Lambda Function URL event (payload format 2.0, the shape API Gateway HTTP APIs send too). */
import { randomUUID } from "node:crypto";

export function urlEvent(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; accept?: string } = {},
) {
  const [rawPath = path, rawQueryString = ""] = path.split("?");
  const headers: Record<string, string> = {
    host: "abcdefghij.lambda-url.us-east-1.on.aws",
    "x-forwarded-proto": "https",
    "user-agent": "deploy-tests",
    accept: options.accept ?? "application/json",
  };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: "anonymous",
      apiId: "abcdefghij",
      domainName: headers.host,
      domainPrefix: "abcdefghij",
      http: {
        method,
        path: rawPath,
        protocol: "HTTP/1.1",
        sourceIp: "203.0.113.7",
        userAgent: "deploy-tests",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    isBase64Encoded: false,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  };
}
