import type { Job } from "@mcpgw/core";
import { processJob } from "@mcpgw/worker";
import { afterEach, describe, expect, it } from "vitest";
import { countAwsCalls } from "../gateway/helpers";
import {
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
} from "./helpers";

describe("stdio servers cost no KMS call once their child runs", () => {
  let stack: RunnerStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it("health probes and cold gateway sessions reach the runner by id, without opening the env", async () => {
    stack = await startRunnerStack();
    const name = uniqueName("kms");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      env: { SEALED_SETTING: "sentinel-kms-value" },
    });
    await reaches(stack, id, "connected");
    const kms = countAwsCalls(stack.store.clients.kms);
    const status = await stack.store.statuses.get(id);
    const probe: Job = { type: "probe", serverId: id, generation: status!.generation };

    for (let i = 0; i < 3; i++) expect(await processJob(stack.worker, probe, `probe-${i}`)).toBe("connected");
    const call = await stack.callTool(`${name}__pid`);

    expect(call.status).toBe(200);
    expect(Number(textOf(call.body))).toBeGreaterThan(0);
    expect(kms.total).toBe(0);
  });
});
