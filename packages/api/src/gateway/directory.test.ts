import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { describe, expect, it, vi } from "vitest";
import { Directory, STALE_CEILING_MS } from "./directory";

const logger = createLogger({ level: "error", sink: () => {} });
const ok = { ok: true as const, at: "2026-01-01T00:00:00.000Z", latencyMs: 3, toolCount: 1 };
const tools = [{ name: "search", inputSchema: { type: "object" } }];

/** A memory store with server `known` (connected, one tool), and a directory that has read it. */
async function knownView(maxAgeMs: number, missWaitMs?: number) {
  const store = createMemoryStore();
  const server = await store.servers.create(
    parseServerSpec({ name: "known", url: "https://known.example/mcp" }),
  );
  await store.statuses.recordAttempt(server.id, 1, ok, { tools });
  const directory = new Directory(store, logger, maxAgeMs, undefined, missWaitMs);
  const first = await directory.snapshot();
  return { store, server, directory, first };
}

describe("Directory", () => {
  it("gives each entry the profile its catalogue holds, and none where the catalogue has none", async () => {
    // Prepare
    const store = createMemoryStore();
    const [modern, old] = await Promise.all(
      ["modern", "old"].map((name) =>
        store.servers.create(parseServerSpec({ name, url: `https://${name}.example/mcp` })),
      ),
    );
    if (!modern || !old) throw new Error("not created");
    const profile = { protocolVersion: "2026-07-28", capabilities: { tools: {}, prompts: {} } };
    await store.statuses.recordAttempt(modern.id, 1, ok, { tools, profile });
    await store.statuses.recordAttempt(old.id, 1, ok, { tools });

    // Act
    const snapshot = await new Directory(store, logger).snapshot();

    // Assess
    expect(snapshot.byName.get("modern")?.profile).toEqual(profile);
    expect(snapshot.byId.get(modern.id)?.tools.has("modern__search")).toBe(true);
    expect(snapshot.byName.get("old")).not.toHaveProperty("profile");
  });
});

