/**
 * Tool sets on the MCP endpoints, through real SDK clients of both protocol eras: `/mcp/sets/{name}`
 * lists exactly the set's tools from three servers under its overrides and calls them (an overridden
 * name reaches the original tool); a key scoped to a set sees and calls nothing else on `/mcp`; the
 * annotation policy hides a destructive tool and refuses a call to it (`tool.forbidden` in `data.code`);
 * an unknown set is 404; an OAuth user whose access mapping names a set sees only that set's tools, on
 * `/mcp` and on the set's own endpoint (its protected-resource metadata served).
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { recordAwsCalls } from "../support/aws-calls";
import {
  signedInClient,
  signIn,
  startOAuthStack,
  TEST_REDIRECT,
  TestProvider,
} from "../support/oauth-client";
import type { Stack as BaseStack } from "../support/stack";
import { waitFor } from "../support/stack";
import { type ClientFlavour, connectTestClient, type TestClient, textOf } from "./clients";
import { type CreatedKey, rawRequest } from "./helpers";

const FLAVOURS = ["v2-modern", "v1"] as const satisfies readonly ClientFlavour[];

/** The gateway's dotted code of a refused call, whichever SDK threw it. */
async function refusal(call: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const error = (await call.then(
    () => new Error("the call was not refused"),
    (thrown: unknown) => thrown,
  )) as { data?: { code?: string }; message: string };
  return { ...(error.data?.code ? { code: error.data.code } : {}), message: error.message };
}

