/**
 * Upstreams that speak both protocol eras, behind the gateway:
 *
 * - the probe learns the eras a server speaks: the status shows `eras` — both revisions for a server
 *   that also answers a 2025 `initialize` (the split-era fixture, the conformance fixture), one for a
 *   2025-only server;
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { type ConformanceUpstream, startConformanceUpstream } from "../fixtures/conformance-upstream";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type SplitEraUpstream, startSplitEraUpstream } from "../fixtures/split-era-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";

describe("dual-era upstreams behind the gateway", () => {
  let stack: Stack;
  let split: SplitEraUpstream;
  let conformance: ConformanceUpstream;
  let legacyOnly: Upstream;
  const names = { split: uniqueName("split"), conformance: uniqueName("both"), legacy: uniqueName("old") };
  const ids: Record<keyof typeof names, string> = { split: "", conformance: "", legacy: "" };

  beforeAll(async () => {
    [stack, split, conformance, legacyOnly] = await Promise.all([
      startGatewayStack(),
      startSplitEraUpstream(),
      startConformanceUpstream(),
      startUpstream({ name: "legacy-only" }),
    ]);
    [ids.split, ids.conformance, ids.legacy] = await Promise.all([
      createConnected(stack, { name: names.split, url: split.url }),
      createConnected(stack, { name: names.conformance, url: conformance.url }),
      createConnected(stack, { name: names.legacy, url: legacyOnly.url }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled([split?.close(), conformance?.close(), legacyOnly?.close()]);
  });

  it("the status shows the eras a server speaks: both for a dual-era server, one for a 2025-only one", async ({
    expect,
  }) => {
    const eras = async (id: string) => (await stack.call("GET", `/v1/servers/${id}`)).body.status;

    expect(await eras(ids.split)).toMatchObject({
      protocolVersion: "2026-07-28",
      eras: ["2026-07-28", "2025-11-25"],
    });
    expect(await eras(ids.conformance)).toMatchObject({ eras: ["2026-07-28", "2025-11-25"] });
    expect(await eras(ids.legacy)).toMatchObject({
      protocolVersion: "2025-11-25",
      eras: ["2025-11-25"],
    });
    // The 2025 surface was asked once (its initialize), by the probe.
    expect(split.methods.legacy.initialize).toBeGreaterThanOrEqual(1);
  });
});
