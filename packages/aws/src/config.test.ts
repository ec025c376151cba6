import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CREDENTIAL_ENV_VARS,
  DEFAULT_CALLER_LIMITS,
  DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES,
  loadAppSettings,
  loadAwsConfig,
  loadRunnerSettings,
  MAX_STDIO_MESSAGE_BYTES,
  removeCredentialsFromEnv,
  serviceEndpoint,
} from "./config";
import { ConfigError } from "./env-reader";

describe("emulator endpoints", () => {
  const env = {
    AWS_ENDPOINT_URL: "http://127.0.0.1:5000",
    AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:4566",
    AWS_ENDPOINT_URL_KMS: "http://127.0.0.1:4567",
  };

  it.each([
    ["dynamodb", env.AWS_ENDPOINT_URL],
    ["sqs", env.AWS_ENDPOINT_URL_SQS],
    ["kms", env.AWS_ENDPOINT_URL_KMS],
  ] as const)(
    "reach %s at its own AWS_ENDPOINT_URL_<SERVICE>, else at AWS_ENDPOINT_URL (%s)",
    (service, url) => {
      expect(serviceEndpoint(loadAwsConfig(env), service)).toBe(url);
    },
  );

  it("are none on AWS", () => {
    expect(serviceEndpoint(loadAwsConfig({}), "dynamodb")).toBeUndefined();
  });
});

describe("credentials leave the environment once read", () => {
  it("captures static AWS keys in the config, so clients keep them after the env is cleared", () => {
    const env: Record<string, string | undefined> = {
      AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "secret-example",
      AWS_SESSION_TOKEN: "session-example",
      RUNNER_TOKEN: "runner-token",
      PATH: "/usr/bin",
    };

    const config = loadAwsConfig(env);
    removeCredentialsFromEnv(env);

    expect(config.credentials).toEqual({
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "secret-example",
      sessionToken: "session-example",
    });
    expect(env).toEqual({ PATH: "/usr/bin" });
  });

  it("captures the ECS container-credentials endpoint as a provider (its path never read again)", () => {
    const env: Record<string, string | undefined> = {
      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "/v2/credentials/x",
    };

    const config = loadAwsConfig(env);
    removeCredentialsFromEnv(env);

    expect(typeof config.credentials).toBe("function");
    expect(env).toEqual({});
  });

  it("leaves the SDK's default chain when the environment names no credentials", () => {
    expect(loadAwsConfig({}).credentials).toBeUndefined();
  });

  it("removes every credential variable it knows, and nothing else", () => {
    const env: Record<string, string | undefined> = Object.fromEntries(
      [...CREDENTIAL_ENV_VARS, "HOME", "LANG"].map((name) => [name, "x"]),
    );

    removeCredentialsFromEnv(env);

    expect(Object.keys(env).sort()).toEqual(["HOME", "LANG"]);
  });
});

describe("message bounds", () => {
  it("MAX_UPSTREAM_MESSAGE_BYTES defaults to 16 MiB and takes a positive integer", () => {
    expect(loadAppSettings({}).maxUpstreamMessageBytes).toBe(DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES);
    expect(loadAppSettings({ MAX_UPSTREAM_MESSAGE_BYTES: "1048576" }).maxUpstreamMessageBytes).toBe(
      1_048_576,
    );
  });

  it("a child's stdout line is bounded by it, and never above the SDK's 10 MiB stdio bound", () => {
    expect(loadRunnerSettings({}).maxMessageBytes).toBe(MAX_STDIO_MESSAGE_BYTES);
    expect(loadRunnerSettings({ MAX_UPSTREAM_MESSAGE_BYTES: "65536" }).maxMessageBytes).toBe(65_536);
  });

  it("a fleet runner reads its lease, memory bound and drain (15 s, 85 %, 10 s unset); bad values name their variable", () => {
    expect(loadRunnerSettings({}).fleet).toBeUndefined();
    expect(loadRunnerSettings({ RUNNER_FLEET: "true" }).fleet).toEqual({
      advertiseUrl: undefined,
      leaseMs: 15_000,
      memoryHigh: 0.85,
      drainMs: 10_000,
    });
    expect(
      loadRunnerSettings({
        RUNNER_FLEET: "true",
        RUNNER_MEMORY_HIGH_PERCENT: "70",
        RUNNER_DRAIN_SECONDS: "0",
      }).fleet,
    ).toMatchObject({ memoryHigh: 0.7, drainMs: 0 });
    expect(() => loadRunnerSettings({ RUNNER_FLEET: "true", RUNNER_MEMORY_HIGH_PERCENT: "120" })).toThrow(
      /RUNNER_MEMORY_HIGH_PERCENT/,
    );
    expect(() => loadRunnerSettings({ RUNNER_FLEET: "true", RUNNER_DRAIN_SECONDS: "25" })).toThrow(
      /RUNNER_DRAIN_SECONDS/,
    );
  });

  it("the runner holds at most RUNNER_CHILD_REPLY_BUDGET_MIB of one child's unsent replies (64 MiB unset)", () => {
    expect(loadRunnerSettings({}).childReplyBudgetBytes).toBe(64 * 1024 * 1024);
    expect(loadRunnerSettings({ RUNNER_CHILD_REPLY_BUDGET_MIB: "8" }).childReplyBudgetBytes).toBe(
      8 * 1024 * 1024,
    );
    expect(() => loadRunnerSettings({ RUNNER_CHILD_REPLY_BUDGET_MIB: "0" })).toThrow(
      /RUNNER_CHILD_REPLY_BUDGET_MIB/,
    );
  });
});

