/**
 * The gateway's Lambda entry driven as Lambda's Node.js runtime drives a response-streaming handler
 * (its `awslambda` global stood in by support/lambda-runtime.mjs): a Function URL event in; out, the
 * status and headers prelude first, then the body write by write, each as the app produces it.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamingHandler } from "../../packages/api/src/lambda/stream";
import { installLambdaRuntime, invokeStreaming, isStreamingHandler } from "./support/lambda-runtime.mjs";
import { urlEvent } from "./support/url-event";

const ADMIN_TOKEN = "streaming-admin-token-0c4e";

/** The context the runtime passes; it waits for an empty event loop unless the handler says not to. */
const lambdaContext = () => ({
  functionName: "mcp-gateway-test-gateway",
  awsRequestId: "00000000-0000-4000-8000-000000000000",
  getRemainingTimeInMillis: () => 900_000,
  callbackWaitsForEmptyEventLoop: true,
});

let uninstall: () => void;
let restoreEnv: () => void;

beforeAll(() => {
  uninstall = installLambdaRuntime();
  const previous = process.env.ADMIN_TOKEN;
  process.env.ADMIN_TOKEN = ADMIN_TOKEN;
  restoreEnv = () => {
    if (previous === undefined) delete process.env.ADMIN_TOKEN;
    else process.env.ADMIN_TOKEN = previous;
  };
});

afterAll(() => {
  restoreEnv();
  uninstall();
});

describe("the gateway function's handler (packages/api/src/lambda/gateway.ts)", () => {
  it("is a streaming handler that answers GET /healthz: prelude (200, JSON), then the body", async () => {
    // Prepare: the entry configures itself from the environment when imported, as on Lambda
    const { handler } = await import("../../packages/api/src/lambda/gateway");
    const context = lambdaContext();

    // Act
    const response = await invokeStreaming(handler, urlEvent("GET", "/healthz"), context);

    // Assess
    expect(isStreamingHandler(handler)).toBe(true);
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(response.body)).toEqual({ ok: true });
    expect(context.callbackWaitsForEmptyEventLoop, "warm sessions must not hold the invocation").toBe(false);
  });

  it("answers a refused REST call with its status, problem+json and challenge in the prelude", async () => {
    // Prepare
    const { handler } = await import("../../packages/api/src/lambda/gateway");

    // Act
    const response = await invokeStreaming(handler, urlEvent("GET", "/v1/tools"), lambdaContext());

    // Assess
    expect(response.statusCode).toBe(401);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(response.headers["www-authenticate"]).toBe('Bearer realm="mcp-gateway"');
    expect(JSON.parse(response.body)).toMatchObject({ status: 401 });
  });
});

describe("streamingHandler", () => {
  it("sends an SSE response's status and headers first, then each event before the next is produced", async () => {
    // Prepare: a route that writes one event, then the next only once the first has reached the
    // response stream (or after 2 s: a buffering adapter fails the order below rather than hanging)
    const order: string[] = [];
    let firstArrived: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const app = new Hono().post("/mcp", (c) =>
      streamSSE(c, async (sse) => {
        const request = await c.req.json<{ id: number }>();
        await sse.writeSSE({ event: "message", data: JSON.stringify({ progress: 1, of: request.id }) });
        await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, 2_000))]);
        order.push("second produced");
        await sse.writeSSE({ event: "message", data: JSON.stringify({ result: "done" }) });
      }),
    );
    const handler = streamingHandler(app);
    const event = urlEvent("POST", "/mcp", {
      body: { id: 7 },
      accept: "application/json, text/event-stream",
    });

    // Act
    const response = await invokeStreaming(handler, event, lambdaContext(), {
      onBody: (text) => {
        if (text.includes('"progress":1')) {
          order.push("first received");
          firstArrived();
        }
        if (text.includes('"result":"done"')) order.push("second received");
      },
    });

    // Assess
    expect(order).toEqual(["first received", "second produced", "second received"]);
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(response.headers["cache-control"]).toBe("no-cache");
    expect(response.body).toBe(
      'event: message\ndata: {"progress":1,"of":7}\n\nevent: message\ndata: {"result":"done"}\n\n',
    );
    const events = response.bodyChunks.filter((chunk) => chunk.startsWith("event:"));
    expect(events).toHaveLength(2);
  });

  it("passes a base64 request body and query string through, and returns cookies in the prelude", async () => {
    // Prepare
    const app = new Hono().put("/echo", async (c) => {
      c.header("set-cookie", "a=1");
      c.header("set-cookie", "b=2", { append: true });
      return c.json({ body: await c.req.text(), q: c.req.query("q") }, 201);
    });
    const event = {
      ...urlEvent("PUT", "/echo?q=x%20y"),
      body: Buffer.from("binary-ish ✓").toString("base64"),
      isBase64Encoded: true,
    };

    // Act
    const response = await invokeStreaming(streamingHandler(app), event, lambdaContext());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body)).toEqual({ body: "binary-ish ✓", q: "x y" });
    expect(response.cookies).toEqual(["a=1", "b=2"]);
  });
});
