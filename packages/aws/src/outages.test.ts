import { createLogger } from "@mcpgw/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createOutageLog, outageOf } from "./outages";

const config = {
  tableName: "mcp-gateway",
  queueName: "mcp-gateway-jobs",
  queueUrl: undefined,
  keyId: "alias/mcp-gateway",
};

/** An error shaped as the AWS SDK's service errors are: a name and the response's `$metadata`. */
function named(name: string, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) });
  return { lines, logger };
}

describe("outageOf", () => {
  it("names the dependency of DynamoDB's, SQS's and KMS's not-found errors, through causes", () => {
    expect(outageOf(named("ResourceNotFoundException"))).toMatchObject({
      dependency: "table",
      outage: "missing",
    });
    const queueError = new Error("Could not enqueue a connect job", {
      cause: named("QueueDoesNotExist"),
    });
    expect(outageOf(queueError)).toMatchObject({ dependency: "queue", outage: "missing" });
    expect(outageOf(new Error("sealing", { cause: named("KMSInvalidStateException") }))).toMatchObject({
      dependency: "key",
      outage: "unusable",
    });
    expect(outageOf(named("NotFoundException"))).toMatchObject({ dependency: "key", outage: "missing" });
  });

  it("is undefined for any other error", () => {
    expect(outageOf(new Error("connect ECONNREFUSED 127.0.0.1:4566"))).toBeUndefined();
    expect(outageOf(named("AccessDeniedException"))).toBeUndefined();
    // Not from AWS (no $metadata): another library's NotFoundException is no missing key.
    expect(outageOf(Object.assign(new Error("nope"), { name: "NotFoundException" }))).toBeUndefined();
    expect(outageOf("not an error")).toBeUndefined();
  });
});

describe("the outage log", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("logs one clear line per missing resource per interval, however many report it", () => {
    // Prepare
    const { lines, logger } = capture();
    const outages = createOutageLog(config, 30_000);

    // Act: 4 reports a second for 95 s
    for (let second = 0; second < 95; second++) {
      for (let i = 0; i < 4; i++) outages.report(logger, named("QueueDoesNotExist"));
      vi.advanceTimersByTime(1_000);
    }

    // Assess: at 0, 30, 60 and 90 s
    expect(lines.map((line) => line.msg)).toEqual(
      Array(4).fill("job queue mcp-gateway-jobs does not exist; waiting for it"),
    );
    expect(lines[0]).toMatchObject({ level: "error", dependency: "queue", error: "QueueDoesNotExist" });
  });

  it("keeps one interval per dependency, and says which key state it is", () => {
    const { lines, logger } = capture();
    const outages = createOutageLog(config, 30_000);

    outages.report(logger, named("ResourceNotFoundException"));
    outages.report(logger, named("ResourceNotFoundException"));
    outages.note(logger, "key", "unusable");

    expect(lines.map((line) => line.msg)).toEqual([
      "table mcp-gateway does not exist; waiting for it",
      "KMS key alias/mcp-gateway is disabled or pending deletion; waiting for it",
    ]);
    expect(outages.current().sort()).toEqual(["key", "table"]);
  });

  it("logs a recovered resource once, and its next outage at once", () => {
    const { lines, logger } = capture();
    const outages = createOutageLog(config, 30_000);

    outages.report(logger, named("ResourceNotFoundException"));
    outages.recovered(logger, "table");
    outages.recovered(logger, "table");
    outages.recovered(logger, "queue");
    outages.report(logger, named("ResourceNotFoundException"));

    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ["error", "table mcp-gateway does not exist; waiting for it"],
      ["info", "table mcp-gateway is back"],
      ["error", "table mcp-gateway does not exist; waiting for it"],
    ]);
  });

  it("returns undefined for other errors and logs nothing (the caller logs them its way)", () => {
    const { lines, logger } = capture();
    const outages = createOutageLog(config);

    expect(outages.report(logger, new Error("boom"))).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it("tells listeners of every outage, logged or not", () => {
    const { logger } = capture();
    const outages = createOutageLog(config, 30_000);
    const heard: string[] = [];
    const stop = outages.onOutage((dependency, outage) => heard.push(`${dependency}:${outage}`));

    outages.report(logger, named("QueueDoesNotExist"));
    outages.report(logger, named("QueueDoesNotExist"));
    stop();
    outages.report(logger, named("QueueDoesNotExist"));

    expect(heard).toEqual(["queue:missing", "queue:missing"]);
  });

  it("names a linked queue by its URL's last segment (its deployed name)", () => {
    const { lines, logger } = capture();
    const outages = createOutageLog({
      ...config,
      queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/prod-JobQueue-abc",
    });

    outages.report(logger, named("QueueDoesNotExist"));

    expect(lines[0]?.msg).toBe("job queue prod-JobQueue-abc does not exist; waiting for it");
  });
});
