/**
 * The published `@modelcontextprotocol/server-everything` in stdio mode, run by the runner as a child:
 * registered through the admin API it becomes `connected` with its tools (probed by the worker through
 * the runner's HTTP face), its tools are called through `POST /v1/tools/{name}/call`, and its env-printing
 * tool shows the configured env and nothing of the runner's own (AWS credentials, admin and runner tokens).
 */
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import {
  createServer,
  environ,
  everythingEntry,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  textOf,
  uniqueName,
} from "./helpers";

const tag = randomBytes(6).toString("hex");
const RUNNER_TOKEN = `runner-token-sentinel-${tag}`;
/**
 * Planted in the test process (the runner's) environment: none of it may reach a child — nor the
 * emulator key the runner signs with (already in the environment: the emulator takes no other).
 */
const PLANTED: Record<string, string> = {
  AWS_CANARY_CREDENTIAL: `aws-canary-sentinel-${tag}`,
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  RUNNER_TOKEN,
  MCPGW_RUNNER_ONLY: `runner-only-sentinel-${tag}`,
};
const CONFIGURED = { GREETING: `hello-${tag}`, API_KEY: `configured-key-${tag}` };
const ALLOWED = new Set(["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "HOME", "TMPDIR"]);

describe("runner: server-everything over stdio", () => {
  let stack: RunnerStack;
  let id: string;
  const name = uniqueName("evstdio");
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const [key, value] of Object.entries(PLANTED)) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
    // The runner reads process.env (runnerEnv defaults to it), like the real process does.
    stack = await startRunnerStack({ token: RUNNER_TOKEN });
    id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [everythingEntry(), "stdio"],
      env: CONFIGURED,
    });
  });

  afterAll(async () => {
    await stack?.cleanup();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("becomes connected with its tools", async () => {
    const status = await reaches(stack, id, "connected", 30_000);
    expect(status.toolCount).toBeGreaterThanOrEqual(10);
    const tools = await stack.call("GET", `/v1/servers/${id}/tools`);
    expect(tools.status).toBe(200);
    const names = (tools.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-env"]));
    expect(names).toHaveLength(status.toolCount);
    // One child for the server, shared by the worker's probe and every later call.
    expect((await stack.instances()).filter((i) => i.serverId === id)).toHaveLength(1);
  });

  it("its tools are called through POST /v1/tools/{name}/call", async () => {
    await reaches(stack, id, "connected", 30_000);
    const pid = await pidOf(stack, id);
    const echo = await stack.callTool(`${name}__echo`, { message: "through the runner" });
    expect(echo).toEqual({
      status: 200,
      body: {
        content: [{ type: "text", text: "Echo: through the runner" }],
        text: "Echo: through the runner",
        isError: false,
      },
    });
    const sum = await stack.callTool(`${name}__get-sum`, { a: 19, b: 23 });
    expect(sum.status).toBe(200);
    expect(sum.body).toMatchObject({ text: "The sum of 19 and 23 is 42.", isError: false });
    // Still the same child: calls reuse it.
    expect(await pidOf(stack, id)).toBe(pid);
  });

  it("get-env shows the configured env and none of the runner's own", async () => {
    await reaches(stack, id, "connected", 30_000);
    const response = await stack.callTool(`${name}__get-env`);
    expect(response.status).toBe(200);
    const env = JSON.parse(textOf(response.body)) as Record<string, string>;
    expect(env).toMatchObject(CONFIGURED);
    expect(Object.keys(env).filter((key) => !ALLOWED.has(key) && !(key in CONFIGURED))).toEqual([]);
    expect(Object.keys(env).filter((key) => key.startsWith("AWS_"))).toEqual([]);
    expect(env.PATH).toBe(process.env.PATH);
    // HOME and TMPDIR are the instance's own temp dir under the runner's temp root.
    expect(env.HOME).toBe(env.TMPDIR);
    expect(dirname(env.HOME as string)).toBe(stack.tempRoot);
    const text = JSON.stringify(env);
    const awsKey = [process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY].filter(
      Boolean,
    ) as string[];
    expect(awsKey).toHaveLength(2);
    for (const value of [...Object.values(PLANTED), ...awsKey, "AWS_"]) expect(text).not.toContain(value);
    // The same seen from outside: the child's real environment.
    const pid = await pidOf(stack, id);
    expect(environ(pid)).toEqual(env);
  });
});
