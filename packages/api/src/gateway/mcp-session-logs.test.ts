import { randomBytes } from "node:crypto";
import { createLogger } from "@mcpgw/core";
import { Server } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import type { DirectoryEntry } from "./directory";
import { SESSION_LOG_BURST, SessionLogRelay, STANDALONE_REAUTH_MS, SWEEP_MS } from "./mcp-session-logs";
import { type LegacySession, LegacySessions, type SessionAudience } from "./mcp-sessions";
import { MAX_UNREAD_BYTES } from "./standalone-stream";

const URL = "http://mcpgw.test/mcp/logs";
const PRINCIPAL = "key:listener";
const ENDPOINT = "logs";
const VERSION = "2025-11-25";
const AUDIENCE: SessionAudience = { serverId: "srv-logs", scope: null };
const AUTH = { token: "", clientId: PRINCIPAL, scopes: [] };
const ENTRY = { server: { id: "srv-logs", name: "logs" } } as DirectoryEntry;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Real 2025 sessions (real SDK servers) and a relay telling them, with the relay's log lines. */
function relaying() {
  const sessions = new LegacySessions(
    randomBytes(32),
    () => new Server({ name: "gateway", version: "1.0.0" }, { capabilities: { logging: {} } }),
  );
  const warnings: Array<Record<string, unknown>> = [];
  const relay = new SessionLogRelay(
    createLogger({ sink: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) }),
  );
  let relays = true;
  relay.start(sessions, () => relays);
  const tell = relay.listen(ENTRY, []);
  const turnOff = () => {
    relays = false;
  };
  return { sessions, relay, tell, warnings, turnOff };
}

function post(sessions: LegacySessions, body: Record<string, unknown>, id?: string) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(id ? { "mcp-session-id": id, "mcp-protocol-version": VERSION } : {}),
  };
  const request = new Request(URL, { method: "POST", headers, body: JSON.stringify(body) });
  return sessions.handle(request, body, PRINCIPAL, ENDPOINT, AUTH, AUDIENCE);
}

/** An initialized session: its id and the session itself. */
async function initialized(sessions: LegacySessions): Promise<LegacySession> {
  const params = { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } };
  const opened = await post(sessions, { jsonrpc: "2.0", id: 1, method: "initialize", params });
  await opened.text();
  const id = opened.headers.get("mcp-session-id") ?? "";
  await (await post(sessions, { jsonrpc: "2.0", method: "notifications/initialized" }, id)).text();
  const session = [...sessions.of(undefined)].find((live) => live.id === id);
  if (!session) throw new Error("no session");
  return session;
}

/** The session's standalone GET stream (resuming after `lastEventId` when given). */
async function listen(sessions: LegacySessions, id: string, lastEventId?: string) {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "mcp-session-id": id,
    "mcp-protocol-version": VERSION,
    ...(lastEventId ? { "last-event-id": lastEventId } : {}),
  };
  const response = await sessions.handle(
    new Request(URL, { method: "GET", headers }),
    undefined,
    PRINCIPAL,
    ENDPOINT,
    AUTH,
    AUDIENCE,
  );
  expect(response.status).toBe(200);
  return response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
}

/** A read a stream owes from an earlier {@link readFor} that stopped waiting for it. */
const owed = new WeakMap<
  ReadableStreamDefaultReader<Uint8Array>,
  ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>
>();

/** What a stream carries within `ms` (or until it ends), as text, and whether it ended. */
async function readFor(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) {
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { text, ended: false };
    const read = owed.get(reader) ?? reader.read();
    owed.set(reader, read);
    const next = await Promise.race([read, sleep(left).then(() => undefined)]);
    if (!next) return { text, ended: false };
    owed.delete(reader);
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value, { stream: true });
  }
}

