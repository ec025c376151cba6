/**
 * `GET /v1/servers` a page at a time: reads cost what they return. Each page is one index query
 * (configs and their statuses side by side) and no KMS call, counted on the store's own clients; a bad
 * `limit` or `cursor` is 400 `request.invalid`; statuses stored before pages existed are still listed
 * (one batch read more) until the sweep places them beside their configs.
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "@mcpgw/aws";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { runSweep } from "@mcpgw/worker";
import { describe, expect, it } from "vitest";
import { scanTable } from "../support/aws";
import { recordAwsCalls } from "../support/aws-calls";
import { expectJson, expectProblem, freshApp, type Json, type TestApp } from "./helpers";

interface Page {
  servers: Array<Json & { id: string; name: string; status: Json }>;
  nextCursor?: string;
}

/** Every page of the list through the API, `limit` at a time. */
async function allPages(app: TestApp, limit?: number): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({
      ...(limit === undefined ? {} : { limit: String(limit) }),
      ...(cursor ? { cursor } : {}),
    });
    const page = await expectJson<Page>(await app.call("GET", `/v1/servers?${query}`), 200);
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 2_000);
  return pages;
}

/** Registers `count` HTTP servers with a sealed header each, straight in the store (20 at a time). */
async function register(app: TestApp, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `srv-${String(i).padStart(4, "0")}`);
  for (let start = 0; start < count; start += 20) {
    await Promise.all(
      names.slice(start, start + 20).map((name) =>
        app.store.servers.create(
          parseServerSpec({
            name,
            url: `https://${name}.example.com/mcp`,
            headers: { Authorization: `Bearer sk-${name}` },
          }),
        ),
      ),
    );
  }
  return names;
}

describe("GET /v1/servers: pages", () => {
  it("lists 1,000 servers in ⌈1000/page⌉ index queries and no KMS call (≤ 1 + ⌈N/page⌉)", async () => {
    // Prepare: 1,000 servers, each with a sealed Authorization header
    const app = await freshApp();
    const names = await register(app, 1_000);
    const calls = recordAwsCalls(app.store.clients);

    for (const limit of [100, 250, 1_000]) {
      // Act
      calls.reset();
      const pages = await allPages(app, limit);

      // Assess: every server once, by name, masked; one DynamoDB query per page; KMS untouched
      const listed = pages.flatMap((page) => page.servers);
      expect(listed.map((server) => server.name)).toEqual(names);
      expect(listed.every((server) => (server.headers as Json).Authorization === "Bearer [SECRET]")).toBe(
        true,
      );
      expect(listed.every((server) => server.status.state === "connecting")).toBe(true);
      expect(pages.at(-1)?.nextCursor).toBeUndefined();
      const queries = calls.count("dynamodb");
      console.log(
        `list of ${names.length} servers, limit ${limit}: ${pages.length} pages, ${queries} DynamoDB calls`,
        calls.summary(),
      );
      expect(calls.count("dynamodb", "Query")).toBe(queries);
      expect(queries).toBe(pages.length);
      expect(queries).toBeLessThanOrEqual(1 + Math.ceil(names.length / limit));
      expect(calls.count("kms")).toBe(0);
    }
    calls.stop();
  }, 120_000);

  it("answers 100 servers by default, and a cursor resumes after the last one", async () => {
    const app = await freshApp();
    const names = await register(app, 130);

    const first = await expectJson<Page>(await app.call("GET", "/v1/servers"), 200);
    const second = await expectJson<Page>(
      await app.call("GET", `/v1/servers?cursor=${first.nextCursor}&limit=100`),
      200,
    );

    expect(first.servers.map((server) => server.name)).toEqual(names.slice(0, 100));
    expect(second.servers.map((server) => server.name)).toEqual(names.slice(100));
    expect(second).not.toHaveProperty("nextCursor");
  });

  it("a bad limit or cursor is 400 request.invalid, never a 500", async () => {
    const app = await freshApp();
    await register(app, 3);
    const forged = Buffer.from(JSON.stringify(["srv-0001", "not-an-id"])).toString("base64url");

    for (const query of [
      "limit=0",
      "limit=1001",
      "limit=abc",
      "limit=1.5",
      "limit=",
      "cursor=",
      "cursor=nope",
      "cursor=%21%21",
      `cursor=${forged}`,
      `cursor=${"A".repeat(600)}`,
    ]) {
      const body = await expectProblem(await app.call("GET", `/v1/servers?${query}`), 400, "request.invalid");
      expect(body.detail, query).toMatch(/limit|cursor/);
    }
  });

  it("statuses stored before pages are listed still, and the sweep places them beside their configs", async () => {
    // Prepare: three servers, one connected, their statuses put back in the layout from before pages
    const app = await freshApp();
    await register(app, 3);
    const ids = (await app.store.servers.listAll()).map((entry) => entry.server.id);
    await app.store.statuses.recordAttempt(
      ids[1] ?? "",
      1,
      { ok: true, at: new Date().toISOString(), latencyMs: 9, toolCount: 2 },
      { tools: [] },
    );
    const before = await statusItems(app);
    for (const id of ids) {
      await app.store.clients.ddb.send(
        new UpdateCommand({
          TableName: app.store.config.tableName,
          Key: keys.serverStatus(id),
          UpdateExpression: "SET kind = :kind, kindSort = :id",
          ExpressionAttributeValues: { ":kind": "STATUS", ":id": id },
        }),
      );
    }
    const calls = recordAwsCalls(app.store.clients);

    // Act: list, sweep, list again
    const apart = await allPages(app);
    const apartCalls = calls.summary();
    const sweep = await runSweep(
      { store: app.store, logger: createLogger({ level: "error", sink: () => {} }) },
      { spreadSeconds: 0 },
    );
    calls.reset();
    const placed = await allPages(app);

    // Assess: the same list both times; one batch read more while apart, none once placed
    const view = (pages: Page[]) => pages.flatMap((page) => page.servers.map((s) => [s.name, s.status]));
    expect(view(apart)).toEqual(view(placed));
    expect(view(placed).map(([, status]) => (status as Json).state)).toEqual([
      "connecting",
      "connected",
      "connecting",
    ]);
    expect(apartCalls).toEqual({ "dynamodb:Query": 1, "dynamodb:BatchGetItem": 1 });
    expect(sweep.placed).toBe(3);
    expect(calls.summary()).toEqual({ "dynamodb:Query": 1 });
    // Nothing stored was lost: each status item is as it was, only its index keys moved back
    expect(await statusItems(app)).toEqual(before);
  });
});

/** The stored status items by server id, without their index keys. */
async function statusItems(app: TestApp): Promise<Record<string, Json>> {
  const items = (await scanTable(app.store.config)).filter((item) => item.sk === "STATUS");
  return Object.fromEntries(items.map((item) => [String(item.serverId), item]));
}
