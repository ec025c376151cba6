/**
 * One tenant's large replies must not balloon the runner (the process every child shares): 48
 * concurrent calls of a tool answering 8 MiB each, through one stdio server, straight at the runner's
 * face, by callers that read nothing until every answer has started. The runner holds at most its per-child reply budget of replies read from a child and not yet
 * sent; every call is answered with its result or with an error naming the limit, and another server's
 * calls are still answered meanwhile. The runner runs in this process: its RSS growth is sampled here
 * (the test's own client reads each answer as a stream, keeping only its ends).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  HOSTILE_STDIO,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
} from "./helpers";

/** Twice the finding's 24 calls: without a bound the runner's growth doubles with them (measured +560 MiB). */
const CALLS = 48;
const REPLY_MIB = 8;
const BUDGET_MIB = 32;
const MIB = 1024 * 1024;

/** One answer of the face, read as a stream: its size and its first and last bytes. */
interface Answer {
  status: number;
  bytes: number;
  head: string;
  tail: string;
}

describe("runner: memory for large replies", () => {
  let stack: RunnerStack;
  const big = uniqueName("big");
  const tiny = uniqueName("tiny");
  const ids = { big: "", tiny: "" };

  beforeAll(async () => {
    stack = await startRunnerStack({ childReplyBudgetBytes: BUDGET_MIB * MIB });
    [ids.big, ids.tiny] = await Promise.all([
      createServer(stack, { name: big, command: process.execPath, args: [HOSTILE_STDIO] }),
      createServer(stack, { name: tiny, command: process.execPath, args: [TINY_STDIO] }),
    ]);
    await Promise.all([reaches(stack, ids.big, "connected"), reaches(stack, ids.tiny, "connected")]);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /**
   * A 2025 stateless `tools/call` to a server's face, as the gateway makes it: resolves once the answer
   * starts (the runner has the child's reply ready), with a reader for its body.
   */
  async function open(serverId: string, name: string, args: Record<string, unknown>) {
    const runner = stack.runner as NonNullable<RunnerStack["runner"]>;
    const response = await fetch(`${runner.url}/servers/${serverId}/callers/admin/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${runner.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name, arguments: args },
      }),
    });
    return async (): Promise<Answer> => {
      const answer: Answer = { status: response.status, bytes: 0, head: "", tail: "" };
      const decoder = new TextDecoder();
      for await (const chunk of response.body ?? []) {
        const text = decoder.decode(chunk as Uint8Array, { stream: true });
        answer.bytes += (chunk as Uint8Array).byteLength;
        if (answer.head.length < 200) answer.head = (answer.head + text).slice(0, 200);
        answer.tail = (answer.tail + text).slice(-200);
      }
      return answer;
    };
  }

  async function call(serverId: string, name: string, args: Record<string, unknown>): Promise<Answer> {
    return (await open(serverId, name, args))();
  }

  it("48 concurrent 8 MiB replies to slow callers stay within the budget; each is answered or refused by name", async () => {
    // Warm the path once (code, the child's first big answer), then take the baseline.
    const warm = await call(ids.big, "big", { mib: 1 });
    expect(warm.bytes).toBeGreaterThan(MIB);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const started = performance.now();
    const bigCalls = Array.from({ length: CALLS }, () => open(ids.big, "big", { mib: REPLY_MIB }));
    // Another server's calls are answered meanwhile.
    const pinged = await Promise.all(Array.from({ length: 5 }, () => call(ids.tiny, "ping", {})));
    // The callers read nothing until every answer has started: the runner has read every reply.
    const readers = await Promise.all(bigCalls);
    const answers = await Promise.all(readers.map((read) => read()));
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growthMiB = (peak - baseline) / MIB;
    const results = answers.filter((answer) => answer.bytes > REPLY_MIB * MIB);
    const refused = answers.filter((answer) => answer.bytes <= REPLY_MIB * MIB);
    console.log(
      `[runner] ${CALLS} concurrent ${REPLY_MIB} MiB replies through one stdio server ` +
        `(budget ${BUDGET_MIB} MiB): RSS +${growthMiB.toFixed(0)} MiB at peak; ` +
        `${results.length} answered, ${refused.length} refused, in ${(performance.now() - started).toFixed(0)} ms`,
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    for (const answer of refused) expect(answer.head).toContain("reply budget of 32.0 MiB");
    for (const answer of results) {
      expect(answer.head).toContain('{"result":{"content":[{"type":"text","text":"\\"yyy');
      expect(answer.tail).toMatch(/yyy\\""\}\]\}/);
    }
    // The budget holds three 8 MiB replies (a fourth would pass 32 MiB); the rest are refused.
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(BUDGET_MIB / REPLY_MIB);
    for (const answer of pinged) {
      expect(answer.status).toBe(200);
      expect(answer.head).toContain("pong");
    }
    // Measured: +560 MiB without the budget, +116–132 MiB with it (mostly garbage not yet collected).
    expect(growthMiB).toBeLessThan(240);
    // Sent, the replies are no longer held: the next big call is answered in full.
    const after = await call(ids.big, "big", { mib: REPLY_MIB });
    expect(after.bytes).toBeGreaterThan(REPLY_MIB * MIB);
  }, 120_000);
});
