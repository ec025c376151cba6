/**
 * `GET /v1/tools?as=`: the admin reads the catalogue as one key or one access mapping gets it (the same
 * decision as the caller's own requests); a key may not ask, and an unknown key or mapping is 404.
 */
import { describe, expect, it } from "vitest";
import { createConnected, type Json, useGatewayStack } from "./helpers";

describe("the catalogue viewed as a caller", () => {
  const ctx = useGatewayStack({ oauth: true });

  /** The qualified names `?as=` answers, sorted. */
  async function namesAs(as: string): Promise<string[]> {
    const { status, body } = await ctx.stack.request("GET", `/v1/tools?as=${encodeURIComponent(as)}`);
    expect(status, JSON.stringify(body)).toBe(200);
    return (body.tools as Json[]).map((tool) => tool.name as string);
  }

  it("shows a scoped key's and a mapping's tools only, refuses a key asking, and 404s the unknown", async () => {
    const { stack } = ctx;
    for (const name of ["alpha", "beta"]) {
      const upstream = await ctx.upstream({ name });
      await createConnected(stack, { name, url: upstream.url });
    }
    const key = (await stack.call("POST", "/v1/keys", { name: "only-alpha", servers: ["alpha"] })).body;
    expect((await stack.call("PUT", "/v1/access/group:eng", { servers: ["beta"] })).status).toBe(200);

    const all = await stack.listTools();
    const alpha = all.filter((tool) => tool.server === "alpha").map((tool) => tool.name);
    const beta = all.filter((tool) => tool.server === "beta").map((tool) => tool.name);
    expect(alpha.length).toBeGreaterThan(0);
    expect(await namesAs(`key:${key.id}`)).toEqual(alpha);
    expect(await namesAs("group:eng")).toEqual(beta);
    // A subject may have inner spaces (as mappings may): it is viewed like any other.
    expect((await stack.call("PUT", "/v1/access/group:Platform Team", { servers: ["alpha"] })).status).toBe(
      200,
    );
    expect(await namesAs("group:Platform Team")).toEqual(alpha);

    const asKey = await stack.request("GET", `/v1/tools?as=key:${key.id}`, {
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect([asKey.status, asKey.body.code]).toEqual([403, "auth.forbidden"]);
    const unknownKey = await stack.request("GET", "/v1/tools?as=key:nope");
    expect([unknownKey.status, unknownKey.body.code]).toEqual([404, "request.not_found"]);
    const unknownSubject = await stack.request("GET", "/v1/tools?as=user:nobody");
    expect([unknownSubject.status, unknownSubject.body.code]).toEqual([404, "request.not_found"]);
    const malformed = await stack.request("GET", "/v1/tools?as=someone");
    expect([malformed.status, malformed.body.code]).toEqual([400, "request.invalid"]);
  });
});
