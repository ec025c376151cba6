import { createMemoryStore } from "@mcpgw/aws/memory";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { ConsoleSessions, CSRF_HEADER } from "./session";

/** Sessions over a memory store, started and checked through a small app. */
function sessionsApp() {
  const sessions = new ConsoleSessions(createMemoryStore().consoleSessions, "admin-token-1b9e", [
    "group:admins",
  ]);
  const app = new Hono();
  app.post("/start/token", async (c) => c.json(await sessions.start(c, { via: "token" })));
  app.post("/start/provider", async (c) =>
    c.json(await sessions.start(c, { via: "provider", rule: "group:admins", sub: "ada|42" })),
  );
  app.post("/who", async (c) => c.json({ admin: (await sessions.authenticates(c)) ?? null }));
  const start = async (via: "token" | "provider") => {
    const response = await app.request(`/start/${via}`, { method: "POST" });
    const { csrfToken } = (await response.json()) as { csrfToken: string };
    return { cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "", csrfToken };
  };
  const who = async (session: { cookie: string; csrfToken: string }) => {
    const headers = { cookie: session.cookie, [CSRF_HEADER]: session.csrfToken };
    return ((await (await app.request("/who", { method: "POST", headers })).json()) as { admin: unknown })
      .admin;
  };
  return { app, start, who };
}

describe("ConsoleSessions.authenticates", () => {
  it("names the provider subject a session was signed in as; a token session names none", async () => {
    const { start, who } = sessionsApp();
    expect(await who(await start("provider"))).toEqual({ sub: "ada|42" });
    expect(await who(await start("token"))).toEqual({});
  });

  it("stands for no one without a live session", async () => {
    const { app } = sessionsApp();
    const response = await app.request("/who", { method: "POST", headers: { cookie: "mgw_console=nope" } });
    expect(await response.json()).toEqual({ admin: null });
  });
});
