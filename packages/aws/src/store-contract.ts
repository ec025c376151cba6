/**
 * What every {@link Store} must do where behaviour depends on it, as one suite run against each
 * implementation: the in-memory store beside it (unit tier), the AWS one under tests/aws (emulator).
 */
import {
  type AttemptOutcome,
  type AuditEvent,
  auditEventId,
  decideChange,
  parseServerSpec,
  profileDigest,
  reconcileTools,
  type ServerProfile,
  type ServerRecord,
  visibleNextAttempt,
} from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { auditEntry } from "./audit";
import { hashApiKey } from "./keys";
import {
  type AuthorizationCodeRecord,
  CLIENT_IDLE_SECONDS,
  CLIENT_UNUSED_SECONDS,
  nowSeconds,
  type RefreshGrant,
} from "./oauth";
import type { ServerPage } from "./servers";
import { CatalogMovedError } from "./statuses";
import type { Store } from "./store";
import { ADMIN_OWNER } from "./threads";

const ok = (toolCount = 1): AttemptOutcome => ({
  ok: true,
  at: new Date().toISOString(),
  latencyMs: 7,
  toolCount,
});
const failed = (error = "refused"): AttemptOutcome => ({
  ok: false,
  at: new Date().toISOString(),
  reason: "unreachable",
  error,
});
const tools = [{ name: "echo", inputSchema: { type: "object" } }];
const profile: ServerProfile = {
  protocolVersion: "2026-07-28",
  capabilities: { tools: { listChanged: true }, logging: {} },
  serverInfo: { name: "echo-server", version: "1.0.0" },
  instructions: "Echo anything.",
  discover: { supportedVersions: ["2026-07-28", "2025-11-25"] },
};

/** The status is `settled`, and nothing of an older generation serves: no serving fields, no kept config. */
async function servingEnded(store: Store, id: string, settled: { state: string; generation: number }) {
  const status = await store.statuses.get(id);
  expect(status).toMatchObject(settled);
  expect([status?.servingGeneration, status?.servingSince]).toEqual([undefined, undefined]);
  expect(await store.servers.getServing(id)).toBeUndefined();
}

/** A tool call's audit event that ended at `at`: key `key-1` (`ci`) called `files` / `read`, ok. */
export function sampleAuditEvent(at: number, fields: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: auditEventId(at),
    at: new Date(at).toISOString(),
    type: "call",
    principal: { kind: "key", keyId: "key-1", keyName: "ci" },
    plane: "rest",
    serverId: "srv-1",
    serverName: "files",
    tool: "read",
    outcome: "ok",
    durationMs: 3,
    argumentKeys: ["path"],
    ...fields,
  };
}