describe("SessionLogRelay", () => {
  it("relays nothing once the admin turns the setting off, though the session was opened with it on", async () => {
    const { sessions, relay, tell, turnOff } = relaying();
    const session = await initialized(sessions);
    const reader = await listen(sessions, session.id);
    tell({ level: "info", data: "while on" });
    expect((await readFor(reader, 300)).text).toContain("while on");

    turnOff();
    tell({ level: "info", data: "after off" });
    expect((await readFor(reader, 300)).text).not.toContain("after off");
    // Nor are its listeners' streams refreshed any more.
    relay.refresh(Date.now() + STANDALONE_REAUTH_MS);
    expect((await readFor(reader, 200)).ended).toBe(false);
    relay.stop();
    await sessions.close();
  });

  it("queues at most MAX_UNREAD_BYTES for a listener that never reads; the rest is dropped and counted", async () => {
    const { sessions, relay, tell, warnings } = relaying();
    const session = await initialized(sessions);
    const reader = await listen(sessions, session.id);
    const data = "x".repeat(16 * 1024);

    // A burst of lines, 16 KiB each: three times what the bound holds.
    for (let n = 0; n < SESSION_LOG_BURST; n++) tell({ level: "info", data: `${n} ${data}` });
    await sleep(100);

    const unread = session.standalone?.unreadBytes ?? 0;
    expect(unread).toBeGreaterThan(MAX_UNREAD_BYTES / 2);
    expect(unread).toBeLessThanOrEqual(MAX_UNREAD_BYTES);
    await sleep(1_100);
    const dropped = warnings.find((line) => line.msg === "upstream session log lines dropped");
    expect(dropped).toMatchObject({ server: "logs", overRate: 0, unread: expect.any(Number) });
    expect(dropped?.unread).toBeGreaterThan(SESSION_LOG_BURST / 2);

    // Once the client reads, lines reach it again.
    await readFor(reader, 200);
    expect(session.standalone?.unreadBytes).toBe(0);
    tell({ level: "info", data: "after reading" });
    expect((await readFor(reader, 500)).text).toContain("after reading");
    relay.stop();
    await sessions.close();
  });

  it("keeps nothing for a session with no open stream: a resumed stream replays no line sent meanwhile", async () => {
    const { sessions, relay, tell } = relaying();
    const session = await initialized(sessions);
    const first = await listen(sessions, session.id);
    tell({ level: "info", data: "while open" });
    const heard = await readFor(first, 300);
    expect(heard.text).toContain("while open");
    const lastEventId = /^id: (.+)$/m.exec(heard.text)?.[1];
    expect(lastEventId).toBeDefined();
    await first.cancel();
    await sleep(50);
    expect(session.standalone).toBeUndefined();

    tell({ level: "info", data: "while nobody listened" });
    await sleep(50);
    const resumed = await listen(sessions, session.id, lastEventId);
    tell({ level: "info", data: "after resuming" });
    const replayed = await readFor(resumed, 500);
    expect(replayed.text).toContain("after resuming");
    expect(replayed.text).not.toContain("while nobody listened");
    relay.stop();
    await sessions.close();
  });

  it("closes a listener's stream before it is too old to hear, so its client authenticates again; a stale one hears nothing", async () => {
    const { sessions, relay, tell } = relaying();
    const session = await initialized(sessions);
    const reader = await listen(sessions, session.id);

    relay.refresh(Date.now() + STANDALONE_REAUTH_MS - SWEEP_MS - 1_000);
    expect((await readFor(reader, 200)).ended).toBe(false);
    relay.refresh(Date.now() + STANDALONE_REAUTH_MS - SWEEP_MS);
    expect((await readFor(reader, 500)).ended).toBe(true);
    expect(session.standalone).toBeUndefined();

    // A stream the sweep missed is not told once it is that old.
    const again = await listen(sessions, session.id);
    const opened = session.standalone as { openedAt: number };
    Object.defineProperty(opened, "openedAt", { value: Date.now() - STANDALONE_REAUTH_MS });
    tell({ level: "info", data: "too late" });
    expect((await readFor(again, 300)).text).not.toContain("too late");
    relay.stop();
    await sessions.close();
  });
});
