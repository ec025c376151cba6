import { afterEach, describe, expect, it } from "vitest";
import {
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
} from "./helpers";

describe("the runner behind the outbound guard (as deployed: private upstreams refused)", () => {
  let stack: RunnerStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it("stdio servers still connect and take calls: the runner is the deployment's own endpoint", async () => {
    stack = await startRunnerStack({}, { allowPrivateUpstreams: false });
    const name = uniqueName("private");
    const id = await createServer(stack, { name, command: process.execPath, args: [TINY_STDIO] });

    await reaches(stack, id, "connected");
    const call = await stack.callTool(`${name}__pid`);
    const refused = await stack.call("POST", "/v1/servers", {
      name: uniqueName("loop"),
      url: `${stack.runner!.url}/x`,
    });

    expect(call.status).toBe(200);
    expect(Number(textOf(call.body))).toBeGreaterThan(0);
    // Admin-supplied URLs on the same private address are still refused.
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("server.url_forbidden");
  });
});