/** Registers the contract's tests for the store `open` gives (a fresh one per test). */
export function describeStoreContract(name: string, open: () => Promise<Store>): void {
  let counter = 0;
  const unique = (base: string) => `${base}-${Date.now().toString(36)}-${counter++}`;
  const http = (store: Store, serverName = unique("srv"), headers: Record<string, string> = {}) =>
    store.servers.create(parseServerSpec({ name: serverName, url: "https://example.com/mcp", headers }));

  describe(`${name} store: server list pages`, () => {
    /** Every page of the list, `limit` at a time. */
    async function allPages(store: Store, limit: number) {
      const pages: ServerPage[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.servers.listPage(limit, cursor);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor && pages.length < 1_000);
      return pages;
    }

    it("pages through every server by name, each once with its status; the last page has no cursor", async () => {
      const store = await open();
      const prefix = unique("pg");
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await http(store, `${prefix}-${i}`));
      await store.statuses.recordAttempt(created[2]?.id ?? "", 1, ok(3), { tools, profile });

      const pages = await allPages(store, 3);

      const listed = pages.flatMap((page) => page.servers);
      const names = listed.map((entry) => entry.server.name);
      expect(pages.every((page) => page.servers.length <= 3)).toBe(true);
      expect(pages.at(-1)?.nextCursor).toBeUndefined();
      expect(names).toEqual([...new Set(names)].sort());
      const ours = listed.filter((entry) => entry.server.name.startsWith(`${prefix}-`));
      expect(ours.map((entry) => entry.server.name)).toEqual(created.map((server) => server.name));
      expect(ours.map((entry) => entry.status?.state)).toEqual([
        ...["connecting", "connecting", "connected"],
        ...["connecting", "connecting", "connecting", "connecting"],
      ]);
      expect(ours[2]?.status).toMatchObject({ toolCount: 3, generation: 1, protocolVersion: "2026-07-28" });
      expect(listed.map((entry) => entry.server.id)).toEqual(
        (await store.servers.listAll()).map((entry) => entry.server.id),
      );
    });

    it("a renamed server moves in the list with its status", async () => {
      const store = await open();
      const server = await http(store, unique("zz-before"));
      const renamed = unique("aa-after");

      await store.servers.update(server, { ...specOf(server), name: renamed });

      const listed = (await allPages(store, 2)).flatMap((page) => page.servers);
      expect(listed.filter((entry) => entry.server.id === server.id)).toMatchObject([
        { server: { name: renamed }, status: { state: "connecting", generation: 2 } },
      ]);
    });

    it("refuses a cursor no page returned as request.invalid", async () => {
      const store = await open();
      for (const cursor of ["", "nope", "e30", Buffer.from('["a#STATUS","x"]').toString("base64url")]) {
        await expect(store.servers.listPage(10, cursor)).rejects.toMatchObject({ code: "request.invalid" });
      }
    });
  });

  describe(`${name} store: servers`, () => {
    it("creates a server with generation 1 and claims its name", async () => {
      const store = await open();
      const server = await http(store);

      expect(await store.statuses.get(server.id)).toMatchObject({ state: "connecting", generation: 1 });
      await expect(http(store, server.name)).rejects.toMatchObject({ code: "server.name_taken" });
      expect((await store.servers.resolvePlain(server.name))?.id).toBe(server.id);
      expect((await store.servers.resolvePlain(server.id.toUpperCase()))?.id).toBe(server.id);
    });

    it("an update needs the version read, supersedes the status, and moves the name claim", async () => {
      const store = await open();
      const server = await http(store);
      const renamed = unique("renamed");

      const updated = await store.servers.update(server, {
        ...specOf(server),
        name: renamed,
        enabled: false,
      });

      expect(updated.version).toBe(2);
      expect(await store.statuses.get(server.id)).toMatchObject({ state: "disabled", generation: 2 });
      expect(await store.servers.getByName(server.name)).toBeUndefined();
      expect((await store.servers.getByName(renamed))?.id).toBe(server.id);
      await expect(store.servers.update(server, specOf(server))).rejects.toMatchObject({
        code: "server.version_conflict",
      });
    });

    it("an update that keeps the status leaves generation and state, answers what it wrote, and lists it renamed", async () => {
      const store = await open();
      const server = await http(store);
      const renamed = unique("kept");

      const updated = await store.servers.update(
        server,
        { ...specOf(server), name: renamed, timeoutSeconds: 77 },
        { status: "keep" },
      );

      expect(updated.written).toMatchObject({ id: server.id, name: renamed, timeoutSeconds: 77, version: 2 });
      expect(updated.written).toEqual(await store.servers.getPlain(server.id));
      expect(await store.statuses.get(server.id)).toMatchObject({ state: "connecting", generation: 1 });
      expect((await store.servers.getByName(renamed))?.id).toBe(server.id);
      const listed = (await store.servers.listAll()).find((entry) => entry.server.id === server.id);
      expect(listed).toMatchObject({ server: { name: renamed }, status: { generation: 1 } });
      expect(listed?.statusApart).toBeUndefined();
    });

    it("a change superseding a connected generation keeps its config to serve on, only from the status read", async () => {
      const store = await open();
      const server = await http(store, unique("handover"), { "X-Team": "blue" });
      expect(
        await store.statuses.recordAttempt(server.id, 1, {
          ok: true,
          at: new Date().toISOString(),
          latencyMs: 1,
          toolCount: 0,
        }),
      ).toBe(true);

      // A handover decided on a status that is no longer so: read again.
      await expect(
        store.servers.update(server, parseServerSpec({ ...specOf(server), url: "https://example.com/v2" }), {
          serving: { state: "connected", generation: 7, servesOn: true },
        }),
      ).rejects.toMatchObject({ code: "server.version_conflict" });
      const updated = await store.servers.update(
        server,
        parseServerSpec({ ...specOf(server), url: "https://example.com/v2", headers: { "X-Team": "red" } }),
        { serving: { state: "connected", generation: 1, servesOn: true } },
      );

      expect(await store.statuses.get(server.id)).toMatchObject({
        state: "connecting",
        generation: 2,
        servingGeneration: 1,
      });
      expect(await store.servers.getServing(server.id)).toMatchObject({
        generation: 1,
        version: 1,
        url: "https://example.com/mcp",
        headers: { "X-Team": "blue" },
      });
      // A reconnect of a server with nothing serving (here: disabled first) hands nothing over.
      const disabled = await store.servers.update(updated, { ...specOf(updated), enabled: false });
      expect((await store.statuses.get(server.id))?.servingGeneration).toBeUndefined();
      expect(disabled.version).toBe(3);
      // Nothing serves on after a disable: the kept config (its sealed header) is gone with it.
      expect(await store.servers.getServing(server.id)).toBeUndefined();
    });

    it("a change that hands nothing over holds only while the status is as read: a probe settling meanwhile makes it read again", async () => {
      const store = await open();
      const server = await http(store, unique("no-handover"), { "X-Team": "blue" });
      // Read while connecting with nothing serving; then the probe connects generation 1.
      const asRead = { state: "connecting", generation: 1, servesOn: false } as const;
      expect(await store.statuses.recordAttempt(server.id, 1, ok())).toBe(true);

      const spec = parseServerSpec({ ...specOf(server), url: "https://example.com/v2" });
      await expect(store.servers.update(server, spec, { serving: asRead })).rejects.toMatchObject({
        code: "server.version_conflict",
      });
      await expect(store.servers.reconnect(server.id, server.version, asRead)).rejects.toMatchObject({
        code: "server.version_conflict",
      });
      expect(await store.statuses.get(server.id)).toMatchObject({ state: "connected", generation: 1 });
      expect((await store.servers.getPlain(server.id))?.version).toBe(1);

      // As read now: nothing serving on, by the caller's choice, still needs the status unchanged.
      const failedRead = { state: "connected", generation: 1, servesOn: false } as const;
      await store.servers.update(server, spec, { serving: failedRead });
      const status = await store.statuses.get(server.id);
      expect(status).toMatchObject({ state: "connecting", generation: 2 });
      expect(status?.servingGeneration).toBeUndefined();
      expect(await store.servers.getServing(server.id)).toBeUndefined();
    });

    it("the attempt that settles a new generation ends the older one's serving: its fields and kept config go", async () => {
      const store = await open();
      const server = await http(store, unique("settle"), { "X-Team": "blue" });
      expect(await store.statuses.recordAttempt(server.id, 1, ok())).toBe(true);
      const updated = await store.servers.update(
        server,
        parseServerSpec({ ...specOf(server), url: "https://example.com/v2" }),
        { serving: { state: "connected", generation: 1, servesOn: true } },
      );
      // A stale attempt settles nothing.
      expect(await store.statuses.recordAttempt(server.id, 1, failed())).toBe(false);
      expect((await store.servers.getServing(server.id))?.generation).toBe(1);

      expect(await store.statuses.recordAttempt(server.id, 2, ok(), undefined, { endsServing: true })).toBe(
        true,
      );
      await servingEnded(store, server.id, { state: "connected", generation: 2 });

      // A failure settles too.
      await store.servers.reconnect(server.id, updated.version, {
        state: "connected",
        generation: 2,
        servesOn: true,
      });
      expect((await store.servers.getServing(server.id))?.generation).toBe(2);
      expect(
        await store.statuses.recordAttempt(server.id, 3, failed(), undefined, { endsServing: true }),
      ).toBe(true);
      await servingEnded(store, server.id, { state: "failed", generation: 3 });
    });

    it("refuses a rename onto a taken name and changes nothing", async () => {
      const store = await open();
      const [a, b] = [await http(store), await http(store)];

      await expect(store.servers.update(a, { ...specOf(a), name: b.name })).rejects.toMatchObject({
        code: "server.name_taken",
      });

      expect((await store.servers.getPlain(a.id))?.version).toBe(1);
      expect((await store.servers.getByName(b.name))?.id).toBe(b.id);
      expect((await store.statuses.get(a.id))?.generation).toBe(1);
    });

    it("reconnects only an enabled server still at the version read", async () => {
      const store = await open();
      const server = await http(store);

      await store.servers.reconnect(server.id, 1);
      await expect(store.servers.reconnect(server.id, 7)).rejects.toMatchObject({
        code: "server.version_conflict",
      });
      const disabled = await store.servers.update(server, { ...specOf(server), enabled: false });
      await expect(store.servers.reconnect(server.id, disabled.version)).rejects.toMatchObject({
        code: "server.version_conflict",
      });

      expect(await store.statuses.get(server.id)).toMatchObject({ state: "disabled", generation: 3 });
    });

    it("stores secrets sealed, shows masks without opening them, and keeps them sealed on request", async () => {
      const store = await open();
      const server = await http(store, undefined, { Authorization: "Bearer sk-live-1", "X-Key": "abc" });

      const plain = await store.servers.getPlain(server.id);
      expect(plain?.masked).toEqual({ Authorization: "Bearer [SECRET]", "X-Key": "[SECRET]" });
      expect(plain).not.toHaveProperty("headers");
      expect((await store.servers.listPlain()).find((s) => s.id === server.id)?.sealIntact).toBe(true);
      const opened = await store.servers.get(server.id);
      expect(opened?.transport === "http" && opened.headers).toEqual({
        Authorization: "Bearer sk-live-1",
        "X-Key": "abc",
      });

      const masked = { ...specOf(server), headers: plain?.masked ?? {}, enabled: false };
      await store.servers.update(server, masked, { keepSealed: true });
      const kept = await store.servers.get(server.id);
      expect(kept?.transport === "http" && kept.headers).toEqual({
        Authorization: "Bearer sk-live-1",
        "X-Key": "abc",
      });
    });

    it("seals auth.clientSecret apart: the config shows its mask, an edit keeps, replaces or drops it", async () => {
      const store = await open();
      const auth = { type: "client_credentials", clientId: "gw", clientSecret: "cl13nt-s3cret" };
      const server = await store.servers.create(
        parseServerSpec({ name: unique("m2m"), url: "https://example.com/mcp", auth }),
      );
      const secretOf = async () => {
        const record = await store.servers.get(server.id);
        return record?.transport === "http" ? record.auth?.clientSecret : undefined;
      };

      const plain = await store.servers.getPlain(server.id);
      expect(plain?.transport === "http" && plain.auth).toEqual({ ...auth, clientSecret: "[SECRET]" });
      expect(plain?.sealIntact).toBe(true);
      expect(await secretOf()).toBe("cl13nt-s3cret");

      // Kept sealed as it is (the mask in the spec), then sealed anew with the headers, then replaced.
      const spec = (secret?: string) =>
        parseServerSpec({
          name: server.name,
          url: "https://example.com/mcp",
          auth: { ...auth, ...(secret === undefined ? {} : { clientSecret: secret }) },
        });
      const masked = {
        ...spec("x"),
        auth: plain?.transport === "http" ? plain.auth : undefined,
      } as typeof server;
      const v2 = await store.servers.update(server, masked, { keepSealed: true });
      expect(await secretOf()).toBe("cl13nt-s3cret");
      const v3 = await store.servers.update(v2, spec("n3w"), { keepSealed: true });
      expect(await secretOf()).toBe("n3w");
      const v4 = await store.servers.update(v3, spec("again"));
      expect(await secretOf()).toBe("again");
      await store.servers.update(v4, parseServerSpec({ name: server.name, url: "https://example.com/mcp" }));
      const dropped = await store.servers.get(server.id);
      expect(dropped?.transport === "http" && dropped.auth).toBeUndefined();
    });

    it("remove deletes the server, its name, status, catalogue and toggles", async () => {
      const store = await open();
      const server = await http(store);
      await store.statuses.recordAttempt(server.id, 1, ok(), { tools });
      const chat = unique("chat");
      await store.chats.set(chat, server.id, false);

      expect(await store.servers.remove(server.id)).toBe(true);

      expect(await store.servers.remove(server.id)).toBe(false);
      expect(await store.servers.get(server.id)).toBeUndefined();
      expect(await store.statuses.get(server.id)).toBeUndefined();
      expect(await store.statuses.getCatalog(server.id)).toBeUndefined();
      expect(await store.chats.offServers(chat)).toEqual(new Set());
      expect((await http(store, server.name)).id).not.toBe(server.id);
    });

    it("imports all or nothing", async () => {
      const store = await open();
      const existing = await http(store);
      const taken = await http(store);
      const fresh = unique("fresh");

      await expect(
        store.servers.importAll(
          [parseServerSpec({ name: fresh, url: "https://example.com/a" })],
          [{ existing, spec: { ...specOf(existing), name: taken.name } }],
        ),
      ).rejects.toMatchObject({ code: "server.version_conflict" });
      expect(await store.servers.getByName(fresh)).toBeUndefined();

      const imported = await store.servers.importAll(
        [parseServerSpec({ name: fresh, url: "https://example.com/a" })],
        [{ existing, spec: { ...specOf(existing), enabled: false } }],
      );
      expect(imported.map((s) => s.name)).toEqual([existing.name, fresh].sort());
      expect(await store.statuses.get(existing.id)).toMatchObject({ state: "disabled", generation: 2 });
    });
  });

  describe(`${name} store: the generation fence`, () => {
    it("writes an attempt of the current generation with its catalogue", async () => {
      const store = await open();
      const server = await http(store);

      expect(await store.statuses.recordAttempt(server.id, 1, ok(), { tools })).toBe(true);

      expect(await store.statuses.get(server.id)).toMatchObject({ state: "connected", toolCount: 1 });
      expect((await store.statuses.getCatalog(server.id))?.tools).toEqual(tools);
      expect((await store.statuses.listCatalogs()).map((c) => c.serverId)).toContain(server.id);
    });

    it("drops a stale generation, a disabled server and a deleted one", async () => {
      const store = await open();
      const server = await http(store);
      await store.statuses.bump(server.id, "connecting");

      expect(await store.statuses.recordAttempt(server.id, 1, failed())).toBe(false);
      await store.statuses.bump(server.id, "disabled");
      expect(await store.statuses.recordAttempt(server.id, 3, ok(), { tools })).toBe(false);
      expect(await store.statuses.get(server.id)).toMatchObject({ state: "disabled", generation: 3 });
      await store.servers.remove(server.id);
      expect(await store.statuses.recordAttempt(server.id, 3, failed())).toBe(false);
      expect(await store.statuses.get(server.id)).toBeUndefined();
    });

    it("records a job's outcome once: a redelivered job changes nothing", async () => {
      const store = await open();
      const server = await http(store);

      expect(
        await store.statuses.recordAttempt(server.id, 1, failed("first"), undefined, { jobId: "m-1" }),
      ).toBe(true);
      expect(await store.statuses.recordAttempt(server.id, 1, ok(), { tools }, { jobId: "m-1" })).toBe(false);

      expect(await store.statuses.get(server.id)).toMatchObject({ state: "failed", lastError: "first" });
      expect(await store.statuses.recordAttempt(server.id, 1, ok(), { tools }, { jobId: "m-2" })).toBe(true);
    });

    it("holds one attempt per generation: a second claim is refused until the record ends it or it lapses", async () => {
      const store = await open();
      const server = await http(store);
      const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

      expect(await store.statuses.claimAttempt(server.id, 1, inMs(20_000))).toBe(true);
      expect(await store.statuses.claimAttempt(server.id, 1, inMs(20_000))).toBe(false);
      expect(await store.statuses.claimAttempt(server.id, 2, inMs(20_000))).toBe(false); // not its generation
      expect(await store.statuses.recordAttempt(server.id, 1, failed(), undefined, { endsClaim: true })).toBe(
        true,
      );
      expect(await store.statuses.claimAttempt(server.id, 1, inMs(-1))).toBe(true); // lapsed at once
      expect(await store.statuses.claimAttempt(server.id, 1, inMs(20_000))).toBe(true);
      await store.statuses.bump(server.id, "connecting");
      expect(await store.statuses.claimAttempt(server.id, 2, inMs(20_000))).toBe(true); // a new generation's own
      expect(await store.statuses.claimAttempt("no-such-server", 1, inMs(20_000))).toBe(false);
    });

    it("keeps a failure's backoff (count, nextAttemptAt) with it; a success shows none", async () => {
      const store = await open();
      const server = await http(store);
      const nextAttemptAt = new Date(Date.now() + 30_000).toISOString();

      await store.statuses.recordAttempt(server.id, 1, failed(), undefined, {
        backoff: { failureCount: 2, nextAttemptAt },
      });
      const failing = await store.statuses.get(server.id);
      await store.statuses.recordAttempt(server.id, 1, ok(), { tools });

      expect(failing).toMatchObject({ state: "failed", failureCount: 2, nextAttemptAt });
      const connected = await store.statuses.get(server.id);
      expect(connected?.state).toBe("connected");
      expect(connected && visibleNextAttempt(connected)).toBeNull();
    });

    it("writes the profile with the catalogue and its revision in the status; a failure keeps both", async () => {
      const store = await open();
      const server = await http(store);
      expect(await store.statuses.get(server.id)).not.toHaveProperty("protocolVersion");

      expect(await store.statuses.recordAttempt(server.id, 1, ok(), { tools, profile })).toBe(true);
      expect(await store.statuses.recordAttempt(server.id, 1, failed())).toBe(true);

      expect(await store.statuses.get(server.id)).toMatchObject({
        state: "failed",
        protocolVersion: "2026-07-28",
      });
      expect((await store.statuses.list()).get(server.id)?.protocolVersion).toBe("2026-07-28");
      expect(await store.statuses.getCatalog(server.id)).toMatchObject({ tools, profile });
      expect((await store.statuses.listCatalogs()).find((c) => c.serverId === server.id)?.profile).toEqual(
        profile,
      );
    });

    it("a success records when it listed the tools and the profile's digest; a failure keeps both", async () => {
      const store = await open();
      const server = await http(store);
      const success = { ...ok(), at: "2026-01-01T00:00:01.000Z" };

      await store.statuses.recordAttempt(server.id, 1, success, { tools, profile });
      await store.statuses.recordAttempt(server.id, 1, failed());

      expect(await store.statuses.get(server.id)).toMatchObject({
        toolsListedAt: success.at,
        profileDigest: profileDigest(profile),
      });
    });

    it("rewrites the catalogue only when its tools or its profile changed", async () => {
      const store = await open();
      const server = await http(store);
      const at = (second: number) => ({ ...ok(), at: `2026-01-01T00:00:0${second}.000Z` });

      await store.statuses.recordAttempt(server.id, 1, at(1), { tools, profile });
      await store.statuses.recordAttempt(server.id, 1, at(2), { tools, profile });
      const unchanged = await store.statuses.getCatalog(server.id);
      const changed = { ...profile, protocolVersion: "2025-11-25", instructions: "Echo, politely." };
      await store.statuses.recordAttempt(server.id, 1, at(3), { tools, profile: changed });
      const rewritten = await store.statuses.getCatalog(server.id);
      await store.statuses.recordAttempt(server.id, 1, at(4), { tools });

      expect(unchanged?.updatedAt).toBe(at(1).at);
      expect(rewritten).toMatchObject({ updatedAt: at(3).at, profile: changed });
      expect(await store.statuses.get(server.id)).toMatchObject({ protocolVersion: "2025-11-25" });
      const without = await store.statuses.getCatalog(server.id);
      expect(without?.updatedAt).toBe(at(4).at);
      expect(without).not.toHaveProperty("profile");
    });

    it("keeps a catalogue's pins with it, and rewrites it only over the one a decision was made on", async () => {
      const store = await open();
      const server = await http(store);
      const changed = { name: "echo", inputSchema: { type: "object" }, description: "changed" };
      const pinned = reconcileTools({ tools }, [changed], "approve", ok().at, () => []);

      expect(await store.statuses.recordAttempt(server.id, 1, ok(), pinned, { catalogHash: null })).toBe(
        true,
      );
      const stored = await store.statuses.getCatalog(server.id);
      expect(stored).toMatchObject({ tools, pins: { drifted: ["echo"], changes: [{ tool: "echo" }] } });
      expect(await store.statuses.get(server.id)).toMatchObject({ pendingChanges: 1 });
      // A write that names another catalogue than the stored one is refused, whichever way it comes.
      await expect(
        store.statuses.recordAttempt(server.id, 1, ok(), { tools }, { catalogHash: null }),
      ).rejects.toBeInstanceOf(CatalogMovedError);
      expect(await store.statuses.repin(server.id, { tools }, "another")).toBe(false);

      const decided = decideChange(stored ?? pinned, pinned.pins?.changes?.[0]?.id ?? "", "approved");
      expect(await store.statuses.repin(server.id, decided ?? { tools }, stored?.hash ?? null)).toBe(true);
      expect(await store.statuses.getCatalog(server.id)).toMatchObject({ tools: [changed] });
      expect(await store.statuses.getCatalog(server.id)).not.toHaveProperty("pins");
      expect(await store.statuses.get(server.id)).toMatchObject({ pendingChanges: 0 });
      // The same decision again, on the catalogue it read before, no longer applies.
      expect(await store.statuses.repin(server.id, decided ?? { tools }, stored?.hash ?? null)).toBe(false);
    });

    it("bump is fenced on the generation expected", async () => {
      const store = await open();
      const server = await http(store);

      expect(await store.statuses.bump(server.id, "connecting", 5)).toBeUndefined();
      expect(await store.statuses.bump(server.id, "disabled", 1)).toMatchObject({
        state: "disabled",
        generation: 2,
      });
      expect(await store.statuses.bump("no-such-server", "connecting")).toBeUndefined();
    });
  });

  describe(`${name} store: the change feed`, () => {
    /** The servers the feed names since `from` (stamps are writers' clocks: look back a little). */
    const changedSince = async (store: Store, from: number) =>
      new Set((await store.changes.since(from - 1_000)).changes.map((change) => change.serverId));

    it("names every server whose config, status or catalogue was written, and each delete", async () => {
      const store = await open();
      const [edited, probed, removed] = await Promise.all([http(store), http(store), http(store)]);
      const before = Date.now();

      await store.servers.update(edited, { ...specOf(edited), enabled: false });
      await store.statuses.recordAttempt(probed.id, 1, ok(), { tools });
      await store.servers.remove(removed.id);

      const changed = await changedSince(store, before);
      for (const server of [edited, probed, removed]) expect(changed).toContain(server.id);
    });

    it("lists each item with the stamp the feed shows for it, and marks a delete as gone", async () => {
      const store = await open();
      const [probed, removed] = await Promise.all([http(store), http(store)]);
      await store.statuses.recordAttempt(probed.id, 1, ok(), { tools });
      await store.servers.remove(removed.id);

      const { changes } = await store.changes.since(0);
      const [listed, catalogs] = await Promise.all([store.servers.listAll(), store.statuses.listCatalogs()]);

      // Every write of the probed server the feed shows, the lists show by the same stamp on its item.
      const fed = changes.filter((change) => change.serverId === probed.id);
      const shown = {
        ...listed.find((entry) => entry.server.id === probed.id)?.stamps,
        ...catalogs.find((catalog) => catalog.serverId === probed.id)?.stamps,
      };
      expect(fed.length).toBeGreaterThanOrEqual(3); // config, status, catalogue
      expect(Object.fromEntries(fed.map((change) => [change.item, change.at]))).toEqual(shown);
      expect(fed.some((change) => change.gone)).toBe(false);
      expect(changes.filter((change) => change.serverId === removed.id && change.gone)).toHaveLength(1);
    });

    it("names the table's epoch on every look, the same each time; giving it one again changes nothing", async () => {
      const store = await open();
      const first = await store.changes.since(Date.now());

      await store.changes.ensureEpoch();
      const again = await store.changes.since(0);

      expect(first.epoch).toEqual(expect.any(String));
      expect(again.epoch).toBe(first.epoch);
      expect(again.changes.every((change) => Number.isFinite(change.at))).toBe(true);
    });

    it("reads a server's current config, status and catalogue; a deleted one reads as gone", async () => {
      const store = await open();
      const [kept, removed] = await Promise.all([http(store), http(store)]);
      await store.statuses.recordAttempt(kept.id, 1, ok(), { tools, profile });
      await store.servers.remove(removed.id);

      const [state, gone] = await store.changes.read([kept.id, removed.id]);

      expect(state?.server).toMatchObject({ id: kept.id, name: kept.name, version: 1 });
      expect(state?.server).not.toHaveProperty("changedAt");
      expect(state?.status).toMatchObject({ state: "connected", generation: 1, toolCount: 1 });
      expect(state?.catalog).toMatchObject({ serverId: kept.id, tools, profile });
      expect(gone).toEqual({ serverId: removed.id });
    });
  });

  describe(`${name} store: latency history`, () => {
    const probe = (at: number, ms = 12, ok = true) => ({ at, kind: "probe" as const, ms, ok });
    const calls = (at: number) => ({
      at,
      kind: "calls" as const,
      ms: 3.5,
      ok: false,
      count: 9,
      errors: 1,
      maxMs: 40.2,
    });

    it("a point lands in its slot; the history reads oldest first, probes and calls together", async () => {
      const store = await open();
      const server = await http(store);
      const now = Date.now();

      await store.latency.record(server.id, probe(now - 60_000));
      await store.latency.record(server.id, calls(now - 30_000));
      await store.latency.record(server.id, probe(now - 5 * 60_000, 250, false));

      expect(await store.latency.read(server.id)).toEqual([
        probe(now - 5 * 60_000, 250, false),
        probe(now - 60_000),
        calls(now - 30_000),
      ]);
      expect(await store.latency.read("no-such-server")).toEqual([]);
    });

    it("a point replaces the one a whole ring before it in its slot; points past the window are not read", async () => {
      const store = await open();
      const server = await http(store);
      const now = Date.now();
      const ringMs = { probe: 120 * 60_000, calls: 120 * 10_000 };

      // The same slot a ring apart: the later point replaces the earlier one.
      await store.latency.record(server.id, probe(now - 10 * 60_000 - ringMs.probe, 999));
      await store.latency.record(server.id, probe(now - 10 * 60_000, 7));
      await store.latency.record(server.id, calls(now - 60_000 - ringMs.calls));
      await store.latency.record(server.id, calls(now - 60_000));
      // Alone in their slots, but older than their kind's window.
      await store.latency.record(server.id, probe(now - ringMs.probe - 30 * 60_000));
      await store.latency.record(server.id, calls(now - ringMs.calls - 5 * 60_000));

      expect(await store.latency.read(server.id)).toEqual([probe(now - 10 * 60_000, 7), calls(now - 60_000)]);
    });

    it("a success never replaces a failure of its own grain; a later failure does, and any point of a later ring", async () => {
      const store = await open();
      const server = await http(store);
      const minute = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
      const slice = Math.floor(Date.now() / 10_000) * 10_000 - 60_000;
      const probeRingMs = 120 * 60_000;
      const okCalls = (at: number) => ({ ...calls(at), ok: true, errors: 0 });

      // A probe failed, and the server came back within the same minute: the failure stays shown.
      await store.latency.record(server.id, probe(minute + 1_000, 5_391, false));
      await store.latency.record(server.id, probe(minute + 30_000, 8));
      // A slot of calls with an error, then one without (another instance's flush, say).
      await store.latency.record(server.id, calls(slice + 1_000));
      await store.latency.record(server.id, okCalls(slice + 5_000));
      // A failure a ring ago is replaced by this ring's success in the same slot.
      await store.latency.record(server.id, probe(minute - probeRingMs + 60_000 * 3, 40, false));
      await store.latency.record(server.id, probe(minute + 60_000 * 3, 9));
      expect(await store.latency.read(server.id)).toEqual(
        [calls(slice + 1_000), probe(minute + 1_000, 5_391, false), probe(minute + 60_000 * 3, 9)].sort(
          (a, b) => a.at - b.at,
        ),
      );

      // A later failure of the same grain replaces the earlier one.
      await store.latency.record(server.id, probe(minute + 45_000, 2_000, false));
      expect((await store.latency.read(server.id)).filter((point) => point.kind === "probe")).toEqual([
        probe(minute + 45_000, 2_000, false),
        probe(minute + 60_000 * 3, 9),
      ]);
    });

    it("deleting the server deletes its history; a point that comes after is not kept", async () => {
      const store = await open();
      const [server, late] = [await http(store), await http(store)];
      await store.latency.record(server.id, probe(Date.now()));
      await store.latency.record(server.id, calls(Date.now()));
      await store.latency.record(late.id, probe(Date.now()));

      await store.servers.remove(server.id);
      await store.servers.remove(late.id);
      // A probe or a flush of calls still under way when the server went.
      await store.latency.record(server.id, probe(Date.now()));
      await store.latency.record(late.id, calls(Date.now()));
      await store.latency.record("never-created", probe(Date.now()));

      expect(await store.latency.read(server.id)).toEqual([]);
      expect(await store.latency.read(late.id)).toEqual([]);
      expect(await store.latency.read("never-created")).toEqual([]);
    });
  });

  describe(`${name} store: the audit trail`, () => {
    // Each test in a window of its own, days long, in the past (no event is read after now), far from
    // now: the AWS suite shares one table.
    const windowOf = () => Date.UTC(1971, 0, 1) + Math.floor(Math.random() * 5_000) * 4 * 86_400_000;
    const event = sampleAuditEvent;
    /** Every event of the filter, page by page (`limit` a page), as ids. */
    const walk = async (store: Store, filter: Parameters<Store["audit"]["query"]>[0], limit: number) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = await store.audit.query(filter, { limit, cursor });
        ids.push(...page.events.map((e) => e.id));
        if (page.cursor === null) return ids;
        cursor = page.cursor;
      }
      throw new Error("the walk did not end");
    };

    it("reads newest first across days, page by page with no duplicate or gap, within since/until", async () => {
      const store = await open();
      const start = windowOf();
      // Three days, the middle one empty; two events in one millisecond.
      const events = [
        event(start + 1_000),
        event(start + 3_600_000),
        event(start + 3_600_000),
        event(start + 2 * 86_400_000 + 5),
        event(start + 2 * 86_400_000 + 7_200_000),
      ];
      await store.audit.append(events.map(auditEntry), { retentionDays: 30 });
      const newestFirst = events
        .map((e) => e.id)
        .sort()
        .reverse();
      const range = { since: start, until: start + 3 * 86_400_000 };

      expect((await store.audit.query(range, { limit: 10 })).events).toEqual(
        newestFirst.map((id) => events.find((e) => e.id === id)),
      );
      for (const limit of [1, 2, 3]) expect(await walk(store, range, limit)).toEqual(newestFirst);
      expect(await walk(store, { since: start + 3_600_000, until: start + 2 * 86_400_000 + 5 }, 2)).toEqual(
        newestFirst.slice(1, 4),
      );
      expect(await store.audit.query({ since: start - 86_400_000, until: start }, { limit: 5 })).toEqual({
        events: [],
        cursor: null,
      });
    });

    it("filters by principal, server (id or name), tool (name or qualified) and outcome", async () => {
      const store = await open();
      const start = windowOf();
      const [a, b, c, d] = [
        event(start + 1, {}),
        event(start + 2, { principal: { kind: "user", sub: "user-7" }, serverId: "srv-2", serverName: "db" }),
        event(start + 3, {
          principal: { kind: "admin" },
          plane: "console",
          outcome: "tool_error",
          tool: "write",
        }),
        event(start + 4, {
          principal: { kind: "key", keyId: "key-2", keyName: "deploy" },
          serverId: "srv-2",
          serverName: "db",
          outcome: "tool.not_found",
          tool: "read",
        }),
      ];
      await store.audit.append([a, b, c, d].map(auditEntry), { retentionDays: 30 });
      const ids = async (filter: Omit<Parameters<Store["audit"]["query"]>[0], "since" | "until">) =>
        walk(store, { ...filter, since: start, until: start + 10 }, 2);

      expect(await ids({ principal: "key-1" })).toEqual([a.id]);
      expect(await ids({ principal: "deploy" })).toEqual([d.id]);
      expect(await ids({ principal: "user-7" })).toEqual([b.id]);
      expect(await ids({ principal: "admin" })).toEqual([c.id]);
      expect(await ids({ server: { id: "srv-2" } })).toEqual([d.id, b.id]);
      expect(await ids({ server: { id: "srv-9", name: "db" } })).toEqual([d.id, b.id]);
      expect(await ids({ tool: "write" })).toEqual([c.id]);
      expect(await ids({ tool: "db__read" })).toEqual([d.id, b.id]);
      expect(await ids({ outcome: "tool.not_found" })).toEqual([d.id]);
      expect(await ids({ server: { id: "srv-1" }, tool: "read", outcome: "ok" })).toEqual([a.id]);
    });

    it("a range of more days than one query walks goes on by its cursor to since's day", async () => {
      const store = await open();
      const start = windowOf() - 100 * 86_400_000;
      const [oldest, newest] = [event(start + 1), event(start + 59 * 86_400_000)];
      await store.audit.append([oldest, newest].map(auditEntry), { retentionDays: 30 });
      const range = { since: start, until: start + 60 * 86_400_000 };
      expect(await walk(store, range, 10)).toEqual([newest.id, oldest.id]);
    });

    it("an until after now reads from now: the days to come hold nothing", async () => {
      const store = await open();
      const tool = unique("now-tool");
      const recent = event(Date.now() - 60_000, { tool });
      await store.audit.append([recent].map(auditEntry), { retentionDays: 30 });
      const filter = { since: Date.now() - 3_600_000, until: Date.now() + 400 * 86_400_000, tool };
      expect((await store.audit.query(filter, { limit: 10 })).events).toEqual([recent]);
    });

    it("an event too large to store whole is stored shortened, and the others of its batch whole", async () => {
      const store = await open();
      const start = windowOf();
      const huge = event(start + 1, { tool: "t".repeat(500_000), argumentKeys: ["k".repeat(300_000)] });
      const normal = event(start + 2);
      await store.audit.append([huge, normal].map(auditEntry), { retentionDays: 30 });
      const { events } = await store.audit.query({ since: start, until: start + 10 }, { limit: 10 });
      expect(events.map((e) => e.id)).toEqual([normal.id, huge.id]);
      expect(events[0]).toEqual(normal);
      expect(events[1]).toMatchObject({
        id: huge.id,
        tool: "t".repeat(256),
        argumentKeys: ["k".repeat(256)],
      });
    });

    it("an event appended comes back as it was, stamped to expire after the retention", async () => {
      const store = await open();
      const start = windowOf();
      const many = Array.from({ length: 30 }, (_, i) => event(start + i, { argumentKeys: [`k${i}`] }));
      await store.audit.append(many.map(auditEntry), { retentionDays: 7 });
      const { events } = await store.audit.query({ since: start, until: start + 100 }, { limit: 100 });
      expect(events).toEqual([...many].reverse());
    });
  });

  describe(`${name} store: keys, threads, secrets, jobs`, () => {
    it("keeps a console session and its binding until it expires or ends", async () => {
      const store = await open();
      const hash = unique("session-hash");
      const expiresAt = new Date(Date.now() + 60_000);
      await store.consoleSessions.create(hash, { expiresAt, binding: "token:abc" });

      expect(await store.consoleSessions.find(hash)).toEqual({
        expiresAt: new Date(Math.ceil(expiresAt.getTime() / 1000) * 1000),
        binding: "token:abc",
      });
      expect(await store.consoleSessions.find(hash, new Date(expiresAt.getTime() + 1_000))).toBeUndefined();
      expect(await store.consoleSessions.find(unique("other"))).toBeUndefined();
      await store.consoleSessions.delete(hash);
      expect(await store.consoleSessions.find(hash)).toBeUndefined();
      await store.consoleSessions.delete(hash);
    });

    it("keeps the provider subject a console session was signed in as", async () => {
      const store = await open();
      const [withSub, without] = [unique("sub-session"), unique("token-session")];
      const expiresAt = new Date(Date.now() + 60_000);
      await store.consoleSessions.create(withSub, { expiresAt, binding: "provider:x", sub: "ada|42" });
      await store.consoleSessions.create(without, { expiresAt, binding: "token:abc" });

      expect(await store.consoleSessions.find(withSub)).toMatchObject({
        binding: "provider:x",
        sub: "ada|42",
      });
      expect(await store.consoleSessions.find(without)).not.toHaveProperty("sub");
    });

    it("signs everyone out: every session made before ends, later ones live", async () => {
      const store = await open();
      const expiresAt = new Date(Date.now() + 60_000);
      const [first, second, later] = [unique("s1"), unique("s2"), unique("s3")];
      await store.consoleSessions.create(first, { expiresAt, binding: "b" });
      await store.consoleSessions.create(second, { expiresAt, binding: "b" });
      await store.consoleSessions.endAll();
      await store.consoleSessions.create(later, { expiresAt, binding: "b" });

      expect(await store.consoleSessions.find(first)).toBeUndefined();
      expect(await store.consoleSessions.find(second)).toBeUndefined();
      expect(await store.consoleSessions.find(later)).toMatchObject({ binding: "b" });
    });

    it("keeps keys by hash only, and revokes them", async () => {
      const store = await open();
      const created = await store.keys.create(unique("laptop"), null);

      expect((await store.keys.byHash()).get(hashApiKey(created.key))?.id).toBe(created.id);
      expect(await store.keys.list()).toContainEqual(expect.not.objectContaining({ key: expect.anything() }));
      expect(await store.keys.revoke(created.id)).toBe(true);
      expect(await store.keys.revoke(created.id)).toBe(false);
      expect((await store.keys.byHash()).has(hashApiKey(created.key))).toBe(false);
    });

    it("keeps tool sets by name: made once, replaced, listed, deleted; a key's and a mapping's sets and policy", async () => {
      const store = await open();
      const name = unique("set");
      const set = {
        name,
        description: "picked",
        tools: ["s1__echo"],
        rules: [{ serverId: "s2", annotations: { readOnlyHint: true } }, { glob: "*__get_*" }],
        overrides: { s1__echo: { name: "say", annotations: { title: "Say" } } },
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-01T00:00:00.000Z",
      };
      expect(await store.toolsets.create(set)).toEqual(set);
      await expect(store.toolsets.create(set)).rejects.toMatchObject({ code: "toolset.exists" });
      expect(await store.toolsets.get(name)).toEqual(set);
      const replaced = {
        ...set,
        tools: [],
        rules: [],
        overrides: {},
        createdAt: "later",
        updatedAt: "later",
      };
      expect(await store.toolsets.replace(replaced)).toEqual({ ...replaced, createdAt: set.createdAt });
      await expect(store.toolsets.replace({ ...set, name: unique("none") })).rejects.toMatchObject({
        code: "toolset.not_found",
      });
      expect((await store.toolsets.list()).map((one) => one.name)).toContain(name);
      expect(await store.toolsets.delete(name)).toBe(true);
      expect(await store.toolsets.delete(name)).toBe(false);
      expect(await store.toolsets.get(name)).toBeUndefined();

      // Past what one DynamoDB item holds, both stores refuse alike.
      const overrides = Object.fromEntries(
        Array.from({ length: 100 }, (_, at) => [`s1__t${at}`, { description: "d".repeat(4_096) }]),
      );
      const huge = { ...set, name: unique("huge"), overrides };
      await expect(store.toolsets.create(huge)).rejects.toMatchObject({ code: "toolset.invalid" });
      expect(await store.toolsets.get(huge.name)).toBeUndefined();
      await store.toolsets.create({ ...huge, overrides: {} });
      await expect(store.toolsets.replace(huge)).rejects.toMatchObject({ code: "toolset.invalid" });
      await store.toolsets.delete(huge.name);

      const toolPolicy = { allow: ["a__*"], refuse: { destructiveHint: true }, except: ["a__rm"] };
      const key = await store.keys.create(unique("scoped"), null, { toolsets: [name], toolPolicy });
      expect((await store.keys.byHash()).get(hashApiKey(key.key))).toMatchObject({
        toolsets: [name],
        toolPolicy,
      });
      const subject = `user:${unique("ada")}` as const;
      await store.oauth.putAccess(subject, null, { toolsets: [name], toolPolicy });
      expect(await store.oauth.access([subject])).toEqual([
        expect.objectContaining({ subject, serverIds: null, toolsets: [name], toolPolicy }),
      ]);
    });

    it("keeps a key's own limits, and none for a key made without", async () => {
      const store = await open();
      const limited = await store.keys.create(unique("ci"), null, {
        rateLimit: { perMinute: 600, burst: 60, concurrent: 16 },
      });
      const plain = await store.keys.create(unique("laptop"), null);

      const byHash = await store.keys.byHash();
      expect(byHash.get(hashApiKey(limited.key))?.rateLimit).toEqual({
        perMinute: 600,
        burst: 60,
        concurrent: 16,
      });
      expect(byHash.get(hashApiKey(plain.key))?.rateLimit).toBeNull();
    });

    it("leases a caller's minute budget in slices that add up to its limit, each minute afresh", async () => {
      const store = await open();
      const caller = unique("caller");
      const slices = await Promise.all(
        Array.from({ length: 6 }, () => store.rateBudget.lease(caller, 1_000, 4, 10)),
      );

      expect(slices.reduce((a, b) => a + b, 0)).toBe(10);
      expect(await store.rateBudget.lease(caller, 1_000, 4, 10)).toBe(0);
      expect(await store.rateBudget.lease(caller, 1_001, 4, 10)).toBe(4);
      expect(await store.rateBudget.lease(unique("other"), 1_000, 4, 10)).toBe(4);
    });

    it("registers runners by heartbeat; a lease is held by one live runner and taken over once its holder lapsed", async () => {
      const store = await open();
      const now = Date.now();
      const runner = (id: string, aliveUntil = now + 15_000, draining = false) =>
        registration(id, { aliveUntil, draining });
      const [a, b, gone] = [unique("runner-a"), unique("runner-b"), unique("runner-gone")];
      await store.fleet.announce(runner(a));
      await store.fleet.announce(runner(b));
      const key = unique("server");

      expect((await store.fleet.runners()).filter((r) => [a, b].includes(r.id))).toHaveLength(2);
      expect(await store.fleet.claim(key, gone, now)).toEqual({ notAlive: true }); // not registered
      const first = await store.fleet.claim(key, a, now);
      expect(first).toEqual({ lease: { key, owner: a, version: expect.any(Number) }, taken: true });
      const v1 = "lease" in first ? first.lease.version : 0;
      expect(await store.fleet.claim(key, a, now)).toEqual({
        lease: { key, owner: a, version: v1 },
        taken: false,
      });
      expect(await store.fleet.claim(key, b, now)).toMatchObject({ holder: { id: a } });
      expect(await store.fleet.lease(key)).toEqual({ key, owner: a, version: v1 });
      expect(await store.fleet.leasesOf(a)).toEqual([{ key, owner: a, version: v1 }]);

      // a's registration lapses (its heartbeat stopped): b takes the lease over, once, at a newer version.
      await store.fleet.announce(runner(a, now - 1));
      const taken = await store.fleet.claim(key, b, now);
      expect(taken).toMatchObject({ lease: { key, owner: b }, taken: true });
      expect("lease" in taken && taken.lease.version > v1).toBe(true);
      // A release at the old version takes nothing of the new lease.
      expect(await store.fleet.release(key, b, v1)).toBe(false);
      expect(await store.fleet.leasesOf(a)).toEqual([]);
      expect(await store.fleet.release(key, a)).toBe(false);
      expect(await store.fleet.release(key, b)).toBe(true);
      expect(await store.fleet.lease(key)).toBeUndefined();

      // A draining runner takes nothing; a withdrawn one is gone from the registry.
      await store.fleet.announce(runner(a, now + 15_000, true));
      expect(await store.fleet.claim(key, a, now)).toEqual({ notAlive: true });
      await store.fleet.withdraw(a);
      expect((await store.fleet.runners()).map((r) => r.id)).not.toContain(a);
    });

    it("reaps the leases of lapsed runners only: a live runner's stay, a lapsed one's go", async () => {
      const store = await open();
      const now = Date.now();
      const runner = (id: string, aliveUntil: number) => registration(id, { aliveUntil });
      const [live, dead] = [unique("runner-live"), unique("runner-dead")];
      const [kept, lost] = [unique("server"), unique("server")];
      await store.fleet.announce(runner(live, now + 15_000));
      await store.fleet.announce(runner(dead, now + 15_000));
      await store.fleet.claim(kept, live, now);
      await store.fleet.claim(lost, dead, now);
      expect(await store.fleet.reap(now)).toBe(0);
      expect(await store.fleet.leasesOf(dead)).toHaveLength(1);

      await store.fleet.announce(runner(dead, now - 1)); // its heartbeat stopped
      expect(await store.fleet.reap(now)).toBeGreaterThanOrEqual(1);
      expect(await store.fleet.leasesOf(dead)).toEqual([]);
      expect(await store.fleet.lease(lost)).toBeUndefined();
      expect(await store.fleet.lease(kept)).toMatchObject({ owner: live });
      // What was reaped is anyone's to claim.
      expect(await store.fleet.claim(lost, live, now)).toMatchObject({ lease: { owner: live }, taken: true });
    });

    it("begins one sweep run at a time: only over the last run as read, once it no longer holds", async () => {
      const store = await open();
      const now = Date.now();
      const before = await store.sweeps.last();
      const MAX_HOLD = 600_000;
      const run = (token: string, startedAt: number) => ({
        token,
        startedAt,
        holdsUntil: startedAt + 60_000,
        jobs: 0,
      });
      const [first, second, third, fourth] = [unique("run"), unique("run"), unique("run"), unique("run")];
      // The first run begins over the last as read (it may hold: the contract's runs start past it).
      const start = Math.max(now, (before?.holdsUntil ?? 0) + 1);
      expect(await store.sweeps.begin(run(first, start), before, MAX_HOLD)).toBe(true);
      expect(await store.sweeps.begin(run(second, start), before, MAX_HOLD)).toBe(false);
      const last = await store.sweeps.last();
      expect(last).toMatchObject({ token: first, holdsUntil: start + 60_000, jobs: 0 });
      // Held while it works; ended, it holds until its last job is due.
      expect(await store.sweeps.begin(run(second, start + 1_000), last, MAX_HOLD)).toBe(false);
      expect(await store.sweeps.end(first, start + 2_000, 42)).toBe(true);
      const ended = await store.sweeps.last();
      expect(ended).toMatchObject({ token: first, holdsUntil: start + 2_000, jobs: 42 });
      expect(await store.sweeps.begin(run(second, start + 1_999), ended, MAX_HOLD)).toBe(false);
      // Two schedulers past the hold: one begins.
      const outcomes = await Promise.all([
        store.sweeps.begin(run(second, start + 2_000), ended, MAX_HOLD),
        store.sweeps.begin(run(third, start + 2_000), ended, MAX_HOLD),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      // An end of a run that is not the last changes nothing, and says so.
      expect(await store.sweeps.end(first, start, 0)).toBe(false);
      const winner = await store.sweeps.last();
      expect(winner?.token).not.toBe(first);
      // A hold further out than any run asks for (a clock far ahead) holds nothing.
      expect(await store.sweeps.end(winner?.token ?? "", start + 2_000 + 3_600_000, 1)).toBe(true);
      const absurd = await store.sweeps.last();
      expect(await store.sweeps.begin(run(fourth, start + 3_000), absurd, MAX_HOLD)).toBe(true);
    });

    it("gives a contested lease to exactly one of the live runners claiming it at once", async () => {
      const store = await open();
      const now = Date.now();
      const ids = [unique("runner-1"), unique("runner-2"), unique("runner-3")];
      for (const id of ids) await store.fleet.announce(registration(id, { aliveUntil: now + 15_000 }));
      const key = unique("server");

      const outcomes = await Promise.all(ids.map((id) => store.fleet.claim(key, id, now)));

      const won = outcomes.flatMap((outcome) => ("lease" in outcome ? [outcome.lease.owner] : []));
      expect(won).toHaveLength(1);
      for (const outcome of outcomes) if ("holder" in outcome) expect(outcome.holder.id).toBe(won[0]);
      expect((await store.fleet.lease(key))?.owner).toBe(won[0]);
    });

    it("gives a thread to whoever starts it; another key finds none, the admin may join", async () => {
      const store = await open();
      const thread = unique("thread");
      const [a, b] = [await http(store), await http(store)];

      const first = await store.threads.register({
        threadId: thread,
        serverId: a.id,
        worktreeRoot: "/w/1",
        owner: "key-1",
      });
      const again = await store.threads.register({
        threadId: thread,
        serverId: a.id,
        worktreeRoot: "/w/other",
        owner: "key-1",
      });
      await expect(
        store.threads.register({ threadId: thread, serverId: b.id, worktreeRoot: "/w/1", owner: "key-2" }),
      ).rejects.toMatchObject({ code: "request.not_found" });
      await store.threads.register({
        threadId: thread,
        serverId: b.id,
        worktreeRoot: "/w/1",
        owner: ADMIN_OWNER,
      });

      expect(first.created).toBe(true);
      expect(again).toEqual({ instance: first.instance, created: false });
      expect(await store.threads.thread(thread)).toMatchObject({ owner: "key-1" });
      expect((await store.threads.list(thread)).map((i) => i.serverId)).toEqual([a.id, b.id].sort());
      expect((await store.threads.threads("key-1")).map((t) => t.threadId)).toContain(thread);
      expect((await store.threads.threads("key-2")).map((t) => t.threadId)).not.toContain(thread);
      expect(await store.threads.removeThread(thread)).toHaveLength(2);
      expect(await store.threads.thread(thread)).toBeUndefined();
    });

    it("seals secret-store values and lists key names only", async () => {
      const store = await open();
      const secret = unique("db");

      await store.secrets.put(secret, { PASSWORD: "hunter2", USER: "app" });

      expect(await store.secrets.get(secret)).toEqual({ PASSWORD: "hunter2", USER: "app" });
      expect((await store.secrets.list()).find((s) => s.name === secret)?.keys).toEqual(["PASSWORD", "USER"]);
      expect(JSON.stringify(await store.secrets.list())).not.toContain("hunter2");
      expect(await store.secrets.remove(secret)).toBe(true);
      expect(await store.secrets.get(secret)).toBeUndefined();
    });

    it("delivers a sent job until it is acknowledged", async () => {
      const store = await open();
      const job = { type: "probe" as const, serverId: unique("s"), generation: 1 };

      await store.jobs.send(job);
      const received = await store.jobs.receive({ waitSeconds: 1 });
      await store.jobs.ack(received.map((r) => r.receipt));

      expect(received.map((r) => JSON.parse(r.body))).toEqual([job]);
      expect(await store.jobs.receive({ waitSeconds: 0 })).toEqual([]);
    });
  });

  describe(`${name} store: OAuth grants and access`, () => {
    const now = nowSeconds();
    const grant = (familyId = unique("fam")): RefreshGrant => ({
      familyId,
      clientId: "c1",
      resource: "https://gw.test/mcp",
      scope: "mcp",
      sub: "ada",
      groups: [],
      expiresAt: now + 3600,
    });
    const code = (familyId = unique("fam")): AuthorizationCodeRecord => ({
      ...grant(familyId),
      redirectUri: "http://127.0.0.1:9/callback",
      codeChallenge: "c".repeat(43),
      refreshable: true,
      expiresAt: now + 120,
    });

    it("keeps a registered client", async () => {
      const store = await open();
      const client = {
        clientId: unique("cl"),
        clientName: "Test",
        redirectUris: ["http://127.0.0.1:9/cb"],
        grantTypes: ["authorization_code"],
        createdAt: new Date().toISOString(),
      };

      await store.oauth.saveClient(client);

      expect(await store.oauth.client(client.clientId)).toEqual(client);
      expect(await store.oauth.client(unique("none"))).toBeUndefined();
    });

    it("lets an unused client expire after a day; a client that obtains tokens lives 30 days on", async () => {
      const store = await open();
      const now = nowSeconds();
      const client = (id: string) => ({
        clientId: unique(id),
        clientName: "Test",
        redirectUris: ["http://127.0.0.1:9/cb"],
        grantTypes: ["authorization_code"],
        createdAt: new Date(now * 1000).toISOString(),
      });
      const [unused, used] = [client("unused"), client("used")];
      await store.oauth.saveClient(unused);
      await store.oauth.saveClient(used);
      await store.oauth.clientUsed(used.clientId, now + 3600);

      // Read-time checks: whether or not the table's TTL has swept the item yet.
      const dayLater = now + CLIENT_UNUSED_SECONDS + 1;
      expect(await store.oauth.client(unused.clientId, dayLater - 2)).toEqual(unused);
      expect(await store.oauth.client(unused.clientId, dayLater)).toBeUndefined();
      expect(await store.oauth.client(used.clientId, dayLater)).toEqual(used);
      expect(await store.oauth.client(used.clientId, now + 3600 + CLIENT_IDLE_SECONDS - 1)).toEqual(used);
      expect(await store.oauth.client(used.clientId, now + 3600 + CLIENT_IDLE_SECONDS)).toBeUndefined();
      // An expired client is not brought back by a late use; an unknown one is not made.
      await store.oauth.clientUsed(unused.clientId, dayLater);
      expect(await store.oauth.client(unused.clientId, dayLater)).toBeUndefined();
      await store.oauth.clientUsed(unique("never"), now);
      expect(await store.oauth.client(unique("never"), now)).toBeUndefined();
    });

    it("gives a transaction to one taker only, and none once expired", async () => {
      const store = await open();
      const tx = {
        clientId: "c1",
        clientName: "Test",
        redirectUri: "http://127.0.0.1:9/cb",
        state: undefined,
        codeChallenge: "x".repeat(43),
        resource: "https://gw.test/mcp",
        scope: "mcp",
        csrfHash: "h",
        refreshable: false,
        expiresAt: now + 600,
      };
      const [live, expired] = [unique("tx"), unique("tx")];
      await store.oauth.saveTransaction(live, tx);
      await store.oauth.saveTransaction(expired, { ...tx, expiresAt: now - 1 });

      expect(await store.oauth.transaction(live)).toEqual(tx);
      const takers = await Promise.all([
        store.oauth.takeTransaction(live),
        store.oauth.takeTransaction(live),
      ]);

      expect(takers.filter(Boolean)).toEqual([tx]);
      expect(await store.oauth.transaction(live)).toBeUndefined();
      expect(await store.oauth.transaction(expired)).toBeUndefined();
      expect(await store.oauth.takeTransaction(expired)).toBeUndefined();
    });

    it("consumes a code once, atomically; a replay is told apart; expired codes are gone", async () => {
      const store = await open();
      const [hash, stale] = [unique("code"), unique("code")];
      const record = code();
      await store.oauth.saveCode(hash, record);
      await store.oauth.saveCode(stale, { ...record, expiresAt: now - 1 });

      const uses = await Promise.all([1, 2, 3].map(() => store.oauth.consumeCode(hash)));

      expect(uses.filter((use) => use?.firstUse)).toHaveLength(1);
      expect(uses.every((use) => use?.code.familyId === record.familyId)).toBe(true);
      expect(await store.oauth.consumeCode(hash)).toMatchObject({ firstUse: false });
      expect(await store.oauth.consumeCode(stale)).toBeUndefined();
      expect(await store.oauth.consumeCode(unique("none"))).toBeUndefined();
    });

    it("rotates a refresh token once; reusing the old one revokes the family, new token too", async () => {
      const store = await open();
      const [r1, r2, r3] = [unique("rt"), unique("rt"), unique("rt")];
      const first = grant();
      await store.oauth.issueRefresh(r1, first);

      expect(await store.oauth.refresh(r1)).toEqual({ grant: first, used: false, familyRevoked: false });
      expect(await store.oauth.rotateRefresh(r1, r2)).toEqual({ outcome: "rotated", previous: first });
      expect(await store.oauth.refresh(r2)).toEqual({ grant: first, used: false, familyRevoked: false });
      expect(await store.oauth.rotateRefresh(r1, r3)).toEqual({ outcome: "reused" });

      expect(await store.oauth.refresh(r2)).toMatchObject({ familyRevoked: true });
      expect(await store.oauth.rotateRefresh(r2, r3)).toEqual({ outcome: "revoked" });
      expect(await store.oauth.refresh(r3)).toBeUndefined();
      expect(await store.oauth.rotateRefresh(unique("none"), r3)).toEqual({ outcome: "unknown" });
    });

    it("lets one of two concurrent rotations of the same token win", async () => {
      const store = await open();
      const r1 = unique("rt");
      await store.oauth.issueRefresh(r1, grant());

      const outcomes = await Promise.all([
        store.oauth.rotateRefresh(r1, unique("rt")),
        store.oauth.rotateRefresh(r1, unique("rt")),
      ]);

      expect(outcomes.map((o) => o.outcome).sort()).toEqual(["reused", "rotated"]);
    });

    it("revokes a family on demand; revoking an unknown one is no error", async () => {
      const store = await open();
      const r1 = unique("rt");
      const first = grant();
      await store.oauth.issueRefresh(r1, first);

      await store.oauth.revokeFamily(first.familyId);
      await store.oauth.revokeFamily(unique("none"));

      expect(await store.oauth.refresh(r1)).toMatchObject({ familyRevoked: true });
      expect(await store.oauth.rotateRefresh(r1, unique("rt"))).toEqual({ outcome: "revoked" });
    });

    it("keeps access mappings by subject: put replaces, delete tells whether there was one", async () => {
      const store = await open();
      const user = `user:${unique("ada")}` as const;
      const group = `group:${unique("eng")}` as const;

      await store.oauth.putAccess(user, ["s1"]);
      await store.oauth.putAccess(user, ["s1", "s2"]);
      await store.oauth.putAccess(group, null);

      expect(await store.oauth.access([user, group, `user:${unique("nobody")}`])).toEqual([
        expect.objectContaining({ subject: group, serverIds: null }),
        expect.objectContaining({ subject: user, serverIds: ["s1", "s2"] }),
      ]);
      const listed = (await store.oauth.listAccess()).filter(
        (m) => m.subject === user || m.subject === group,
      );
      expect(listed.map((m) => m.subject).sort()).toEqual([group, user].sort());
      expect(await store.oauth.deleteAccess(user)).toBe(true);
      expect(await store.oauth.deleteAccess(user)).toBe(false);
      expect(await store.oauth.access([user])).toEqual([]);
    });
  });
  describe(`${name} store: upstream OAuth credentials`, () => {
    const credential = (accessToken: string) => ({
      authorizationServer: "https://as.example.com",
      client: { client_id: "gw", client_secret: "client-secret-sentinel" },
      accessToken,
      refreshToken: `${accessToken}-refresh`,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });

    it("keeps a credential per (server, subject), sealed; put replaces it", async () => {
      const store = await open();
      const server = await http(store);
      expect(await store.upstreamCredentials.get(server.id, "shared")).toBeUndefined();
      await store.upstreamCredentials.put(server.id, "shared", credential("at-1"));
      await store.upstreamCredentials.put(server.id, "shared", credential("at-2"));
      expect(await store.upstreamCredentials.get(server.id, "shared")).toMatchObject({
        accessToken: "at-2",
        refreshToken: "at-2-refresh",
      });
      expect(await store.upstreamCredentials.get(server.id, "user:bob")).toBeUndefined();
    });

    it("removeAll drops every subject's credential; deleting the server drops them too", async () => {
      const store = await open();
      const [a, b] = [await http(store), await http(store)];
      await store.upstreamCredentials.put(a.id, "shared", credential("a"));
      await store.upstreamCredentials.put(a.id, "user:bob", credential("a-bob"));
      await store.upstreamCredentials.put(b.id, "shared", credential("b"));
      expect(await store.upstreamCredentials.removeAll(a.id)).toBe(2);
      expect(await store.upstreamCredentials.get(a.id, "shared")).toBeUndefined();
      expect(await store.upstreamCredentials.get(b.id, "shared")).toBeDefined();
      await store.servers.remove(b.id);
      expect(await store.upstreamCredentials.get(b.id, "shared")).toBeUndefined();
    });

    it("lists whose credentials it holds without opening them, newest first; removes one subject's", async () => {
      const store = await open();
      const server = await http(store);
      await store.upstreamCredentials.put(server.id, "user:ann", credential("ann"));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.upstreamCredentials.put(server.id, "user:bob", {
        ...credential("bob"),
        expiresAt: undefined,
      });
      const held = await store.upstreamCredentials.held(server.id);
      expect(held.map((h) => h.subject)).toEqual(["user:bob", "user:ann"]);
      expect(held[0]?.expiresAt).toBeNull();
      expect(Date.parse(held[1]?.expiresAt ?? "")).toBeGreaterThan(Date.now());
      expect(JSON.stringify(held)).not.toContain("ann-refresh");
      expect(await store.upstreamCredentials.remove(server.id, "user:ann")).toBe(true);
      expect(await store.upstreamCredentials.remove(server.id, "user:ann")).toBe(false);
      // A refresh finishing after the delete does not bring it back.
      expect(
        await store.upstreamCredentials.put(server.id, "user:ann", credential("late"), { replace: true }),
      ).toBe(false);
      expect(
        await store.upstreamCredentials.put(server.id, "user:bob", credential("bob2"), { replace: true }),
      ).toBe(true);
      expect((await store.upstreamCredentials.held(server.id)).map((h) => h.subject)).toEqual(["user:bob"]);
    });

    it("lets one claimant at a time refresh a credential, until its lease ends, a put or a release", async () => {
      const store = await open();
      const server = await http(store);
      expect(await store.upstreamCredentials.claimRefresh(server.id, "shared", 60_000)).toBe(false);
      await store.upstreamCredentials.put(server.id, "shared", credential("c"));
      const claims = await Promise.all(
        [1, 2, 3].map(() => store.upstreamCredentials.claimRefresh(server.id, "shared", 60_000)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      await store.upstreamCredentials.put(server.id, "shared", credential("d"));
      expect(await store.upstreamCredentials.claimRefresh(server.id, "shared", 60_000)).toBe(true);
      await store.upstreamCredentials.releaseRefresh(server.id, "shared");
      expect(await store.upstreamCredentials.claimRefresh(server.id, "shared", 1)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.upstreamCredentials.claimRefresh(server.id, "shared", 60_000)).toBe(true);
    });

    it("gives an authorization under way to one taker, by its state; none once expired", async () => {
      const store = await open();
      const server = await http(store);
      const pending = (expiresAt: number) => ({
        serverId: server.id,
        subject: "shared",
        codeVerifier: "verifier",
        redirectUri: "https://gw.example.com/oauth/upstream/callback",
        authorizationServer: "https://as.example.com",
        client: { client_id: "gw" },
        expiresAt,
      });
      const now = Math.floor(Date.now() / 1000);
      await store.upstreamCredentials.begin("state-1", pending(now + 600));
      await store.upstreamCredentials.begin("state-2", pending(now - 1));
      expect(await store.upstreamCredentials.take("state-x")).toBeUndefined();
      expect(await store.upstreamCredentials.isPending("state-1")).toBe(true);
      expect(await store.upstreamCredentials.take("state-1")).toMatchObject({ codeVerifier: "verifier" });
      expect(await store.upstreamCredentials.take("state-1")).toBeUndefined();
      expect(await store.upstreamCredentials.isPending("state-1")).toBe(false);
      expect(await store.upstreamCredentials.take("state-2")).toBeUndefined();
    });

    it("a caller's own authorization: opened once by its person, then taken only by that browser", async () => {
      const store = await open();
      const server = await http(store);
      const now = Math.floor(Date.now() / 1000);
      const gated = (expiresAt: number) => ({
        serverId: server.id,
        subject: "key:k1",
        codeVerifier: "verifier",
        redirectUri: "https://gw.example.com/oauth/upstream/callback",
        authorizationServer: "https://as.example.com",
        client: { client_id: "gw" },
        expiresAt,
        opener: "user:alice",
        authorizationUrl: "https://as.example.com/authorize?state=s",
      });
      const credentials = store.upstreamCredentials;
      await credentials.begin("gated-1", gated(now + 600));
      await credentials.begin("gated-2", gated(now - 1));
      await credentials.begin("shared-1", { ...gated(now + 600), opener: undefined, subject: "shared" });
      // Unopened: there to peek at, not to take (with or without a holder).
      expect(await credentials.peek("gated-1")).toMatchObject({
        opened: false,
        pending: { opener: "user:alice" },
      });
      expect(await credentials.take("gated-1")).toBeUndefined();
      expect(await credentials.take("gated-1", "holder-hash")).toBeUndefined();
      expect(await credentials.isPending("gated-1")).toBe(true);
      // Opened once; then no longer pending, and taken only with the holder's hash.
      expect(await credentials.open("gated-1", "holder-hash")).toBe(true);
      expect(await credentials.open("gated-1", "other-hash")).toBe(false);
      expect(await credentials.isPending("gated-1")).toBe(false);
      expect(await credentials.peek("gated-1")).toMatchObject({ opened: true });
      expect(await credentials.take("gated-1", "other-hash")).toBeUndefined();
      expect(await credentials.take("gated-1", "holder-hash")).toMatchObject({ subject: "key:k1" });
      expect(await credentials.peek("gated-1")).toBeUndefined();
      // Expired: neither seen nor opened. Not gated: nothing to open.
      expect(await credentials.peek("gated-2")).toBeUndefined();
      expect(await credentials.open("gated-2", "holder-hash")).toBe(false);
      expect(await credentials.open("shared-1", "holder-hash")).toBe(false);
      expect(await credentials.take("shared-1")).toMatchObject({ subject: "shared" });
    });
  });
}

/** The spec part of a stored server (what an update replaces). */
function specOf(record: ServerRecord) {
  const { id: _id, version: _version, createdAt: _created, updatedAt: _updated, ...spec } = record;
  return spec;
}

/** A runner's registration for the fleet's contract tests: alive until `aliveUntil`, room for 10. */
function registration(
  id: string,
  { aliveUntil, draining = false }: { aliveUntil: number; draining?: boolean },
) {
  return {
    id,
    url: `http://127.0.0.1:1/${id}`,
    capacity: 10,
    free: 10,
    version: "test",
    aliveUntil,
    draining,
  };
}
