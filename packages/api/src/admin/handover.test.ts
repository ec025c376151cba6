import { createMemoryStore, type MemoryStore } from "@mcpgw/aws/memory";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createApp } from "../app";

const ADMIN_TOKEN = "unit-admin-token-handover";

/** The app over a memory store, and an admin request to it. */
function appOver(store: MemoryStore) {
  const app = createApp({
    store,
    logger: createLogger({ level: "error", sink: () => {} }),
    adminToken: ADMIN_TOKEN,
    allowPrivateUpstreams: false,
  });
  return async (method: string, path: string, body?: unknown) => {
    const response = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

/**
 * Makes the next status read return the status as it was, then settles generation 1 as connected: the
 * worker's probe landing between a change's read of the status and its write.
 */
function settleAfterNextRead(store: MemoryStore, serverId: string): void {
  const read = store.statuses.get.bind(store.statuses);
  store.statuses.get = async (id) => {
    const status = await read(id);
    if (id !== serverId) return status;
    store.statuses.get = read;
    const at = new Date().toISOString();
    expect(
      await store.statuses.recordAttempt(serverId, 1, { ok: true, at, latencyMs: 1, toolCount: 1 }),
    ).toBe(true);
    return status;
  };
}

describe("a change reaching the upstream while a probe settles", () => {
  for (const change of ["edit", "reconnect"] as const) {
    it(`${change}: reads the status again and hands the now connected generation over (it serves on)`, async () => {
      const store = createMemoryStore();
      const request = appOver(store);
      const created = await request("POST", "/v1/servers", {
        name: `settling-${change}`,
        url: "https://example.com/mcp",
      });
      expect(created.status).toBe(201);
      const id = String(created.body.id);

      settleAfterNextRead(store, id);
      const answer =
        change === "edit"
          ? await request("PATCH", `/v1/servers/${id}`, { url: "https://example.com/v2" })
          : await request("POST", `/v1/servers/${id}/reconnect`);
      expect(answer.status).toBe(change === "edit" ? 200 : 202);

      // Decided on the stale read (connecting, nothing serving), nothing would serve until generation 2
      // connects: calls refused as "connecting" though the server was connected.
      expect(await store.statuses.get(id)).toMatchObject({
        state: "connecting",
        generation: 2,
        servingGeneration: 1,
      });
      expect((await store.servers.getServing(id))?.generation).toBe(1);
    });
  }
});