describe("tool sets on the MCP endpoints", () => {
  let stack: Stack;
  let upstreams: Upstream[];
  const [alpha, beta, gamma] = [uniqueName("alpha"), uniqueName("beta"), uniqueName("gamma")];
  const set = uniqueName("set");
  let setKey: CreatedKey;
  let policyKey: CreatedKey;
  const clients: TestClient[] = [];

  const connect = async (flavour: ClientFlavour, path: string, key: CreatedKey) => {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key });
    clients.push(client);
    return client;
  };
  const newKey = async (body: Record<string, unknown>) => {
    const created = await stack.call("POST", "/v1/keys", { name: uniqueName("key"), ...body });
    if (created.status !== 201) throw new Error(`POST /v1/keys → ${created.status}`);
    return created.body as CreatedKey;
  };

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstreams = await Promise.all([
      startUpstream({ name: "alpha", annotations: { echo: { readOnlyHint: true } } }),
      startUpstream({ name: "beta" }),
      startUpstream({ name: "gamma", annotations: { add: { destructiveHint: false, title: "Adder" } } }),
    ]);
    await Promise.all(
      [alpha, beta, gamma].map((name, at) => createConnected(stack, { name, url: upstreams[at]?.url })),
    );
    const created = await stack.call("POST", "/v1/toolsets", {
      name: set,
      tools: [`${alpha}__echo`, `${beta}__add`],
      rules: [{ server: gamma, annotations: { destructiveHint: false } }],
      overrides: {
        [`${beta}__add`]: {
          name: "sum",
          description: "Add two numbers (curated)",
          annotations: { readOnlyHint: true },
        },
      },
    });
    if (created.status !== 201) throw new Error(`POST /v1/toolsets → ${created.status}`);
    [setKey, policyKey] = await Promise.all([
      newKey({ toolsets: [set] }),
      newKey({ servers: [alpha, beta], toolPolicy: { refuse: { destructiveHint: true } } }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await Promise.allSettled((upstreams ?? []).map((upstream) => upstream.close()));
  });

  for (const flavour of FLAVOURS) {
    it(`${flavour}: /mcp/sets/{name} lists exactly the set's tools from three servers, overrides shown and callable`, async ({
      expect,
    }) => {
      const admin = await newKey({});
      const client = await connect(flavour, `/mcp/sets/${set}`, admin);
      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([`${alpha}__echo`, `${gamma}__add`, "sum"]);
      const sum = tools.find((tool) => tool.name === "sum");
      expect(sum).toMatchObject({
        description: "Add two numbers (curated)",
        annotations: { readOnlyHint: true },
        inputSchema: { properties: { a: { type: "number" }, b: { type: "number" } } },
      });
      expect(tools.find((tool) => tool.name === `${gamma}__add`)).toMatchObject({
        annotations: { destructiveHint: false, title: "Adder" },
      });

      // The overridden name reaches the original tool; the original name is not the set's.
      const called = await client.callTool("sum", { a: 40, b: 2 });
      expect(textOf(called.result)).toBe("42");
      const echoed = await client.callTool(`${alpha}__echo`, { text: `via ${flavour}` });
      expect(textOf(echoed.result)).toBe(`via ${flavour}`);
      expect(await refusal(client.callTool(`${beta}__add`, { a: 1, b: 1 }))).toMatchObject({
        code: "tool.not_found",
      });
      expect(await refusal(client.callTool(`${alpha}__add`, { a: 1, b: 1 }))).toMatchObject({
        code: "tool.not_found",
      });
    });

    it(`${flavour}: a key scoped to the set sees and calls only its tools on /mcp`, async ({ expect }) => {
      const client = await connect(flavour, "/mcp", setKey);
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([
        `${alpha}__echo`,
        `${beta}__add`,
        `${gamma}__add`,
      ]);
      expect(textOf((await client.callTool(`${beta}__add`, { a: 2, b: 3 })).result)).toBe("5");
      const outside = await refusal(client.callTool(`${alpha}__add`, { a: 1, b: 1 }));
      expect(outside).toMatchObject({ code: "tool.forbidden" });
      expect(outside.message).toContain("not in the key's tool sets");
    });

    it(`${flavour}: the annotation policy hides a destructive tool and refuses a call to it`, async ({
      expect,
    }) => {
      const client = await connect(flavour, "/mcp", policyKey);
      // Fixture tools say nothing, so they are destructive by the spec's defaults — except read-only echo.
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([`${alpha}__echo`]);
      const refused = await refusal(client.callTool(`${beta}__add`, { a: 1, b: 1 }));
      expect(refused).toMatchObject({ code: "tool.forbidden" });
      expect(refused.message).toContain("refused by the key's policy: destructiveHint");
      // On a server's own endpoint too.
      const front = await connect(flavour, `/mcp/${beta}`, policyKey);
      expect(await front.listTools()).toEqual([]);
      expect(await refusal(front.callTool("add", { a: 1, b: 1 }))).toMatchObject({ code: "tool.forbidden" });
    });
  }

  it("a tool that appears later and matches a rule joins the set; the set's listeners in both eras are told", {
    timeout: 60_000,
  }, async ({ expect }) => {
    const upstream = await startUpstream({ name: "delta" });
    upstreams.push(upstream);
    const server = uniqueName("delta");
    await createConnected(stack, { name: server, url: upstream.url, pinning: "auto" });
    const live = uniqueName("live");
    expect(
      (await stack.call("POST", "/v1/toolsets", { name: live, rules: [{ glob: `${server}__late*` }] }))
        .status,
    ).toBe(201);
    const admin = await newKey({});
    const listeners = [
      await connect("v2-modern", `/mcp/sets/${live}`, admin),
      await connect("v1", `/mcp/sets/${live}`, admin),
    ];
    for (const listener of listeners) {
      expect(await listener.listTools()).toEqual([]);
      await listener.watchToolsListChanged();
    }
    // A first call warms the gateway's session; its GET stream carries the upstream's list_changed.
    expect((await stack.callTool(`${server}__echo`, { text: "warm" })).status).toBe(200);
    await waitFor(
      async () => upstream.openGetStreams,
      (open) => open >= 1,
      { timeoutMs: 5_000 },
    );
    const heard = listeners.map((listener) => listener.toolsListChanged);
    upstream.addTool("late_tool");
    await Promise.all(
      listeners.map((listener, at) => listener.waitForToolsListChanged((heard[at] ?? 0) + 1, 10_000)),
    );
    for (const listener of listeners) {
      const names = await waitFor(
        async () => (await listener.listTools()).map((tool) => tool.name),
        (listed) => listed.length > 0,
        { timeoutMs: 5_000 },
      );
      expect(names).toEqual([`${server}__late_tool`]);
    }
  });

  it("warm calls through a set read no tool set from DynamoDB each: the sets are held in memory", async ({
    expect,
  }) => {
    const viaSet = await connect("v2-modern", `/mcp/sets/${set}`, setKey);
    const direct = await connect("v2-modern", "/mcp", setKey);
    await viaSet.callTool("sum", { a: 1, b: 1 });
    await direct.callTool(`${beta}__add`, { a: 1, b: 1 });
    const CALLS = 30;
    /** Each call's duration in ms, the answers checked. */
    const timed = async (client: TestClient, name: string) => {
      const durations: number[] = [];
      for (let n = 0; n < CALLS; n++) {
        const started = performance.now();
        const answer = textOf((await client.callTool(name, { a: n, b: 1 })).result);
        durations.push(performance.now() - started);
        expect(answer).toBe(String(n + 1));
      }
      return durations.sort((a, b) => a - b)[CALLS / 2] ?? 0;
    };
    const calls = recordAwsCalls(stack.store.clients);
    const started = Date.now();
    let setP50 = 0;
    try {
      setP50 = await timed(viaSet, "sum");
    } finally {
      calls.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const directP50 = await timed(direct, `${beta}__add`);
    const setReads = calls.calls.filter((call) => JSON.stringify(call.input).includes("TOOLSET")).length;
    console.info(
      `${CALLS} warm calls through a set in ${seconds.toFixed(1)} s: ${setReads} tool-set reads; p50 ${setP50.toFixed(1)} ms through the set, ${directP50.toFixed(1)} ms on /mcp`,
    );
    // At most one refresh a second (in the background), never one per call.
    expect(setReads).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(setReads).toBeLessThan(CALLS / 3);
  });

  it("the set's endpoint serves only what the caller may use; an unknown set is 404 toolset.not_found", async ({
    expect,
  }) => {
    const client = await connect("v2-modern", `/mcp/sets/${set}`, policyKey);
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([`${alpha}__echo`]);
    const missing = await rawRequest(`${stack.api.url}/mcp/sets/${uniqueName("nope")}`, {
      headers: { authorization: `Bearer ${setKey.key}` },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: "toolset.not_found" });
  });
});

