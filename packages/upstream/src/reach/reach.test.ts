import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import type { HeldCredential } from "../oauth-client";
import type { CredentialPort } from "./credential-port";
import { probeServer } from "./probe-server";
import { isVerdict, type ReachDeps, type ReachServer, reach } from "./reach";

/** An in-memory credential store (what the aws store's upstreamCredentials is to reach). */
function memoryCredentials(initial: Record<string, HeldCredential> = {}): CredentialPort & {
  items: Map<string, HeldCredential>;
} {
  const items = new Map(Object.entries(initial));
  return {
    items,
    async get(serverId, subject) {
      return items.get(`${serverId}/${subject}`);
    },
    async held(serverId) {
      return [...items.entries()]
        .filter(([key]) => key.startsWith(`${serverId}/`))
        .map(([key, value]) => ({
          subject: key.split("/")[1] as string,
          expiresAt: value.expiresAt ?? null,
        }));
    },
    async put(serverId, subject, credential) {
      items.set(`${serverId}/${subject}`, credential);
      return true;
    },
    async claimRefresh() {
      return true;
    },
    async releaseRefresh() {},
  };
}

const credential = (accessToken: string, extra: Partial<HeldCredential> = {}): HeldCredential => ({
  accessToken,
  authorizationServer: "https://as.example.com",
  client: { client_id: "gw" },
  ...extra,
});

const deps = (credentials: CredentialPort, fetchFn: typeof fetch = fetch): ReachDeps => ({
  credentials,
  fetch: fetchFn,
  logger: createLogger({ level: "error", sink: () => {} }),
});

const base = {
  transport: "http" as const,
  id: "s1",
  name: "docs",
  url: "https://mcp.example.com/mcp",
  headers: {},
};
const shared: ReachServer = { ...base, auth: { type: "oauth", mode: "shared" } };
const perUser: ReachServer = { ...base, auth: { type: "oauth", mode: "per_user" } };
const machine: ReachServer = {
  ...base,
  auth: {
    type: "client_credentials",
    clientId: "robot",
    clientSecret: "s3cret-value",
    tokenUrl: "https://as.example.com/token",
  },
};

/** A token endpoint that answers every grant with `status` (200: a token). */
function tokenEndpoint(status: number): typeof fetch {
  return (async () =>
    new Response(
      JSON.stringify(
        status === 200
          ? { access_token: "granted", token_type: "Bearer", expires_in: 600 }
          : { error: "invalid_client" },
      ),
      { status, headers: { "content-type": "application/json" } },
    )) as typeof fetch;
}

describe("reach for a call", () => {
  it("a shared server with no credential: the server's verdict, an admin must authorize", async () => {
    const verdict = await reach(deps(memoryCredentials()), { server: shared, purpose: "call" });

    expect(verdict).toMatchObject({
      reason: "access_denied",
      authorization: "required",
      credentialExpiresAt: null,
      scope: "server",
    });
  });

  it("a per-user caller with no credential of their own must authorize (the server is fine)", async () => {
    const verdict = await reach(deps(memoryCredentials()), {
      server: perUser,
      purpose: "call",
      subject: "user:ann",
    });

    expect(verdict).toMatchObject({ authorization: "required", scope: "caller" });
  });

  it("a held credential gives a target whose bearer is asked per request, its secrets to scrub", async () => {
    const reached = await reach(deps(memoryCredentials({ "s1/user:ann": credential("ann-token") })), {
      server: perUser,
      purpose: "call",
      subject: "user:ann",
    });

    if (isVerdict(reached)) throw new Error(reached.error);
    expect(await reached.target.auth?.token()).toBe("ann-token");
    expect(reached.secrets).toContain("ann-token");
  });

  it("a stdio server without a runner: failed, not retryable", async () => {
    const verdict = await reach(deps(memoryCredentials()), {
      server: { transport: "stdio", id: "s2", name: "local" },
      purpose: "call",
    });

    expect(verdict).toMatchObject({ reason: "failed", retryable: false });
  });
});