describe("Directory refreshes from the change feed", () => {
  /** A memory store whose change feed counts its reads. */
  function countingStore() {
    const store = createMemoryStore();
    const reads = { since: 0, servers: [] as string[] };
    const { since, read } = store.changes;
    store.changes = {
      ...store.changes,
      since: (from) => {
        reads.since += 1;
        return since(from);
      },
      read: (ids) => {
        reads.servers.push(...ids);
        return read(ids);
      },
    };
    return { store, reads };
  }

  async function created(store: ReturnType<typeof createMemoryStore>, name: string) {
    const server = await store.servers.create(parseServerSpec({ name, url: `https://${name}.example/mcp` }));
    await store.statuses.recordAttempt(server.id, 1, ok, { tools });
    return server;
  }

  it("with nothing changed, a refresh is one look at the feed and re-reads no server", async () => {
    // Prepare
    const { store, reads } = countingStore();
    await Promise.all(["a", "b", "c"].map((name) => created(store, name)));
    const directory = new Directory(store, logger, 0);
    const first = await directory.fresh(0);
    await directory.fresh(0); // reads, once, what changed just before the full read
    reads.since = 0;
    reads.servers.length = 0;

    // Act
    const again = await directory.fresh(0);

    // Assess
    expect(reads).toEqual({ since: 1, servers: [] });
    expect(again.byName).toBe((await directory.fresh(0)).byName);
    expect([...again.byName.keys()].sort()).toEqual([...first.byName.keys()].sort());
  });

  it("re-reads only the server that changed; the others keep their entries", async () => {
    // Prepare
    const { store, reads } = countingStore();
    const [a, b] = await Promise.all(["a", "b"].map((name) => created(store, name)));
    if (!a || !b) throw new Error("not created");
    const directory = new Directory(store, logger, 0);
    await directory.fresh(0);
    const before = await directory.fresh(0); // re-read once: what changed just before the full read
    await new Promise((resolve) => setTimeout(resolve, 5));
    reads.servers.length = 0;

    // Act
    await store.statuses.recordAttempt(
      a.id,
      1,
      { ...ok, at: "2026-01-02T00:00:00.000Z" },
      {
        tools: [...tools, { name: "fetch", inputSchema: { type: "object" } }],
      },
    );
    const after = await directory.fresh(0);

    // Assess
    expect(reads.servers).toContain(a.id);
    expect(reads.servers).not.toContain(b.id);
    expect(after.byId.get(a.id)?.tools.has("a__fetch")).toBe(true);
    expect(after.byId.get(b.id)).toBe(before.byId.get(b.id));
  });

  /**
   * Runs `write` with every stamp it leaves 5 s old, as by a writer whose write the store sat on (a
   * loaded emulator held writes for over 3 s in CI): a full read must not count as read a write it
   * did not see, however old its stamp.
   */
  const stampedLate = async <T>(write: () => Promise<T>) => {
    const realNow = Date.now();
    const clock = vi.spyOn(Date, "now").mockImplementation(() => realNow - 5_000);
    try {
      return await write();
    } finally {
      clock.mockRestore();
    }
  };

  it("misses no write that lands during a full read, however old its stamp", async () => {
    // Prepare
    const { store } = countingStore();
    const late = await stampedLate(() =>
      store.servers.create(parseServerSpec({ name: "late", url: "https://late.example/mcp" })),
    );
    const { since } = store.changes;
    let landed = false;
    store.changes.since = async (from) => {
      // The catalogue lands while the full read is under way: before the feed is looked at.
      if (!landed) {
        landed = true;
        await stampedLate(() => store.statuses.recordAttempt(late.id, 1, ok, { tools }));
      }
      return since(from);
    };
    const directory = new Directory(store, logger, 0);

    // Act
    await directory.fresh(0);
    const after = await directory.fresh(0);

    // Assess
    expect(after.byName.get("late")?.tools.has("late__search")).toBe(true);
  });

  it("reads again a write the feed shows and the lists do not yet (their indexes lag apart)", async () => {
    // Prepare: the catalogue's write is on the feed, the catalogues' index not there yet
    const { store } = countingStore();
    const late = await stampedLate(() =>
      store.servers.create(parseServerSpec({ name: "late", url: "https://late.example/mcp" })),
    );
    const lagging = await store.statuses.listCatalogs();
    await stampedLate(() => store.statuses.recordAttempt(late.id, 1, ok, { tools }));
    const { listCatalogs } = store.statuses;
    store.statuses.listCatalogs = async () => lagging;
    const directory = new Directory(store, logger, 0);

    // Act
    const first = await directory.fresh(0);
    store.statuses.listCatalogs = listCatalogs;
    const after = await directory.fresh(0);

    // Assess
    expect(first.byName.get("late")?.tools.size).toBe(0);
    expect(after.byName.get("late")?.tools.has("late__search")).toBe(true);
  });

  it("counts as read what the full read showed: the next look re-reads no server", async () => {
    // Prepare
    const { store, reads } = countingStore();
    await Promise.all(["a", "b", "c"].map((name) => created(store, name)));
    const directory = new Directory(store, logger, 0);
    await directory.fresh(0);
    reads.servers.length = 0;

    // Act
    await directory.fresh(0);

    // Assess
    expect(reads.servers).toEqual([]);
  });

  it("tells apart two servers' writes stamped in the same millisecond", async () => {
    // Prepare: a and b known; every write of theirs from now on shows one stamp on the feed
    const { store } = countingStore();
    const [a, b] = await Promise.all(["a", "b"].map((name) => created(store, name)));
    if (!a || !b) throw new Error("not created");
    const directory = new Directory(store, logger, 0);
    await directory.fresh(0);
    const { since } = store.changes;
    const sameMs = Date.now();
    let bWritten = false;
    store.changes.since = async (from) => {
      const feed = await since(from);
      const changes = feed.changes
        .filter((change) => bWritten || change.serverId !== b.id)
        .map((change) => ([a.id, b.id].includes(change.serverId) ? { ...change, at: sameMs } : change));
      return { ...feed, changes };
    };
    const twoTools = { tools: [...tools, { name: "fetch", inputSchema: { type: "object" } }] };

    // Act: a's write is read, then b's, stamped alike
    await store.statuses.recordAttempt(a.id, 1, { ...ok, at: "2026-01-02T00:00:00.000Z" }, twoTools);
    await directory.fresh(0);
    await store.statuses.recordAttempt(b.id, 1, { ...ok, at: "2026-01-02T00:00:00.000Z" }, twoTools);
    bWritten = true;
    const after = await directory.fresh(0);

    // Assess
    expect(after.byId.get(a.id)?.tools.has("a__fetch")).toBe(true);
    expect(after.byId.get(b.id)?.tools.has("b__fetch")).toBe(true);
  });

  it("drops a deleted server and finds a renamed one by its new name", async () => {
    // Prepare
    const { store } = countingStore();
    const [gone, renamed] = await Promise.all(["gone", "old-name"].map((name) => created(store, name)));
    if (!gone || !renamed) throw new Error("not created");
    const directory = new Directory(store, logger, 0);
    await directory.fresh(0);

    // Act
    await store.servers.remove(gone.id);
    const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...spec } = renamed;
    await store.servers.update(renamed, parseServerSpec({ ...spec, name: "new-name" }));
    const after = await directory.fresh(0);

    // Assess
    expect(after.byId.has(gone.id)).toBe(false);
    expect(after.byName.has("gone")).toBe(false);
    expect(after.byName.has("old-name")).toBe(false);
    expect(after.byName.get("new-name")?.server.id).toBe(renamed.id);
  });

  it("serves its view without waiting while it is young, and refreshes first once invalidated", async () => {
    // Prepare
    const { store, reads } = countingStore();
    await created(store, "a");
    const directory = new Directory(store, logger, 60_000);
    const first = await directory.snapshot();
    reads.since = 0;

    // Act
    const cached = await directory.snapshot();
    directory.invalidate();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const refreshed = await directory.snapshot();

    // Assess
    expect(cached).toBe(first);
    expect(reads.since).toBe(1);
    expect(refreshed.takenAt).toBeGreaterThan(first.takenAt);
  });

  it("answers a snapshot after an invalidation from a refresh begun after it, not one under way", async () => {
    // Prepare: a view, then a background refresh held once it has read the change feed
    const store = createMemoryStore();
    await created(store, "a");
    const directory = new Directory(store, logger, 1);
    await directory.snapshot();
    const { since } = store.changes;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let looks = 0;
    store.changes.since = async (from) => {
      looks += 1;
      const read = await since(from);
      if (looks === 1) await held;
      return read;
    };
    await new Promise((resolve) => setTimeout(resolve, 5));
    await directory.snapshot(); // stale: its background refresh begins, and is held
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(looks).toBe(1);

    // Act: this process creates "b" (as the admin plane does) and invalidates; the held refresh read
    // the feed before "b" was written
    await created(store, "b");
    directory.invalidate();
    const after = directory.snapshot();
    release();

    // Assess
    expect((await after).byName.has("b")).toBe(true);
    expect(looks).toBe(2);
  });
});

