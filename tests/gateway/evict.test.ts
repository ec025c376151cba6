import { describe, expect, it } from "vitest";
import { startUpstream } from "../fixtures/mcp-upstream";
import { startStack, waitFor } from "../support/stack";

describe("warm sessions follow the server's config", () => {
  it("disabling or deleting a server closes its warm upstream session within the staleness bound", async () => {
    const upstream = await startUpstream({ name: "evict" });
    const stack = await startStack();
    try {
      const created = await stack.call("POST", "/v1/servers", { name: "evict", url: upstream.url });
      await waitFor(
        async () => (await stack.call("GET", `/v1/servers/${created.body.id}`)).body.status.state,
        (state) => state === "connected",
      );
      await waitFor(
        async () =>
          (await stack.call("POST", "/v1/tools/evict__echo/call", { arguments: { text: "x" } })).status,
        (status) => status === 200,
      );
      expect(upstream.sessions).toBeGreaterThanOrEqual(1);
      const sessionsWhileWarm = upstream.sessions;

      await stack.call("PATCH", `/v1/servers/${created.body.id}`, { enabled: false });

      // Any data-plane read refreshes the directory; the pool then lets the disabled server's session go.
      await waitFor(
        async () => {
          await stack.call("GET", "/v1/tools");
          return upstream.sessions;
        },
        (sessions) => sessions < sessionsWhileWarm,
        { timeoutMs: 5_000 },
      );
    } finally {
      await stack.stop();
      await upstream.close();
    }
  });
});
