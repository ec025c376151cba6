import { describe, expect, it } from "vitest";
import {
  CREDENTIAL_ENV_VARS,
  DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES,
  loadAppSettings,
  loadAwsConfig,
  loadRunnerSettings,
  MAX_STDIO_MESSAGE_BYTES,
  removeCredentialsFromEnv,
} from "./config";

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
});
