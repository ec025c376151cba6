import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { ChildTransport, findCommand, LineReader, parentDeathWrapper } from "./child-transport";

const started: ChildTransport[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((transport) => transport.close(200)));
});

/** A transport running `node -e script`, started. */
async function node(script: string, env: Record<string, string> = { PATH: process.env.PATH ?? "" }) {
  const transport = new ChildTransport({
    command: process.execPath,
    args: ["-e", script],
    env,
    cwd: tmpdir(),
  });
  started.push(transport);
  const messages: JSONRPCMessage[] = [];
  transport.onmessage = (message) => messages.push(message);
  await transport.start();
  return { transport, messages };
}

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session… */
function stat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: state ?? "", ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** Alive, and not a zombie. */
function alive(pid: number): boolean {
  const s = stat(pid);
  return s !== undefined && s.state !== "Z" && s.state !== "X";
}

/** Polls until `check` holds (bounded). */
async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A script that starts `sleep` as a grandchild and prints its pid as a JSON-RPC notification. */
const WITH_GRANDCHILD = `
  const { spawn } = require("node:child_process");
  const sleeper = spawn("sleep", ["600"], { stdio: "ignore" });
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "grandchild", params: { pid: sleeper.pid } }) + "\\n");
  setInterval(() => {}, 1000);
`;

async function grandchildPid(messages: JSONRPCMessage[]): Promise<number> {
  await until(() => messages.length > 0);
  return (messages[0] as unknown as { params: { pid: number } }).params.pid;
}

