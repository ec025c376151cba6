/**
 * Proves the e2e test clients (tests/mcp/clients.ts) directly against upstreams, without the gateway:
 * the 2026-07-28-only fixture (tests/fixtures/modern-upstream.ts), the published server-everything in
 * streamable-HTTP mode (2025 only), and the 2025 test upstream (tests/fixtures/mcp-upstream.ts) for
 * list_changed on a session's GET stream.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream } from "../fixtures/mcp-upstream";
import { MODERN_APP_URI, type ModernUpstream, startModernUpstream } from "../fixtures/modern-upstream";
import {
  type ClientFlavour,
  connectTestClient,
  formAnswer,
  SAMPLING_MODEL,
  type TestClient,
  textOf,
} from "./clients";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function connect(flavour: ClientFlavour, url: string): Promise<TestClient> {
  const client = await connectTestClient(flavour, url);
  cleanups.push(() => client.close());
  return client;
}

describe("the fixed answers", () => {
  it("fill every field of a form from its schema", () => {
    expect(
      formAnswer({
        type: "object",
        properties: {
          answer: { type: "string" },
          email: { type: "string", format: "email" },
          pick: { type: "string", oneOf: [{ const: "a" }, { const: "b" }] },
          level: { type: "integer", minimum: 50, maximum: 60 },
          ok: { type: "boolean" },
          many: { type: "array", items: { type: "string", enum: ["x", "y"] } },
          kept: { type: "string", default: "the default" },
        },
      }),
    ).toEqual({
      answer: "yes",
      email: "e2e@example.com",
      pick: "a",
      level: 50,
      ok: true,
      many: ["x"],
      kept: "the default",
    });
  });
});

describe("SDK v2 clients against the 2026-07-28-only upstream", () => {
  let upstream: ModernUpstream;
  beforeAll(async () => {
    upstream = await startModernUpstream();
  });
  afterAll(() => upstream?.close());

  for (const flavour of ["v2-modern", "v2-auto"] as const) {
    it(`${flavour}: negotiates 2026-07-28 and sees the app tool's _meta.ui and icons`, async () => {
      const client = await connect(flavour, upstream.url);
      expect(client.era).toBe("modern");
      expect(client.protocolVersion).toBe("2026-07-28");
      const app = (await client.listTools()).find((tool) => tool.name === "show_app");
      expect(app?._meta).toEqual({ ui: { resourceUri: MODERN_APP_URI } });
      expect(app?.icons).toEqual([expect.objectContaining({ mimeType: "image/png" })]);
    });

    it(`${flavour}: collects a call's progress notifications`, async () => {
      const client = await connect(flavour, upstream.url);
      const { result, progress } = await client.callTool("progress", { steps: 4, ms: 20 });
      expect(textOf(result)).toBe("done after 4 steps");
      expect(progress.map((p) => `${p.progress}/${p.total}`)).toEqual(["1/4", "2/4", "3/4", "4/4"]);
    });

    it(`${flavour}: answers multi round-trip elicitation (form and URL) and sampling`, async () => {
      const client = await connect(flavour, upstream.url);
      const confirm = await client.callTool("confirm", { question: "Ship it?" });
      expect(textOf(confirm.result)).toBe("confirmed: yes");
      const summary = await client.callTool("summarize", { text: "a long story" });
      expect(textOf(summary.result)).toBe("summary: echo: Summarize: a long story");
      const link = await client.callTool("open_link", { url: "https://example.com/consent" });
      expect(textOf(link.result)).toBe("link accept: https://example.com/consent");
      expect(
        client.asked.map((a) => [a.method, a.params.mode ?? null, a.answer.action ?? a.answer.model]),
      ).toEqual([
        ["elicitation/create", "form", "accept"],
        ["sampling/createMessage", null, SAMPLING_MODEL],
        ["elicitation/create", "url", "accept"],
      ]);
    });

    it(`${flavour}: hears tools/list_changed on a subscriptions/listen stream`, async () => {
      const client = await connect(flavour, upstream.url);
      await client.watchToolsListChanged();
      await vi.waitFor(() => expect(upstream.openListens).toBeGreaterThan(0), { timeout: 2_000 });
      const name = `late_${flavour.replace("-", "_")}`;
      upstream.addTool(name);
      await client.waitForToolsListChanged(1);
      expect((await client.listTools()).map((tool) => tool.name)).toContain(name);
    });
  }

  it("v1 (2025 only) is refused by the 2026-07-28-only upstream", async () => {
    const refusedBefore = upstream.legacyRefused;
    await expect(connect("v1", upstream.url)).rejects.toThrow();
    expect(upstream.legacyRefused).toBeGreaterThan(refusedBefore);
  });
});

describe("SDK v1 and v2 (auto) clients against server-everything (2025 only)", () => {
  let everything: Everything;
  beforeAll(async () => {
    everything = await startEverything();
  }, 30_000);
  afterAll(() => everything?.stop());

  for (const flavour of ["v1", "v2-auto"] as const) {
    it(`${flavour}: holds a 2025-11-25 session and collects ≥ 3 progress notifications`, async () => {
      const client = await connect(flavour, everything.url);
      expect(client.era).toBe("legacy");
      expect(client.protocolVersion).toBe("2025-11-25");
      const { result, progress } = await client.callTool("trigger-long-running-operation", {
        duration: 0.6,
        steps: 3,
      });
      expect(textOf(result)).toContain("Long running operation completed");
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.at(-1)).toMatchObject({ progress: 3, total: 3 });
    });

    it(`${flavour}: answers the pushed elicitation and sampling requests`, async () => {
      const client = await connect(flavour, everything.url);
      const elicited = await client.callTool("trigger-elicitation-request");
      expect(textOf(elicited.result)).toContain("User provided the requested information");
      expect(textOf(elicited.result)).toContain("- Name: yes");
      const sampled = await client.callTool("trigger-sampling-request", { prompt: "ping" });
      expect(textOf(sampled.result)).toContain("echo: Resource trigger-sampling-request context: ping");
      expect(textOf(sampled.result)).toContain(SAMPLING_MODEL);
      expect(client.asked.map((a) => a.method)).toEqual(["elicitation/create", "sampling/createMessage"]);
    });
  }
});

describe("list_changed on a 2025 session's GET stream", () => {
  for (const flavour of ["v1", "v2-auto"] as const)
    it(`${flavour}: hears tools/list_changed from a 2025 upstream`, async () => {
      const upstream = await startUpstream();
      cleanups.push(() => upstream.close());
      const client = await connect(flavour, upstream.url);
      expect(client.era).toBe("legacy");
      await client.watchToolsListChanged();
      // The GET stream opens asynchronously after initialize: announce until it is heard.
      let added = 0;
      await vi.waitFor(
        () => {
          upstream.addTool(`late_${added++}`);
          expect(client.toolsListChanged).toBeGreaterThan(0);
        },
        { timeout: 3_000, interval: 100 },
      );
    });
});