describe("an access mapping with a tool set", () => {
  let stack: BaseStack;
  let upstreams: Upstream[] = [];

  beforeAll(async () => {
    ({ stack, upstreams } = await startOAuthStack(["docs", "billing"]));
    const made = await stack.call("POST", "/v1/toolsets", {
      name: "readers",
      tools: ["docs__echo", "billing__add"],
    });
    if (made.status !== 201) throw new Error(`POST /v1/toolsets → ${made.status}`);
    const mapped = await stack.call("PUT", "/v1/access/user:ada", { servers: null, toolsets: ["readers"] });
    if (mapped.status !== 200)
      throw new Error(`PUT /v1/access → ${mapped.status} ${JSON.stringify(mapped.body)}`);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });

  it("the signed-in user sees and calls only the set's tools on /mcp", async ({ expect }) => {
    const view = await stack.call("GET", "/v1/access");
    expect(view.body.access).toContainEqual(
      expect.objectContaining({ subject: "user:ada", toolsets: ["readers"], servers: null }),
    );
    const { client } = await signedInClient(stack.api.url, new URL(`${stack.api.url}/mcp`), "ada");
    try {
      const names = await client
        .listTools()
        .then(({ tools }) => tools.map((tool) => tool.name).filter((name) => /^(docs|billing)__/.test(name)));
      expect(names).toEqual(["billing__add", "docs__echo"]);
      const result = await client.callTool({ name: "docs__echo", arguments: { text: "mapped" } });
      expect(JSON.stringify(result.content)).toContain("mapped");
      const refused = await refusal(client.callTool({ name: "docs__add", arguments: { a: 1, b: 1 } }));
      expect(refused).toMatchObject({ code: "tool.forbidden" });
      expect(refused.message).toContain("access mapping's tool sets");
    } finally {
      await client.close();
    }
  });

  it("a mapping whose tool policy would not fit in a token is refused; over 100 patterns is invalid", async ({
    expect,
  }) => {
    const names = (count: number) =>
      Array.from({ length: count }, (_, at) => `docs__${"t".repeat(100)}${at}`);
    const tooBig = await stack.call("PUT", "/v1/access/user:bea", {
      servers: null,
      toolPolicy: { allow: names(60) },
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body).toMatchObject({ code: "request.invalid" });
    const tooMany = await stack.call("PUT", "/v1/access/user:bea", {
      servers: null,
      toolPolicy: { allow: Array.from({ length: 101 }, (_, at) => `docs__t${at}`) },
    });
    expect(tooMany.status).toBe(400);
    const fits = await stack.call("PUT", "/v1/access/user:bea", {
      servers: null,
      toolPolicy: { allow: names(20) },
    });
    expect(fits.status).toBe(200);
    expect((await stack.call("DELETE", "/v1/access/user:bea")).status).toBe(204);
  });

  it("a user whose mappings together would not fit in a token gets none (fails closed)", async ({
    expect,
  }) => {
    const names = (tag: string) => Array.from({ length: 20 }, (_, at) => `docs__${tag.repeat(100)}${at}`);
    for (const [subject, tag] of [
      ["user:cy", "a"],
      ["group:wide", "b"],
    ] as const) {
      const mapped = await stack.call("PUT", `/v1/access/${subject}`, {
        servers: null,
        toolPolicy: { allow: names(tag) },
      });
      expect(mapped.status).toBe(200);
    }
    const url = new URL(`${stack.api.url}/mcp`);
    const provider = new TestProvider(TEST_REDIRECT);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: "oauth-test", version: "1" }).connect(transport)).rejects.toThrow();
    const { location } = await signIn(stack.api.url, provider.authorizationUrl as URL, "cy", "allow", "wide");
    const authorizationUrl = provider.authorizationUrl as URL;
    const exchanged = await fetch(`${stack.api.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: location.searchParams.get("code") ?? "",
        code_verifier: provider.codeVerifier(),
        client_id: provider.clientInformation()?.client_id ?? "",
        redirect_uri: TEST_REDIRECT,
        resource: authorizationUrl.searchParams.get("resource") ?? "",
      }),
    });
    expect(exchanged.status).toBe(400);
    expect(await exchanged.json()).toMatchObject({
      error: "invalid_grant",
      error_description: expect.stringContaining("too large"),
    });
    await stack.call("DELETE", "/v1/access/group:wide");
    await stack.call("DELETE", "/v1/access/user:cy");
  });

  it("the user signs in to the set's own endpoint and is served its tools", async ({ expect }) => {
    const metadata = await fetch(`${stack.api.url}/.well-known/oauth-protected-resource/mcp/sets/readers`);
    expect(await metadata.json()).toMatchObject({ resource: `${stack.api.url}/mcp/sets/readers` });
    const unknown = await fetch(`${stack.api.url}/.well-known/oauth-protected-resource/mcp/sets/nope`);
    expect(unknown.status).toBe(404);
    const { client } = await signedInClient(
      stack.api.url,
      new URL(`${stack.api.url}/mcp/sets/readers`),
      "ada",
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        "billing__add",
        "docs__echo",
      ]);
      const result = await client.callTool({ name: "billing__add", arguments: { a: 2, b: 2 } });
      expect(JSON.stringify(result.content)).toContain("4");
    } finally {
      await client.close();
    }
  });
});