describe("caller limits", () => {
  it("default to limits no ordinary client reaches, and each takes a positive integer", () => {
    expect(loadAppSettings({}).callerLimits).toEqual(DEFAULT_CALLER_LIMITS);
    expect(
      loadAppSettings({
        CALLER_RATE_LIMIT: "600",
        CALLER_RATE_BURST: "60",
        CALLER_MAX_CONCURRENT_CALLS: "16",
        CALLER_MAX_SESSIONS: "8",
        CALLER_MAX_STREAMS: "4",
      }).callerLimits,
    ).toEqual({ perMinute: 600, burst: 60, concurrent: 16, sessions: 8, streams: 4 });
    expect(() => loadAppSettings({ CALLER_RATE_LIMIT: "0" })).toThrow(/CALLER_RATE_LIMIT/);
    expect(() => loadAppSettings({ CALLER_MAX_STREAMS: "many" })).toThrow(/CALLER_MAX_STREAMS/);
  });
});

describe("pinning", () => {
  it("PINNING_DEFAULT is approve unless set to auto or off", () => {
    expect(loadAppSettings({}).pinningDefault).toBe("approve");
    expect(loadAppSettings({ PINNING_DEFAULT: "off" }).pinningDefault).toBe("off");
    expect(() => loadAppSettings({ PINNING_DEFAULT: "never" })).toThrow(/PINNING_DEFAULT/);
  });
});

describe("audit", () => {
  it("AUDIT_SINK is table unless log or off; AUDIT_RETENTION_DAYS is 30 unless a whole number of days", () => {
    expect(loadAppSettings({}).audit).toEqual({ sink: "table", retentionDays: 30 });
    expect(loadAppSettings({ AUDIT_SINK: "log", AUDIT_RETENTION_DAYS: "90" }).audit).toEqual({
      sink: "log",
      retentionDays: 90,
    });
    expect(loadAppSettings({ AUDIT_SINK: "off" }).audit.sink).toBe("off");
    expect(() => loadAppSettings({ AUDIT_SINK: "s3" })).toThrow(/AUDIT_SINK/);
    expect(() => loadAppSettings({ AUDIT_RETENTION_DAYS: "0" })).toThrow(/AUDIT_RETENTION_DAYS/);
    expect(() => loadAppSettings({ AUDIT_RETENTION_DAYS: "a month" })).toThrow(/AUDIT_RETENTION_DAYS/);
  });
});

describe("child limits", () => {
  it("default to 3600 CPU seconds, 2048 MiB and 512 processes; each may be set, 0 being none", () => {
    expect(loadRunnerSettings({}).childLimits).toEqual({
      cpuSeconds: 3_600,
      memoryMiB: 2_048,
      processes: 512,
    });
    expect(
      loadRunnerSettings({ CHILD_CPU_SECONDS: "0", CHILD_MEMORY_MIB: "256", CHILD_MAX_PROCESSES: "64" })
        .childLimits,
    ).toEqual({ cpuSeconds: 0, memoryMiB: 256, processes: 64 });
  });
});

