/**
 * Tool sets and tool policies over REST: `POST/GET/PUT/DELETE /v1/toolsets` (named tools and rules
 * resolved against the live catalogue, stored by server id so a rename keeps them, bad input as
 * problem+json with stable codes); a key scoped to a set lists and calls only its tools (a tool
 * outside it on a server the set reaches → 403 `tool.forbidden`, a server it does not reach → 404
 * `server.not_found`); a key's `toolPolicy` (refused annotation hints with exemptions, an allow-list)
 * hides refused tools from `/v1/tools` and answers a call to one 403 `tool.forbidden` naming the rule.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import type { CreatedKey } from "../mcp/helpers";
import { waitFor } from "../support/stack";
import { createConnected, type Json, type Stack, startGatewayStack, uniqueName } from "./helpers";

describe("tool sets and tool policies over REST", () => {
  let stack: Stack;
  let upstreams: Upstream[];
  const [alpha, beta, gamma] = [uniqueName("alpha"), uniqueName("beta"), uniqueName("gamma")];
  const set = uniqueName("set");

  /** A request as `key`. */
  const as = (key: CreatedKey) => (method: string, path: string, body?: unknown) =>
    stack.request(method, path, {
      headers: { authorization: `Bearer ${key.key}` },
      ...(body === undefined ? {} : { body }),
    });
  const names = async (key: CreatedKey) => {
    const listed = await as(key)("GET", "/v1/tools");
    return (listed.body.tools as Array<{ name: string }>).map((tool) => tool.name);
  };
  const keyWith = async (body: Record<string, unknown>) => {
    const created = await stack.call("POST", "/v1/keys", { name: uniqueName("key"), ...body });
    if (created.status !== 201)
      throw new Error(`POST /v1/keys → ${created.status} ${JSON.stringify(created.body)}`);
    return created.body as CreatedKey & { toolsets: string[]; toolPolicy: Json };
  };

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstreams = await Promise.all([
      startUpstream({ name: "alpha", annotations: { echo: { readOnlyHint: true } } }),
      startUpstream({ name: "beta", annotations: { add: { destructiveHint: false } } }),
      startUpstream({ name: "gamma" }),
    ]);
    await Promise.all(
      [alpha, beta, gamma].map((name, at) => createConnected(stack, { name, url: upstreams[at]?.url })),
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled((upstreams ?? []).map((upstream) => upstream.close()));
  });

  it("a set is created from named tools and rules, resolved against the catalogue, listed, replaced and deleted", async ({
    expect,
  }) => {
    const created = await stack.call("POST", "/v1/toolsets", {
      name: set,
      description: "picked tools",
      tools: [`${alpha}__echo`],
      rules: [{ server: beta, annotations: { destructiveHint: false } }, { glob: `${gamma}__f*` }],
      overrides: { [`${alpha}__echo`]: { name: "say", description: "Say it back" } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: set,
      tools: [`${alpha}__echo`],
      rules: [{ server: beta, annotations: { destructiveHint: false } }, { glob: `${gamma}__f*` }],
      overrides: { [`${alpha}__echo`]: { name: "say" } },
    });

    const got = await stack.call("GET", `/v1/toolsets/${set}`);
    expect(got.status).toBe(200);
    expect(got.body.resolved).toEqual([`${alpha}__echo`, `${beta}__add`, `${gamma}__fail`]);
    const listed = await stack.call("GET", "/v1/toolsets");
    expect(listed.body.toolsets.map((one: { name: string }) => one.name)).toContain(set);

    const other = uniqueName("other");
    expect((await stack.call("POST", "/v1/toolsets", { name: other, tools: [`${gamma}__add`] })).status).toBe(
      201,
    );
    const replaced = await stack.call("PUT", `/v1/toolsets/${other}`, { rules: [{ server: gamma }] });
    expect(replaced).toMatchObject({
      status: 200,
      body: { name: other, tools: [], rules: [{ server: gamma }] },
    });
    expect((await stack.call("GET", `/v1/toolsets/${other}`)).body.resolved).toHaveLength(4);
    expect((await stack.call("DELETE", `/v1/toolsets/${other}`)).status).toBe(204);
    expect((await stack.call("GET", `/v1/toolsets/${other}`)).body).toMatchObject({
      code: "toolset.not_found",
    });
    expect((await stack.call("DELETE", `/v1/toolsets/${other}`)).status).toBe(404);
  });

  it("bad input is problem+json with stable codes", async ({ expect }) => {
    const refusals: Array<[unknown, number, string]> = [
      [{ name: set }, 409, "toolset.exists"],
      [{ name: "bad name!" }, 400, "request.invalid"],
      [{ name: uniqueName("x"), tools: ["ghost__echo"] }, 400, "toolset.unknown_server"],
      [{ name: uniqueName("x"), tools: ["not-qualified"] }, 400, "request.invalid"],
      [{ name: uniqueName("x"), rules: [{ server: "bad name!" }] }, 400, "request.invalid"],
      [
        { name: uniqueName("x"), rules: Array.from({ length: 51 }, () => ({ glob: "*" })) },
        400,
        "request.invalid",
      ],
      [
        { name: uniqueName("x"), tools: Array.from({ length: 501 }, (_, n) => `${alpha}__t${n}`) },
        400,
        "request.invalid",
      ],
      [
        { name: uniqueName("x"), overrides: { [`${alpha}__echo`]: { name: "has space" } } },
        400,
        "request.invalid",
      ],
      [
        {
          name: uniqueName("x"),
          tools: [`${alpha}__echo`, `${alpha}__add`],
          overrides: { [`${alpha}__echo`]: { name: `${alpha}__add` } },
        },
        400,
        "toolset.invalid",
      ],
      [
        {
          name: uniqueName("x"),
          overrides: Object.fromEntries(
            Array.from({ length: 80 }, (_, n) => [`${alpha}__t${n}`, { description: "d".repeat(4_096) }]),
          ),
        },
        400,
        "toolset.invalid",
      ],
    ];
    for (const [body, status, code] of refusals) {
      const refused = await stack.request("POST", "/v1/toolsets", { body });
      expect([refused.status, refused.body.code], JSON.stringify(body).slice(0, 80)).toEqual([status, code]);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
    expect((await stack.call("PUT", `/v1/toolsets/${uniqueName("none")}`, {})).body.code).toBe(
      "toolset.not_found",
    );
    const unknownSet = await stack.call("POST", "/v1/keys", { name: "k", toolsets: ["nope"] });
    expect([unknownSet.status, unknownSet.body.code, unknownSet.body.unknown]).toEqual([
      400,
      "key.unknown_toolset",
      ["nope"],
    ]);
    const unknownAccess = await stack.call("PUT", "/v1/access/user:nobody", {
      servers: null,
      toolsets: ["nope"],
    });
    expect([unknownAccess.status, unknownAccess.body.code]).toEqual([404, "access.unknown_toolset"]);
    const badPolicy = await stack.call("POST", "/v1/keys", {
      name: "k",
      toolPolicy: { refuse: { destructive: true } },
    });
    expect([badPolicy.status, badPolicy.body.code]).toEqual([400, "request.invalid"]);
  });

  it("a key scoped to a set lists and calls only the set's tools", async ({ expect }) => {
    const key = await keyWith({ toolsets: [set] });
    expect(key).toMatchObject({ toolsets: [set], servers: null, toolPolicy: null });
    expect(await names(key)).toEqual([`${alpha}__echo`, `${beta}__add`, `${gamma}__fail`]);
    const called = await as(key)("POST", `/v1/tools/${beta}__add/call`, { arguments: { a: 1, b: 2 } });
    expect(called).toMatchObject({ status: 200, body: { text: "3" } });

    // Outside the set, on a server the set reaches: forbidden, naming why.
    const outside = await as(key)("POST", `/v1/tools/${alpha}__add/call`, { arguments: { a: 1, b: 2 } });
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({ code: "tool.forbidden", rule: "toolsets" });
    expect(outside.body.detail).toContain("not in the key's tool sets");

    // Servers and sets together: the union.
    const both = await keyWith({ servers: [gamma], toolsets: [set] });
    expect((await names(both)).sort()).toEqual(
      [
        `${alpha}__echo`,
        `${beta}__add`,
        `${gamma}__add`,
        `${gamma}__echo`,
        `${gamma}__fail`,
        `${gamma}__slow`,
      ].sort(),
    );

    // A key listed with its sets; deleting a set a key uses is refused.
    const keys = (await stack.call("GET", "/v1/keys")).body.keys as Array<{ id: string; toolsets: string[] }>;
    expect(keys.find((listed) => listed.id === key.id)?.toolsets).toEqual([set]);
    const inUse = await stack.call("DELETE", `/v1/toolsets/${set}`);
    expect([inUse.status, inUse.body.code]).toEqual([409, "toolset.in_use"]);
  });

  it("a key's set on a server it cannot reach at all: 404 server.not_found, as for a key scoped to servers", async ({
    expect,
  }) => {
    const narrow = uniqueName("narrow");
    await stack.call("POST", "/v1/toolsets", { name: narrow, tools: [`${alpha}__echo`] });
    const key = await keyWith({ toolsets: [narrow] });
    const elsewhere = await as(key)("POST", `/v1/tools/${gamma}__echo/call`, { arguments: { text: "x" } });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, "server.not_found"]);
    // A tool that server lacks says no more about it.
    const missing = await as(key)("POST", `/v1/tools/${gamma}__missing/call`, {});
    expect([missing.status, missing.body.code]).toEqual([404, "server.not_found"]);
  });

  it("the annotation policy refuses destructive tools (spec defaults) unless exempt: absent from lists, a call is 403", async ({
    expect,
  }) => {
    const key = await keyWith({
      servers: [alpha, beta],
      toolPolicy: { refuse: { destructiveHint: true }, except: [`${alpha}__slow`] },
    });
    // alpha echo is read-only, beta add says it is not destructive, alpha slow is exempt; the rest say nothing.
    expect(await names(key)).toEqual([`${alpha}__echo`, `${alpha}__slow`, `${beta}__add`]);
    const refused = await as(key)("POST", `/v1/tools/${alpha}__fail/call`, {});
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "tool.forbidden", rule: "destructiveHint" });
    expect(refused.body.detail).toContain("refused by the key's policy: destructiveHint");
    const allowed = await as(key)("POST", `/v1/tools/${alpha}__echo/call`, { arguments: { text: "safe" } });
    expect(allowed).toMatchObject({ status: 200, body: { text: "safe" } });
  });

  it("an allow-list of names and globs narrows a key to them", async ({ expect }) => {
    const key = await keyWith({ toolPolicy: { allow: [`${gamma}__echo`, `${beta}__a*`] } });
    expect(await names(key)).toEqual([`${beta}__add`, `${gamma}__echo`]);
    const refused = await as(key)("POST", `/v1/tools/${gamma}__add/call`, { arguments: { a: 1, b: 1 } });
    expect(refused.body).toMatchObject({ code: "tool.forbidden", rule: "allow" });
    expect(refused.status).toBe(403);
  });

  it("a policy alone narrows tools, not reach: the key still reaches every server's MCP endpoint", async ({
    expect,
  }) => {
    const list = (key: CreatedKey) =>
      stack.request("POST", `/mcp/${alpha}`, {
        headers: { authorization: `Bearer ${key.key}`, accept: "application/json, text/event-stream" },
        body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      });
    const policyOnly = await keyWith({ toolPolicy: { allow: [`${beta}__*`] } });
    expect(policyOnly).toMatchObject({ servers: null, toolsets: [] });
    const reached = await list(policyOnly);
    expect(reached.status).toBe(200);
    expect(reached.body).toMatchObject({ result: { tools: [] } });
    const scoped = await list(await keyWith({ servers: [beta] }));
    expect([scoped.status, scoped.body.code]).toEqual([404, "server.not_found"]);
  });

  it("a renamed server keeps its place in the sets that name its tools", { timeout: 30_000 }, async ({
    expect,
  }) => {
    const renamedSet = uniqueName("ren");
    const server = uniqueName("delta");
    const upstream = await startUpstream({ name: "delta" });
    upstreams.push(upstream);
    const id = await createConnected(stack, { name: server, url: upstream.url });
    await stack.call("POST", "/v1/toolsets", {
      name: renamedSet,
      tools: [`${server}__echo`],
      rules: [{ server, glob: "*__add" }],
    });
    const renamed = uniqueName("delta2");
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { name: renamed })).status).toBe(200);
    const shown = await waitFor(
      () => stack.call("GET", `/v1/toolsets/${renamedSet}`),
      (got) => (got.body.resolved as string[]).includes(`${renamed}__echo`),
      { timeoutMs: 15_000 },
    );
    expect(shown.body).toMatchObject({
      tools: [`${renamed}__echo`],
      rules: [{ server: renamed, glob: "*__add" }],
      resolved: [`${renamed}__add`, `${renamed}__echo`],
    });
  });
});
