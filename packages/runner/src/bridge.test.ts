import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ElicitResultSchema, type Result } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { CHILD_SESSION_CAPABILITIES, ChildBridge, type ForwardedCall } from "./bridge";

const FORM = { elicitation: { form: {} } };
const closing: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

/**
 * A 2025-era child over linked in-memory transports, and the runner's bridge to it. Its tools: `ask`
 * elicits and answers with what it got (or the error); `wait` answers once `release()` is called.
 */
async function linkedChild(options: { parkMs?: number; gateWaitMs?: number } = {}) {
  const child = new McpServer({ name: "child", version: "1.0.0" });
  const cancelled: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  child.registerTool("ask", { description: "Elicit" }, async (extra) => {
    extra.signal.addEventListener("abort", () => cancelled.push("ask"));
    const answer = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: { message: "Your name?", requestedSchema: { type: "object", properties: {} } },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  child.registerTool("wait", { description: "Wait" }, async (extra) => {
    extra.signal.addEventListener("abort", () => cancelled.push("wait"));
    await gate;
    return { content: [{ type: "text", text: "waited" }] };
  });
  const [childSide, runnerSide] = InMemoryTransport.createLinkedPair();
  await child.connect(childSide);
  const client = new Client(
    { name: "runner", version: "1.0.0" },
    { capabilities: CHILD_SESSION_CAPABILITIES },
  );
  const bridge = new ChildBridge(client, options);
  await client.connect(runnerSide);
  closing.push(async () => {
    release();
    await client.close();
    await child.close();
  });
  return { bridge, cancelled, release };
}

const attached = () => ({ signal: new AbortController().signal });

function start(
  bridge: ChildBridge,
  tool: string,
  capabilities: object | undefined,
  alive?: () => void,
  caller = "key:a",
) {
  return bridge.start(
    "tools/call",
    { name: tool, arguments: {} },
    { caller, capabilities, timeoutMs: 10_000, progress: false, alive },
  );
}

/** The text of a call's result, once it has one. */
async function resultOf(call: ForwardedCall): Promise<string> {
  const event = await call.next(attached());
  if (event.kind !== "result") throw new Error(`expected a result, got ${event.kind}`);
  const { content } = event.result as Result & { content: Array<{ text: string }> };
  return content.map((part) => part.text).join("");
}

/** Lets the in-memory exchange run until `call` has input to hand out (or an outcome). */
async function inputOf(call: ForwardedCall) {
  const event = await call.next(attached());
  if (event.kind !== "input") throw new Error(`expected input, got ${event.kind}`);
  return event.asks;
}

describe("ChildBridge", () => {
  it("the only call in flight is asked for the child's input; its caller's answer reaches the child", async () => {
    const { bridge } = await linkedChild();
    const call = await start(bridge, "ask", FORM);
    const asks = await inputOf(call);
    expect(asks).toEqual([
      {
        key: "input-1",
        method: "elicitation/create",
        params: expect.objectContaining({ message: "Your name?" }),
      },
    ]);
    call.park();
    call.answer({ "input-1": { action: "accept", content: { name: "Ada" } } });
    expect(JSON.parse(await resultOf(call))).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(bridge.idle).toBe(true);
  });

  it("a request left unanswered by the retry is asked again", async () => {
    const { bridge } = await linkedChild();
    const call = await start(bridge, "ask", FORM);
    await inputOf(call);
    call.park();
    call.answer({});
    expect(await inputOf(call)).toEqual([expect.objectContaining({ key: "input-1" })]);
    expect(call.round).toBe(2);
  });

  it("the only call in flight, whose caller did not declare the capability: the child gets an error", async () => {
    const { bridge } = await linkedChild();
    const call = await start(bridge, "ask", { sampling: {} });
    const event = await call.next(attached());
    expect(event.kind).toBe("result");
    expect(JSON.stringify(event)).toContain("no caller can answer elicitation/create");
  });

  it("with several calls of one caller in flight, its oldest call that declared the capability is asked", async () => {
    const { bridge, release } = await linkedChild();
    const first = await start(bridge, "wait", undefined);
    const able = await start(bridge, "wait", FORM);
    const asking = await start(bridge, "ask", undefined);
    // The asking call did not declare it; the caller's oldest call that did is asked (same caller).
    const asks = await inputOf(able);
    expect(asks).toEqual([expect.objectContaining({ method: "elicitation/create" })]);
    able.park();
    able.answer({ [asks[0]?.key ?? ""]: { action: "decline" } });
    expect(JSON.parse(await resultOf(asking))).toEqual({ action: "decline" });
    release();
    able.park();
    expect(await resultOf(able)).toBe("waited");
    expect(await resultOf(first)).toBe("waited");
  });

  it("once the child has asked, another caller's call waits while a call whose caller can be asked is in flight; the ask reaches only that caller", async () => {
    const { bridge } = await linkedChild();
    // The child's first request, with one caller in flight: from then on callers that can be asked go alone.
    const first = await start(bridge, "ask", FORM, undefined, "key:a");
    const firstAsks = await inputOf(first);
    first.park();
    first.answer({ [firstAsks[0]?.key ?? ""]: { action: "decline" } });
    expect(JSON.parse(await resultOf(first))).toEqual({ action: "decline" });
    const mine = await start(bridge, "ask", FORM, undefined, "key:a");
    let theirsStarted = false;
    const theirs = start(bridge, "ask", FORM, undefined, "key:b").then((call) => {
      theirsStarted = true;
      return call;
    });
    const asks = await inputOf(mine);
    expect(theirsStarted).toBe(false);
    mine.park();
    mine.answer({ [asks[0]?.key ?? ""]: { action: "accept", content: { who: "a" } } });
    expect(JSON.parse(await resultOf(mine))).toEqual({ action: "accept", content: { who: "a" } });
    const next = await theirs;
    const theirAsks = await inputOf(next);
    next.park();
    next.answer({ [theirAsks[0]?.key ?? ""]: { action: "accept", content: { who: "b" } } });
    expect(JSON.parse(await resultOf(next))).toEqual({ action: "accept", content: { who: "b" } });
  });

  it("once the gate's wait runs out the callers overlap, and the child's request is refused, not handed to either", async () => {
    const { bridge, release } = await linkedChild({ gateWaitMs: 30 });
    const waiting = await start(bridge, "wait", FORM, undefined, "key:a");
    const asking = await start(bridge, "ask", FORM, undefined, "key:b");
    const event = await asking.next(attached());
    expect(JSON.stringify(event)).toContain("no caller can answer elicitation/create");
    release();
    expect(await resultOf(waiting)).toBe("waited");
  });

  it("a call parked past its bound is cancelled at the child, and the child's liveness checked", async () => {
    const { bridge, cancelled } = await linkedChild({ parkMs: 50 });
    let checks = 0;
    const call = await start(bridge, "ask", FORM, () => checks++);
    await inputOf(call);
    call.park();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(checks).toBe(1);
    expect(cancelled).toEqual(["ask"]);
    const event = await call.next(attached());
    expect(event.kind).toBe("error");
  });

  it("a caller that leaves while it waits cancels the call at the child", async () => {
    const { bridge, cancelled } = await linkedChild();
    const call = await start(bridge, "wait", undefined);
    const leaving = new AbortController();
    const waiting = call.next({ signal: leaving.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    leaving.abort(new Error("gone"));
    expect((await waiting).kind).toBe("error");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(bridge.idle).toBe(true);
    expect(cancelled).toEqual(["wait"]);
  });
});
