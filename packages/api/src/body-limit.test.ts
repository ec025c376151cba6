import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { lazyBodyLimit } from "./body-limit";

/** An app that answers with the body's length, behind a 10-byte limit. */
function limited() {
  const app = new Hono();
  app.use(lazyBodyLimit({ maxSize: 10, onError: (c) => c.text("too large", 413) }));
  app.post("/", async (c) => c.text(String((await c.req.text()).length)));
  return app;
}

describe("lazyBodyLimit", () => {
  it("passes a body within the limit, refuses one past it by its Content-Length", async () => {
    const app = limited();

    expect(await (await app.request("/", { method: "POST", body: "0123456789" })).text()).toBe("10");
    expect((await app.request("/", { method: "POST", body: "0123456789x" })).status).toBe(413);
  });

  it("counts a chunked body as it streams", async () => {
    const app = limited();
    const chunked = (text: string) =>
      app.request("/", {
        method: "POST",
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        }),
        duplex: "half", // Node's fetch needs it for a stream body
      });

    expect(await (await chunked("short")).text()).toBe("5");
    expect((await chunked("far too long a body")).status).toBe(413);
  });
});
