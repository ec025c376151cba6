import { auditEntry } from "@mcpgw/aws";
import { createMemoryStore } from "@mcpgw/aws/memory";
import { type AuditEvent, createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { sampleAuditEvent } from "../../../aws/src/store-contract";
import { createApp } from "../app";
import { auditFilterOf } from "./audit";

const ADMIN_TOKEN = "unit-admin-token-5c2e";

const event = (at: number) => sampleAuditEvent(at);

describe("the audit export", () => {
  it("stops before its byte cap; asked again with until = the last line's at, it goes on", async () => {
    const store = createMemoryStore();
    const start = Date.now() - 3_600_000;
    const events = Array.from({ length: 30 }, (_, i) => event(start + i * 1_000));
    await store.audit.append(events.map(auditEntry), { retentionDays: 30 });
    const lineBytes = JSON.stringify(events[0]).length + 1;
    const app = createApp({
      store,
      logger: createLogger({ level: "error", sink: () => {} }),
      adminToken: ADMIN_TOKEN,
      allowPrivateUpstreams: false,
      auditExportMaxBytes: lineBytes * 12 + 5,
    });
    const exported = async (query: string) => {
      const response = await app.request(`/v1/audit/export?${query}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text.length).toBeLessThanOrEqual(lineBytes * 12 + 5);
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditEvent);
    };
    const since = `since=${new Date(start).toISOString()}`;
    const first = await exported(since);
    expect(first.map((e) => e.id)).toEqual(
      events
        .slice(18)
        .reverse()
        .map((e) => e.id),
    );
    const next = await exported(`${since}&until=${first.at(-1)?.at}`);
    // The last line's millisecond comes again; the rest go on from it.
    expect(next.map((e) => e.id)).toEqual(
      events
        .slice(7, 19)
        .reverse()
        .map((e) => e.id),
    );
  });
});

describe("an audit query's range", () => {
  it("reads no further back than the retention from now", async () => {
    const store = createMemoryStore();
    const now = Date.UTC(2026, 5, 1);
    const day = 86_400_000;
    const since = (query: { since?: string; until?: string }) =>
      auditFilterOf(store, query, 30, now).then((filter) => filter.since);
    expect(await since({ since: "2001-01-01T00:00:00Z" })).toBe(now - 30 * day);
    expect(await since({ since: new Date(now - day).toISOString() })).toBe(now - day);
    expect(await since({})).toBe(now - 30 * day);
    expect(await since({ until: new Date(now - 40 * day).toISOString() })).toBe(now - 30 * day);
  });
});