describe("ChildTransport", () => {
  it("gives the child exactly the env it is given, nothing merged in", async () => {
    process.env.CHILD_TRANSPORT_SENTINEL = "must-not-leak";
    try {
      const { messages } = await node(
        `process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "env", params: process.env }) + "\\n")`,
        { ONLY: "this" },
      );
      await until(() => messages.length > 0);
      // Node itself may not add anything to the environment it was started with.
      expect((messages[0] as { params: Record<string, string> }).params).toEqual({ ONLY: "this" });
    } finally {
      delete process.env.CHILD_TRANSPORT_SENTINEL;
    }
  });

  it("starts the child as the leader of its own process group, never through a shell", async () => {
    const { transport } = await node("setInterval(() => {}, 1000)");
    const pid = transport.pid as number;
    expect(stat(pid)).toMatchObject({ ppid: process.pid, pgrp: pid });
    // Through setpriv (where it is), which execs the command in place: same pid, the command's argv.
    const argv0 = () => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0];
    // Mid-exec the kernel shows an empty cmdline for a moment: wait for the command's own.
    await until(() => !["", parentDeathWrapper()].includes(argv0()));
    expect(argv0()).toBe(process.execPath);
  });

  it("frames JSON-RPC both ways", async () => {
    const { transport, messages } = await node(`
      require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
        const request = JSON.parse(line);
        process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { echoed: request.params } }) + "\\n");
      });
    `);
    await transport.send({ jsonrpc: "2.0", id: 7, method: "x", params: { a: "b\nc" } });
    await until(() => messages.length > 0);
    expect(messages[0]).toEqual({ jsonrpc: "2.0", id: 7, result: { echoed: { a: "b\nc" } } });
  });

  it("close() ends the whole process group, grandchildren included", async () => {
    const { transport, messages } = await node(WITH_GRANDCHILD);
    const pid = transport.pid as number;
    const grandchild = await grandchildPid(messages);
    expect(stat(grandchild)?.pgrp).toBe(pid);
    await transport.close();
    expect(transport.exitStatus).toEqual({ code: null, signal: "SIGTERM" });
    await until(() => !alive(grandchild));
    expect(alive(pid)).toBe(false);
  });

  it("close() escalates to SIGKILL when the child ignores SIGTERM", async () => {
    const { transport, messages } = await node(`
      process.on("SIGTERM", () => {});
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "ready" }) + "\\n");
      setInterval(() => {}, 1000);
    `);
    await until(() => messages.length > 0);
    const started = performance.now();
    await transport.close(300);
    expect(transport.exitStatus).toEqual({ code: null, signal: "SIGKILL" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("a child that dies on its own takes its process group with it (no orphaned grandchildren)", async () => {
    const { transport, messages } = await node(WITH_GRANDCHILD);
    const pid = transport.pid as number;
    const grandchild = await grandchildPid(messages);
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    process.kill(pid, "SIGKILL");
    await transport.whenExited();
    expect(transport.exitStatus).toEqual({ code: null, signal: "SIGKILL" });
    expect(closed).toBe(true);
    await until(() => !alive(grandchild));
  });

  it("keeps the last 4 KB of stderr", async () => {
    const { transport } = await node(`
      process.stderr.write("x".repeat(10_000));
      process.stderr.write("the end\\n", () => process.exit(3));
    `);
    await transport.whenExited();
    expect(transport.exitStatus).toEqual({ code: 3, signal: null });
    expect(transport.stderrTail.length).toBe(4_096);
    expect(transport.stderrTail.endsWith("the end\n")).toBe(true);
  });

  it("refuses to send once the child is gone, and close() after exit is a no-op", async () => {
    const { transport } = await node("process.exit(0)");
    await transport.whenExited();
    await expect(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" })).rejects.toThrow();
    await transport.close();
  });

  it("rejects start() when the command does not exist", async () => {
    const transport = new ChildTransport({
      command: "/nonexistent/mcp-server",
      args: [],
      env: {},
      cwd: tmpdir(),
    });
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    await expect(transport.start()).rejects.toThrow(/ENOENT/);
    await transport.whenExited();
    expect(closed).toBe(true);
  });
});

describe("ChildTransport: children die with the runner", () => {
  /**
   * A stand-in runner: a process that starts one ChildTransport child which ignores its stdin's end,
   * prints the child's pid, and waits. Resolves to both pids.
   */
  async function runnerWithChild(dieWithParent: boolean): Promise<{ runner: number; child: number }> {
    const module = join(import.meta.dirname, "child-transport.ts");
    const script = `
      import { ChildTransport } from ${JSON.stringify(module)};
      const transport = new ChildTransport({
        command: process.execPath,
        args: ["-e", "setInterval(() => {}, 1000)"],
        env: { PATH: process.env.PATH ?? "" },
        cwd: ${JSON.stringify(tmpdir())},
        dieWithParent: ${dieWithParent},
      });
      await transport.start();
      console.log(transport.pid);
      setInterval(() => {}, 1000);
    `;
    const runner = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = await new Promise<string>((resolve, reject) => {
      runner.once("exit", (code) => reject(new Error(`stand-in runner exited (${code})`)));
      createInterface({ input: runner.stdout }).once("line", resolve);
    });
    return { runner: runner.pid as number, child: Number(line) };
  }

  it.runIf(parentDeathWrapper() !== undefined)(
    "a child dies with its SIGKILLed runner, even one that ignores its stdin's end",
    async () => {
      const { runner, child } = await runnerWithChild(true);
      // Wait until the child is the command itself (setpriv set the signal, then exec'd it).
      await until(() => readFileSync(`/proc/${child}/cmdline`, "utf8").startsWith(process.execPath));
      process.kill(runner, "SIGKILL");
      await until(() => !alive(child), 3_000);
    },
  );

  it("without the wrapper the same child is orphaned (what the wrapper prevents)", async () => {
    const { runner, child } = await runnerWithChild(false);
    try {
      process.kill(runner, "SIGKILL");
      await until(() => !alive(runner));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(alive(child)).toBe(true);
    } finally {
      process.kill(-child, "SIGKILL");
    }
  });
});

describe("findCommand", () => {
  it("finds a command on PATH, a path as it is, and nothing else", () => {
    expect(findCommand("sh", "/nonexistent:/usr/bin:/bin", "/")).toMatch(/\/sh$/);
    expect(findCommand(process.execPath, "", "/")).toBe(process.execPath);
    expect(findCommand("no-such-command-here", "/usr/bin:/bin", "/")).toBeUndefined();
    expect(findCommand("/nonexistent/server", "/usr/bin", "/")).toBeUndefined();
    // A directory is not a command.
    expect(findCommand("tmp", "/", "/")).toBeUndefined();
  });
});

describe("LineReader", () => {
  it("frames lines across chunks, dropping a trailing CR", () => {
    const reader = new LineReader(100);

    expect(reader.push(Buffer.from('{"a":'))).toEqual([]);
    expect(reader.push(Buffer.from('1}\r\n{"b":2}\n{"c"'))).toEqual(['{"a":1}', '{"b":2}']);
    expect(reader.push(Buffer.from(":3}\n"))).toEqual(['{"c":3}']);
  });

  it("refuses a line longer than its bound, even before the line ends", () => {
    const reader = new LineReader(10);

    expect(reader.push(Buffer.from("0123456789\n"))).toEqual(["0123456789"]);
    expect(reader.push(Buffer.from("01234567890"))).toBeUndefined();
  });
});

describe("ChildTransport's bound on a stdout line", () => {
  it("kills the child that writes a line past it, and says why", async () => {
    const transport = new ChildTransport({
      command: process.execPath,
      args: ["-e", 'process.stdout.write("x".repeat(4096)); setInterval(() => {}, 1000)'],
      env: { PATH: process.env.PATH ?? "" },
      cwd: tmpdir(),
      maxMessageBytes: 1024,
    });
    started.push(transport);
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);

    await transport.start();
    await transport.whenExited();

    expect(transport.killedBy).toBe("message_too_large");
    expect(transport.exitStatus).toEqual({ code: null, signal: "SIGKILL" });
    expect(errors.map((e) => e.message)).toContain("the server wrote a message larger than 1024 bytes");
  });
});