describe("configuration fails fast", () => {
  it.each([
    ["SWEEP_INTERVAL_SECONDS", "abc", () => loadAppSettings({ SWEEP_INTERVAL_SECONDS: "abc" })],
    ["SWEEP_INTERVAL_SECONDS", "0", () => loadAppSettings({ SWEEP_INTERVAL_SECONDS: "0" })],
    ["MAX_UPSTREAM_MESSAGE_BYTES", "16MB", () => loadAppSettings({ MAX_UPSTREAM_MESSAGE_BYTES: "16MB" })],
    ["LOG_LEVEL", "loud", () => loadAppSettings({ LOG_LEVEL: "loud" })],
    ["ALLOW_PRIVATE_UPSTREAMS", "sure", () => loadAppSettings({ ALLOW_PRIVATE_UPSTREAMS: "sure" })],
    [
      "MCP_ALLOWED_ORIGINS",
      "app.example.com",
      () => loadAppSettings({ MCP_ALLOWED_ORIGINS: "app.example.com" }),
    ],
    ["WORKTREE_BASE", "relative/dir", () => loadAppSettings({ WORKTREE_BASE: "relative/dir" })],
    ["RUNNER_URL", "not a url", () => loadAppSettings({ RUNNER_URL: "not a url", RUNNER_TOKEN: "t" })],
    ["OAUTH_ISSUER", "gw.example.com", () => loadAppSettings({ OAUTH_ISSUER: "gw.example.com" })],
    ["PORT", "80000", () => loadRunnerSettings({ PORT: "80000" })],
    ["RUNNER_MAX_CHILDREN", "-1", () => loadRunnerSettings({ RUNNER_MAX_CHILDREN: "-1" })],
    ["RUNNER_UID_BASE", "12", () => loadRunnerSettings({ RUNNER_UID_BASE: "12" })],
    ["CHILD_MEMORY_MIB", "1G", () => loadRunnerSettings({ CHILD_MEMORY_MIB: "1G" })],
    ["AWS_ENDPOINT_URL", "localhost:4566", () => loadAwsConfig({ AWS_ENDPOINT_URL: "localhost:4566" })],
    [
      "AWS_ENDPOINT_URL_SQS",
      "localhost:4566",
      () => loadAwsConfig({ AWS_ENDPOINT_URL_SQS: "localhost:4566" }),
    ],
  ])("%s=%s stops the start with a ConfigError naming the variable", (name, value, load) => {
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`${name} .*\\(got '${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}'\\)`));
  });

  it("reports every bad variable at once", () => {
    expect(() => loadAppSettings({ SWEEP_INTERVAL_SECONDS: "x", LOG_LEVEL: "loud" })).toThrow(
      /SWEEP_INTERVAL_SECONDS .*; LOG_LEVEL /,
    );
  });

  it("reads good values as typed values, defaults when unset", () => {
    const settings = loadAppSettings({
      SWEEP_INTERVAL_SECONDS: "30",
      ALLOW_PRIVATE_UPSTREAMS: "yes",
      MCP_ALLOWED_ORIGINS: "https://App.example.com/, http://localhost:5173",
      WORKTREE_BASE: "/srv/wt/../work",
      OAUTH_ISSUER: "https://gw.example.com/",
    });

    expect(settings).toMatchObject({
      sweepIntervalSeconds: 30,
      allowPrivateUpstreams: true,
      logLevel: "info",
      mcpAllowedOrigins: ["https://app.example.com", "http://localhost:5173"],
      worktreeBase: "/srv/work",
      oauthIssuer: "https://gw.example.com",
    });
    expect(loadAppSettings({}).oauthIssuer).toBeUndefined();
  });

  it("WORKTREE_BASE defaults to mcpgw-worktrees under RUNNER_TEMP_DIR (else the OS temp dir), for the API and the runner alike", () => {
    expect(loadAppSettings({}).worktreeBase).toBe(join(tmpdir(), "mcpgw-worktrees"));
    expect(loadRunnerSettings({}).worktreeBase).toBe(join(tmpdir(), "mcpgw-worktrees"));
    const env = { RUNNER_TEMP_DIR: "/var/lib/runner" };
    expect(loadAppSettings(env).worktreeBase).toBe("/var/lib/runner/mcpgw-worktrees");
    expect(loadRunnerSettings(env).worktreeBase).toBe("/var/lib/runner/mcpgw-worktrees");
    expect(loadRunnerSettings({ ...env, WORKTREE_BASE: "/srv/wt/" }).worktreeBase).toBe("/srv/wt");
  });
});