describe("Directory without its change feed", () => {
  it("reads every server when the feed cannot be read (its index still building), and says so", async () => {
    // Prepare
    const store = createMemoryStore();
    const lines: string[] = [];
    const warned = createLogger({ level: "warn", sink: (line) => lines.push(line) });
    await store.servers.create(parseServerSpec({ name: "before", url: "https://before.example/mcp" }));
    const directory = new Directory(store, warned, 0);
    await directory.snapshot();
    store.changes = {
      ...store.changes,
      since: async () => {
        throw new Error("Cannot read from backfilling global secondary index: byChange");
      },
      read: store.changes.read,
    };

    // Act
    await store.servers.create(parseServerSpec({ name: "after", url: "https://after.example/mcp" }));
    const snapshot = await directory.fresh(0);

    // Assess
    expect([...snapshot.byName.keys()].sort()).toEqual(["after", "before"]);
    expect(lines.some((line) => line.includes("change feed unreadable"))).toBe(true);
  });
});

describe("Directory after its table was made again", () => {
  /** A memory store whose feed shows `table.epoch` as the table's epoch; `ensureEpoch` gives it one. */
  function storeWithEpoch() {
    const store = createMemoryStore();
    const table: { epoch: string | undefined; ensured: number } = { epoch: "first", ensured: 0 };
    const { since } = store.changes;
    store.changes = {
      ...store.changes,
      since: async (from) => ({ ...(await since(from)), epoch: table.epoch }),
      ensureEpoch: async () => {
        table.ensured += 1;
        table.epoch ??= "given";
      },
    };
    return { store, table };
  }

  it.each([
    ["another epoch", "second"],
    ["no epoch any more", undefined],
  ])(
    "drops the whole view on its next refresh (%s): servers gone from the table are gone",
    async (_, epoch) => {
      // Prepare: a view with a server; then the table is emptied and given another server, none of it
      // named on the feed (a new table's feed knows nothing of the old one's items)
      const { store, table } = storeWithEpoch();
      const old = await store.servers.create(
        parseServerSpec({ name: "old", url: "https://old.example/mcp" }),
      );
      const directory = new Directory(store, logger, 0);
      expect((await directory.fresh(0)).byName.has("old")).toBe(true);
      const { since } = store.changes;
      store.changes = { ...store.changes, since: async (from) => ({ ...(await since(from)), changes: [] }) };
      await store.servers.remove(old.id);
      const fresh = await store.servers.create(
        parseServerSpec({ name: "new", url: "https://new.example/mcp" }),
      );
      expect([...(await directory.fresh(0)).byName.keys()]).toEqual(["old"]);

      // Act: the table is made again
      table.epoch = epoch;
      const snapshot = await directory.fresh(0);

      // Assess: read whole (the new server is known though the feed named nothing)
      expect([...snapshot.byName.keys()]).toEqual(["new"]);
      expect(snapshot.byId.has(fresh.id)).toBe(true);
    },
  );

  it("gives a table found without an epoch one, at most once per gap, and then keeps its view", async () => {
    // Prepare: a table deployed before epochs
    const { store, table } = storeWithEpoch();
    table.epoch = undefined;
    const directory = new Directory(store, logger, 0);
    await directory.fresh(0);

    // Act
    await directory.fresh(0);
    await directory.fresh(0);

    // Assess
    expect(table.ensured).toBe(1);
    expect(table.epoch).toBe("given");
  });
});

