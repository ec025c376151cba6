import {
  createLogger,
  type PlainServer,
  parseServerSpec,
  type ServerState,
  type StoredStatus,
} from "@mcpgw/core";
import { SessionPool, type UpstreamSession } from "@mcpgw/upstream";
import { describe, expect, it } from "vitest";
import type { DirectoryEntry } from "./directory";
import {
  announcesListChanges,
  keepsLegacySession,
  listenedServers,
  logsOutsideCalls,
  UpstreamListening,
} from "./mcp-listening";

const TOOLS_CHANGE = { tools: { listChanged: true } };

/** A directory entry of a server made from `spec`, in `state`, whose last probe reported `capabilities`. */
function entry(
  spec: Record<string, unknown>,
  { state = "connected", capabilities = TOOLS_CHANGE }: { state?: ServerState; capabilities?: object } = {},
): DirectoryEntry {
  const parsed = parseServerSpec(spec);
  const name = String(spec.name);
  const server = {
    ...parsed,
    id: `id-${name}`,
    version: 1,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    masked: {},
    sealIntact: true,
  } as unknown as PlainServer;
  return {
    server,
    status: { state, generation: 1 } as StoredStatus,
    tools: new Map(),
    profile: { protocolVersion: "2026-07-28", capabilities: { ...capabilities } },
  };
}

const http = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  url: "https://mcp.example.com/mcp",
  ...more,
});

const names = (entries: DirectoryEntry[]) => entries.map((listened) => listened.server.name);

describe("listenedServers", () => {
  it("picks connected, enabled, shared HTTP servers that announce list changes", () => {
    const picked = listenedServers([
      entry(http("plain")),
      entry(http("shared-oauth", { auth: { type: "oauth", mode: "shared" } })),
      entry(http("prompts-only"), { capabilities: { prompts: { listChanged: true } } }),
    ]);
    expect(names(picked)).toEqual(["plain", "prompts-only", "shared-oauth"]);
  });

  it("never picks a per_user server: no session is opened on nobody's behalf", () => {
    const perUser = entry(http("per-user", { auth: { type: "oauth", mode: "per_user" } }));
    expect(announcesListChanges(perUser)).toBe(true);
    expect(listenedServers([perUser])).toEqual([]);
  });

  it("skips stdio servers, shared or per_caller (their changes reach the runner)", () => {
    const stdio = (name: string, isolation: string) => entry({ name, command: "npx", isolation });
    expect(listenedServers([stdio("shared-child", "shared"), stdio("own-child", "per_caller")])).toEqual([]);
  });

  it("skips servers not connected, disabled, thread-scoped, or announcing no list changes", () => {
    const disabled = entry(http("disabled"));
    disabled.server.enabled = false;
    const threaded = entry(http("threaded"));
    (threaded.server as { scope?: string }).scope = "thread";
    const unprobed = entry(http("unprobed"));
    delete unprobed.profile;
    const picked = listenedServers([
      entry(http("failed"), { state: "failed" }),
      entry(http("connecting"), { state: "connecting" }),
      disabled,
      threaded,
      unprobed,
      entry(http("static"), { capabilities: { tools: {} } }),
      entry(http("says-maybe"), { capabilities: { tools: { listChanged: "yes" } } }),
    ]);
    expect(picked).toEqual([]);
  });

  it("picks a 2025 server that offers logging and relays its logs (its GET stream carries its session's lines), not a 2026 one", () => {
    const logging = { tools: {}, logging: {} };
    const relaying = { relaySessionLogs: true };
    const legacy = entry(http("legacy-logs", relaying), { capabilities: logging });
    (legacy.profile as { protocolVersion: string }).protocolVersion = "2025-11-25";
    const modern = entry(http("modern-logs", relaying), { capabilities: logging });
    expect([logsOutsideCalls(legacy), logsOutsideCalls(modern)]).toEqual([true, false]);
    const perUser = entry(http("per-user-logs", { ...relaying, auth: { type: "oauth", mode: "per_user" } }), {
      capabilities: logging,
    });
    (perUser.profile as { protocolVersion: string }).protocolVersion = "2025-11-25";
    expect(names(listenedServers([legacy, modern, perUser]))).toEqual(["legacy-logs"]);
  });

  it("keeps no session open for a server's logs unless its admin set relaySessionLogs", () => {
    const logging = { tools: {}, logging: {} };
    const silent = entry(http("unrelayed-logs"), { capabilities: logging });
    (silent.profile as { protocolVersion: string }).protocolVersion = "2025-11-25";
    expect(logsOutsideCalls(silent)).toBe(false);
    expect(names(listenedServers([silent]))).toEqual([]);
  });

  it("keeps at most `max`, by name", () => {
    const many = ["d", "b", "e", "a", "c"].map((name) => entry(http(name)));
    expect(names(listenedServers(many, 3))).toEqual(["a", "b", "c"]);
  });
});

describe("a dual-era server's 2025 session, while a 2025 client holds state there", () => {
  const legacy = { protocolVersion: "2025-11-25", capabilities: { resources: { subscribe: true } } };
  const dual = (name: string, more: Record<string, unknown> = {}) => {
    const made = entry(http(name, more), { capabilities: { tools: {} } });
    return { ...made, profile: { ...made.profile, legacy } } as DirectoryEntry;
  };

  it("is kept for a shared dual-era server some 2025 client holds a subscription or level on", () => {
    const holding = new Set(["dual", "per-user", "plain"]);

    expect(keepsLegacySession(dual("dual"), holding)).toBe(true);
    expect(keepsLegacySession(dual("idle"), holding)).toBe(false);
    expect(keepsLegacySession(entry(http("plain")), holding)).toBe(false);
    expect(keepsLegacySession(dual("per-user", { auth: { type: "oauth", mode: "per_user" } }), holding)).toBe(
      false,
    );
  });

  it("does not idle out while the watcher keeps it; an unheld one does", async () => {
    // Idle after 1 s (swept every 1 s), touched every 50 ms: a stall of most of a second is tolerated.
    const pool = new SessionPool(1_000);
    const closed = new Set<string>();
    const session = (key: string) =>
      ({ client: {}, close: async () => void closed.add(key) }) as unknown as UpstreamSession;
    const held = dual("held");
    const unheld = dual("unheld");
    for (const key of ["id-held#~legacy", "id-unheld#~legacy"])
      await pool.use(
        key,
        1,
        async () => session(key),
        async () => undefined,
      );
    const listening = new UpstreamListening({ pool, logger: createLogger({ level: "error" }) } as never);

    for (let tick = 0; tick < 50; tick++) {
      listening.keep([held, unheld], new Set(["held"]));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    expect([...closed]).toEqual(["id-unheld#~legacy"]);
    pool.close();
  });
});