describe("the OpenID provider settings", () => {
  it("are off without OIDC_ISSUER, and read with their defaults when it is set", () => {
    const settings = loadAppSettings({
      OIDC_ISSUER: "https://login.example.com/tenant/v2.0",
      OIDC_CLIENT_ID: "gw",
      OIDC_CLIENT_SECRET: "s3cret",
      CONSOLE_ADMIN_GROUP: "gw-admins",
      CONSOLE_ADMINS: " 0b1c5a7e ,boss@example.com,",
    });

    expect(loadAppSettings({}).oidc).toBeUndefined();
    expect(loadAppSettings({}).consoleAdmins).toEqual({ group: undefined, users: [] });
    expect(settings.oidc).toEqual({
      issuer: "https://login.example.com/tenant/v2.0",
      clientId: "gw",
      clientSecret: "s3cret",
      groupsClaim: "groups",
      providerName: "login.example.com",
      tokenAuthMethod: "client_secret_basic",
    });
    expect(settings.consoleAdmins).toEqual({ group: "gw-admins", users: ["0b1c5a7e", "boss@example.com"] });
  });

  it("take Cognito's groups claim, a display name, and an http issuer on a loopback host only", () => {
    const cognito = loadAppSettings({
      OIDC_ISSUER: "http://127.0.0.1:9999",
      OIDC_CLIENT_ID: "gw",
      OIDC_GROUPS_CLAIM: "cognito:groups",
      OIDC_PROVIDER_NAME: "Cognito",
      OIDC_TOKEN_AUTH_METHOD: "client_secret_post",
    });

    expect(cognito.oidc).toMatchObject({
      groupsClaim: "cognito:groups",
      providerName: "Cognito",
      tokenAuthMethod: "client_secret_post",
    });
    expect(cognito.oidc?.clientSecret).toBeUndefined();
    expect(() => loadAppSettings({ OIDC_ISSUER: "http://idp.example.com", OIDC_CLIENT_ID: "gw" })).toThrow(
      /OIDC_ISSUER must be https/,
    );
  });

  it("fail fast on an issuer without a client id, a client id without an issuer, or a bad claim name", () => {
    expect(() => loadAppSettings({ OIDC_ISSUER: "https://idp.example.com" })).toThrow(
      /OIDC_CLIENT_ID must be set/,
    );
    expect(() => loadAppSettings({ OIDC_CLIENT_ID: "gw" })).toThrow(/OIDC_ISSUER must be set/);
    expect(() => loadAppSettings({ OIDC_ISSUER: "not a url", OIDC_CLIENT_ID: "gw" })).toThrow(/OIDC_ISSUER/);
    expect(() =>
      loadAppSettings({
        OIDC_ISSUER: "https://idp.example.com",
        OIDC_CLIENT_ID: "gw",
        OIDC_GROUPS_CLAIM: "a b",
      }),
    ).toThrow(/OIDC_GROUPS_CLAIM/);
    expect(() =>
      loadAppSettings({
        OIDC_ISSUER: "https://idp.example.com",
        OIDC_CLIENT_ID: "gw",
        OIDC_TOKEN_AUTH_METHOD: "private_key_jwt",
      }),
    ).toThrow(/OIDC_TOKEN_AUTH_METHOD must be one of client_secret_basic, client_secret_post/);
  });

  it("count the client secret as a credential: it leaves the environment once read", () => {
    expect(CREDENTIAL_ENV_VARS).toContain("OIDC_CLIENT_SECRET");
    expect(CREDENTIAL_ENV_VARS).toContain("SST_RESOURCE_Oidc");
  });
});

describe("search mode", () => {
  it("SEARCH_MODE_THRESHOLD defaults to 64 tools and takes a non-negative integer", () => {
    expect(loadAppSettings({}).searchModeThreshold).toBe(64);
    expect(loadAppSettings({ SEARCH_MODE_THRESHOLD: "0" }).searchModeThreshold).toBe(0);
    expect(() => loadAppSettings({ SEARCH_MODE_THRESHOLD: "-1" })).toThrow(/SEARCH_MODE_THRESHOLD/);
  });
});