describe("Directory.entry, for a call", () => {
  it("finds a server the view does not know by reading it directly, without waiting on a slow refresh", async () => {
    // Prepare: a view without the server, and a feed that never answers (a refresh reading hundreds)
    const store = createMemoryStore();
    const directory = new Directory(store, logger, 60_000);
    await directory.snapshot();
    const server = await store.servers.create(
      parseServerSpec({ name: "new", url: "https://new.example/mcp" }),
    );
    await store.statuses.recordAttempt(server.id, 1, ok, { tools });
    store.changes = { ...store.changes, since: () => new Promise(() => {}) };

    // Act
    const entry = await directory.entry("new", () => true);

    // Assess: found, its tools with it; a name that is no server's is undefined
    expect(entry?.server.id).toBe(server.id);
    expect(entry?.tools.has("new__search")).toBe(true);
    expect(await directory.entry("nobody", () => true)).toBeUndefined();
  });

  it("serves a young view's usable entry as it is, reading nothing", async () => {
    // Prepare
    const { store, server, directory } = await knownView(60_000);
    let reads = 0;
    const { resolvePlain } = store.servers;
    store.servers.resolvePlain = (name) => {
      reads++;
      return resolvePlain(name);
    };

    // Act
    const entry = await directory.entry("known", (known) => known.tools.has("known__search"));

    // Assess
    expect(entry?.server.id).toBe(server.id);
    expect(reads).toBe(0);
  });
});

