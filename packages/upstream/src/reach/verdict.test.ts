import { describe, expect, it } from "vitest";
import { CallFailure } from "../call";
import {
  callFailureVerdict,
  credentialMode,
  credentialOutcome,
  noCredentialVerdict,
  noRunnerVerdict,
  openFailure,
  openFailureVerdict,
} from "./verdict";

/** An HTTP refusal as the MCP SDK's streamable HTTP transport throws it. */
const refusal = (code: number) =>
  Object.assign(new Error(`Streamable HTTP error: Error POSTing to endpoint (HTTP ${code})`), { code });
const refused401 = () => refusal(401);
const refused403 = () => refusal(403);
const timedOut = () => Object.assign(new Error("no answer"), { name: "TimeoutError" });
const http = { transport: "http" as const, id: "s1", url: "https://mcp.example.com/mcp", headers: {} };

describe("credentialMode", () => {
  it("names how the gateway authenticates at each kind of server", () => {
    expect(credentialMode({ transport: "stdio", id: "s1" })).toBe("none");
    expect(credentialMode(http)).toBe("none");
    expect(credentialMode({ ...http, auth: { type: "oauth", mode: "shared" } })).toBe("shared");
    expect(credentialMode({ ...http, auth: { type: "oauth", mode: "per_user" } })).toBe("per_user");
    expect(
      credentialMode({ ...http, auth: { type: "client_credentials", clientId: "c", clientSecret: "s" } }),
    ).toBe("client_credentials");
  });
});

describe("openFailureVerdict", () => {
  it("a per-user caller's token refused (401) is theirs to renew: they must authorize", () => {
    const verdict = openFailureVerdict(refused401(), {
      mode: "per_user",
      subject: "user:ann",
      message: "401",
    });

    expect(verdict).toMatchObject({
      reason: "access_denied",
      authorization: "required",
      scope: "caller",
      retryable: false,
    });
  });

  it("a per-user caller refused with 403 gets the upstream's answer, not an authorization", () => {
    const verdict = openFailureVerdict(refused403(), {
      mode: "per_user",
      subject: "user:ann",
      message: "403",
    });

    expect(verdict.scope).toBe("caller");
    expect(verdict.authorization).toBeUndefined();
  });

  it("the shared token refused marks the server: an admin must authorize again", () => {
    const verdict = openFailureVerdict(refused401(), { mode: "shared", message: "refused" });

    expect(verdict).toMatchObject({ reason: "access_denied", authorization: "required", scope: "server" });
    expect(credentialOutcome(verdict)).toEqual({ authorization: "required" });
  });

  it("a machine client's token refused asks no one to authorize (the worker grants anew)", () => {
    const verdict = openFailureVerdict(refused401(), { mode: "client_credentials", message: "refused" });

    expect(verdict).toMatchObject({ reason: "access_denied", scope: "server" });
    expect(verdict.authorization).toBeUndefined();
  });

  it("a transport timeout is not_responding, retryable, and a timeout for the caller", () => {
    const verdict = openFailureVerdict(timedOut(), { mode: "none", message: "slow" });

    expect(verdict).toMatchObject({ reason: "not_responding", retryable: true, scope: "server" });
    expect(openFailure(verdict).kind).toBe("timeout");
  });
});

describe("noCredentialVerdict", () => {
  it("no shared credential: authorization required, nothing expires", () => {
    expect(noCredentialVerdict({ id: "s1", name: "docs" }, "shared")).toMatchObject({
      reason: "access_denied",
      authorization: "required",
      credentialExpiresAt: null,
      retryable: false,
      scope: "server",
    });
  });

  it("no machine-client token: the worker's next grant, no authorize step", () => {
    const verdict = noCredentialVerdict({ id: "s1", name: "docs" }, "client_credentials");

    expect(verdict.authorization).toBeUndefined();
    expect(verdict.error).toMatch(/client_credentials grant at its next probe/);
  });
});

describe("callFailureVerdict", () => {
  it("a call timing out on a warm session would mark the server not_responding", () => {
    const verdict = callFailureVerdict(new CallFailure("timeout", "late", { cause: timedOut() }), {});

    expect(verdict).toMatchObject({ reason: "not_responding", retryable: true, scope: "server" });
  });

  it("a per-user caller's token revoked mid-session asks that caller to authorize, not the server", () => {
    const failure = new CallFailure("unreachable", "refused", { cause: refused401() });

    expect(callFailureVerdict(failure, { subject: "key:k1" })).toMatchObject({
      authorization: "required",
      scope: "caller",
    });
  });

  it("an HTTP refusal on a shared server names its reason; a lost connection is unreachable", () => {
    const refused = new CallFailure("unreachable", "refused", { cause: refused403() });
    const lost = new CallFailure("unreachable", "gone", { cause: new Error("socket hang up") });

    expect(callFailureVerdict(refused, {}).reason).toBe("access_denied");
    expect(callFailureVerdict(lost, {})).toMatchObject({ reason: "unreachable", retryable: true });
  });
});

describe("noRunnerVerdict", () => {
  it("a stdio server with no runner failed, and trying again changes nothing", () => {
    expect(noRunnerVerdict()).toMatchObject({ reason: "failed", retryable: false, scope: "server" });
  });
});
