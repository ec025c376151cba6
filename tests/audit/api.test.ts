/**
 * `GET /v1/audit` and `/v1/audit/export` over a real stack: filters, the cursor walk, JSON Lines, and
 * admin only. Events are appended to the store directly (the calls that make them are in calls.test.ts).
 */
import { auditEntry } from "@mcpgw/aws";
import type { AuditEvent } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleAuditEvent } from "../../packages/aws/src/store-contract";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { type Stack, startStack } from "../support/stack";

let stack: Stack;
beforeAll(async () => {
  // The events are of March 2026: kept ten years (a query reads no further back than the retention).
  stack = await startStack({ audit: { retentionDays: 3_650 } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const base = Date.UTC(2026, 2, 10, 22, 0, 0);
const at = (minutes: number) => base + minutes * 60_000;
// As the store contract's, under the API's names (key k-1 `ci`, server s-1 `files`).
const event = (when: number, fields: Partial<AuditEvent> = {}) =>
  sampleAuditEvent(when, {
    principal: { kind: "key", keyId: "k-1", keyName: "ci" },
    serverId: "s-1",
    ...fields,
  });

/** Every event of a query, page by page with `limit`, as ids. */
async function walk(query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const next = cursor === null ? "" : `&cursor=${cursor}`;
    const { status, body } = await stack.call("GET", `/v1/audit?${query}&limit=${limit}${next}`);
    expect(status).toBe(200);
    ids.push(...body.events.map((e: AuditEvent) => e.id));
    cursor = body.cursor;
    if (cursor === null) return ids;
  }
  throw new Error("the walk did not end");
}

describe("the audit API", () => {
  // Across midnight (two day partitions), five principals/servers/outcomes.
  const events = [
    event(at(0)),
    event(at(30), { principal: { kind: "user", sub: "user-ada" }, serverId: "s-2", serverName: "db" }),
    event(at(90), { outcome: "tool_error", tool: "write" }),
    event(at(150), { principal: { kind: "admin" }, plane: "console", serverId: "s-2", serverName: "db" }),
    event(at(151), {
      principal: { kind: "key", keyId: "k-2", keyName: "deploy" },
      outcome: "tool.not_found",
      tool: "nope",
    }),
  ];
  const window = `since=${new Date(at(0)).toISOString()}&until=${new Date(at(200)).toISOString()}`;
  const idsOf = (...picked: AuditEvent[]) => picked.map((e) => e.id);

  beforeAll(async () => {
    await stack.store.audit.append(events.map(auditEntry), { retentionDays: 30 });
  });

  it("pages newest first with no duplicate or gap, and each filter narrows it", async () => {
    const newestFirst = idsOf(...events).reverse();
    for (const limit of [1, 2, 500]) expect(await walk(window, limit)).toEqual(newestFirst);
    const [a, b, c, d, e] = events as [AuditEvent, AuditEvent, AuditEvent, AuditEvent, AuditEvent];
    expect(await walk(`${window}&principal=k-1`, 2)).toEqual(idsOf(c, a));
    expect(await walk(`${window}&principal=deploy`, 2)).toEqual(idsOf(e));
    expect(await walk(`${window}&principal=user-ada`, 2)).toEqual(idsOf(b));
    expect(await walk(`${window}&principal=admin`, 2)).toEqual(idsOf(d));
    expect(await walk(`${window}&server=s-2`, 1)).toEqual(idsOf(d, b));
    expect(await walk(`${window}&server=db`, 1)).toEqual(idsOf(d, b));
    expect(await walk(`${window}&tool=write`, 2)).toEqual(idsOf(c));
    expect(await walk(`${window}&tool=files__read`, 2)).toEqual(idsOf(a));
    expect(await walk(`${window}&outcome=tool.not_found`, 2)).toEqual(idsOf(e));
    const middle = `since=${new Date(at(30)).toISOString()}&until=${new Date(at(150)).toISOString()}`;
    expect(await walk(middle, 2)).toEqual(idsOf(d, c, b));
  });

  it("the export streams the same events as JSON Lines", async () => {
    const response = await fetch(`${stack.api.url}/v1/audit/export?${window}&server=db`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await response.text()).split("\n").filter(Boolean);
    const listed = await stack.call("GET", `/v1/audit?${window}&server=db`);
    expect(lines.map((line) => JSON.parse(line))).toEqual(listed.body.events);
    expect(lines).toHaveLength(2);
  });

  it("refuses bad filters (400) and client keys (403); since after until is an empty range", async () => {
    for (const query of [
      "limit=0",
      "limit=501",
      "since=yesterday",
      "until=2026-13-01T00:00:00Z",
      "cursor=not-a-cursor",
    ]) {
      const { status, body } = await stack.call("GET", `/v1/audit?${query}`);
      expect([query, status, body.code]).toEqual([query, 400, "request.invalid"]);
    }
    const backwards = `since=${new Date(at(10)).toISOString()}&until=${new Date(at(5)).toISOString()}`;
    expect((await stack.call("GET", `/v1/audit?${backwards}`)).body).toEqual({ events: [], cursor: null });
    // Without since: the retention back from until, so an old until still finds its events.
    expect(await walk(`until=${new Date(at(200)).toISOString()}`, 50)).toEqual(
      events.map((e) => e.id).reverse(),
    );
    const key = await stack.call("POST", "/v1/keys", { name: "reader" });
    expect((await stack.callAs(key.body.key)("GET", "/v1/audit")).status).toBe(403);
    expect((await stack.callAs(key.body.key)("GET", "/v1/audit/export")).status).toBe(403);
  });

  it("no route edits or deletes an event", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect((await stack.call(method, "/v1/audit")).status).toBeGreaterThanOrEqual(404);
      expect((await stack.call(method, `/v1/audit/${events[0]?.id}`)).status).toBe(404);
    }
  });
});