describe("Directory with a slow store", () => {
  /** A view of server `known` (connected, one tool), then a store whose reads never answer. */
  async function stalled(maxAgeMs: number, missWaitMs = 50) {
    const { store, directory, first } = await knownView(maxAgeMs, missWaitMs);
    const never = () => new Promise<never>(() => {});
    store.changes = { ...store.changes, since: never, read: never };
    store.servers.listAll = never;
    store.servers.resolvePlain = never;
    return { directory, first };
  }

  it("serves a stale view at once, and a known server's entry, while its refresh hangs", async () => {
    // Prepare
    const { directory, first } = await stalled(0);
    await new Promise((resolve) => setTimeout(resolve, 5));

    // Act
    const started = performance.now();
    const snapshot = await directory.snapshot();
    const entry = await directory.entry("known", (known) => known.tools.has("known__search"));
    const elapsed = performance.now() - started;

    // Assess: the view as it was, without waiting (the miss bound is 50 ms)
    expect(snapshot).toBe(first);
    expect(entry).toBe(first.byName.get("known"));
    expect(elapsed).toBeLessThan(40);
  });

  it("lets a name the view does not know wait only up to its bound, then fails as the store's unavailability", async () => {
    // Prepare
    const { directory } = await stalled(60_000, 100);

    // Act
    const started = performance.now();
    const [entry, fresh] = await Promise.allSettled([
      directory.entry("unknown", () => true),
      directory.fresh(),
    ]);
    const elapsed = performance.now() - started;

    // Assess: a 503 after about the bound (the server may exist) — not the hanging read's forever
    for (const outcome of [entry, fresh]) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ name: "StoreError" });
    }
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(1_000);
  });

  it("keeps its view fresh on its own while in use: a server created during a pause between calls is known", async () => {
    // Prepare
    const store = createMemoryStore();
    const directory = new Directory(store, logger, 20);
    await directory.snapshot();

    // Act: a server is created, and no call comes for a while
    await store.servers.create(parseServerSpec({ name: "later", url: "https://later.example/mcp" }));
    await new Promise((resolve) => setTimeout(resolve, 150));

    // Assess: the view (read without a call) already has it
    expect(directory.cachedNamed("later")).toBeDefined();
  });

  it("serves no view older than its ceiling: a known server is read directly (a disable is seen)", async () => {
    // Prepare: a view of a connected server; then it is disabled, and the view outlives its ceiling
    const { store, server, directory } = await knownView(60_000);
    const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...spec } = server;
    await store.servers.update(server, parseServerSpec({ ...spec, enabled: false }));
    const usable = (entry: { server: { enabled: boolean } }) => entry.server.enabled;
    const young = await directory.entry("known", usable);

    // Act
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + STALE_CEILING_MS });
    try {
      const old = await directory.entry("known", usable);

      // Assess: the young view answered as it was; past the ceiling, the store
      expect(young?.server.enabled).toBe(true);
      expect(old?.server.enabled).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not serve a stale view once a refresh failed: the call sees the store's error", async () => {
    // Prepare: a view, then a store that refuses every read
    const store = createMemoryStore();
    await store.servers.create(parseServerSpec({ name: "known", url: "https://known.example/mcp" }));
    const directory = new Directory(store, logger, 0);
    await directory.snapshot();
    const refused = () => Promise.reject(new Error("connect ECONNREFUSED"));
    store.changes = { ...store.changes, since: refused };
    store.servers.listAll = refused;

    // Act: the first call after the failure starts the refresh that fails; the next waits for its own
    await new Promise((resolve) => setTimeout(resolve, 2));
    await directory.snapshot();
    await new Promise((resolve) => setTimeout(resolve, 2));

    // Assess
    await expect(directory.snapshot()).rejects.toThrow("ECONNREFUSED");
  });
});