describe("reach for a probe", () => {
  it("a machine client whose grant is refused: authorization refused (fix the client), secret scrubbed", async () => {
    const verdict = await reach(deps(memoryCredentials(), tokenEndpoint(401)), {
      server: machine,
      purpose: "probe",
    });

    expect(verdict).toMatchObject({ reason: "access_denied", authorization: "refused", scope: "server" });
    expect(isVerdict(verdict) && verdict.error).not.toContain("s3cret-value");
  });

  it("a machine client without a token is granted one, stored, and the probe is a full one", async () => {
    const credentials = memoryCredentials();
    const reached = await reach(deps(credentials, tokenEndpoint(200)), { server: machine, purpose: "probe" });

    expect(reached).toMatchObject({
      renewed: true,
      target: { headers: { authorization: "Bearer granted" } },
    });
    expect(credentials.items.get("s1/shared")?.accessToken).toBe("granted");
  });

  it("a shared token refused again after its renewal: authorization required, never a silent expiry", async () => {
    const held = credential("old", { expiresAt: "2099-01-01T00:00:00.000Z" });
    const credentials = memoryCredentials({ "s1/shared": held });
    const first = await reach(deps(credentials), { server: shared, purpose: "probe" });
    if (isVerdict(first)) throw new Error(first.error);

    const verdict = await reach(deps(credentials), {
      server: shared,
      purpose: "probe",
      refused: { ...first, error: "HTTP 401" },
    });

    expect(verdict).toMatchObject({
      reason: "access_denied",
      authorization: "required",
      credentialExpiresAt: "2099-01-01T00:00:00.000Z",
    });
    expect(isVerdict(verdict) && verdict.error).toMatch(/refused the gateway's token \(HTTP 401\)/);
  });

  it("a shared credential that cannot be opened: authorization required", async () => {
    const credentials = memoryCredentials();
    credentials.get = async () => {
      throw Object.assign(new Error("cannot open"), { name: "SealError" });
    };

    const verdict = await reach(deps(credentials), { server: shared, purpose: "probe" });

    expect(verdict).toMatchObject({
      authorization: "required",
      error: expect.stringMatching(/cannot be opened/),
    });
  });
});

describe("probeServer", () => {
  const answer = (reason?: "access_denied") => {
    const targets: Array<Record<string, string>> = [];
    const attempt = async (target: { headers: Record<string, string> }) => {
      targets.push(target.headers);
      return reason
        ? { ok: false as const, at: "", reason, error: "HTTP 401" }
        : { ok: true as const, at: "", latencyMs: 1, toolCount: 0 };
    };
    return { targets, attempt };
  };

  it("a per-user server no one has authorized: required, with how each user and an admin authorize", async () => {
    const { targets, attempt } = answer();

    const result = await probeServer({ ...deps(memoryCredentials()), attempt }, perUser);

    expect(targets).toEqual([]);
    expect(result).toMatchObject({ ok: false, reason: "access_denied", authorization: "required" });
    expect(!result.ok && result.error).toMatch(/no user has authorized.*each user authorizes their own/);
  });

  it("a shared token the upstream refuses, with no refresh token: tried once, then required", async () => {
    const { targets, attempt } = answer("access_denied");
    const credentials = memoryCredentials({ "s1/shared": credential("old") });

    const result = await probeServer({ ...deps(credentials), attempt }, shared);

    expect(targets).toEqual([{ authorization: "Bearer old" }]);
    expect(result).toMatchObject({ ok: false, authorization: "required", credentialExpiresAt: null });
  });

  it("a server without auth is probed as it is, its status given no credential fields", async () => {
    const { attempt } = answer();

    const result = await probeServer({ ...deps(memoryCredentials()), attempt }, base);

    expect(result).toEqual({ ok: true, at: "", latencyMs: 1, toolCount: 0 });
  });

  it("a stdio server with no runner fails without touching credentials", async () => {
    const { attempt } = answer();

    const result = await probeServer(
      { ...deps(memoryCredentials()), attempt },
      {
        transport: "stdio",
        id: "s2",
        name: "local",
      },
    );

    expect(result).toMatchObject({ ok: false, reason: "failed" });
    expect(result).not.toHaveProperty("credentialExpiresAt");
  });
});
