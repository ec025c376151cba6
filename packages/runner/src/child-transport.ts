import { type ChildProcess, spawn } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const STDERR_TAIL_BYTES = 4_096;

export interface ChildSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/**
 * An MCP client transport over a child's stdio — like the SDK's StdioClientTransport, but the child
 * leads its own process group (so the whole tree can be killed), gets exactly the env it is given
 * (nothing merged in), and its stderr tail is kept for diagnostics.
 */
export class ChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderr = "";
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  constructor(private readonly spec: ChildSpec) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(this.spec.command, this.spec.args, {
        env: this.spec.env,
        cwd: this.spec.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
      });
      this.child = child;
      child.once("error", (error) => {
        this.exit ??= { code: null, signal: null };
        this.markExited();
        reject(error);
        this.onerror?.(error);
        this.onclose?.();
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => {
        // The child's tree goes with it: a wrapper's server (npx, uvx) would otherwise be orphaned.
        if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
        this.exit = { code, signal };
        this.markExited();
        this.onclose?.();
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (let message = this.readMessage(); message; message = this.readMessage())
          this.onmessage?.(message);
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
    });
  }

  private readMessage(): JSONRPCMessage | null {
    try {
      return this.buffer.readMessage();
    } catch (error) {
      this.onerror?.(error as Error);
      return null;
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) throw new Error("the child process is not running");
    if (!stdin.write(serializeMessage(message))) await new Promise((resolve) => stdin.once("drain", resolve));
  }

  /** Ends the child's whole process group: SIGTERM, then SIGKILL after `graceMs`. */
  async close(graceMs = 2_000): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || this.exit) return;
    signalGroup(pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Grandchildren that ignored SIGTERM go too.
    signalGroup(pid, "SIGKILL");
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last few KB the child wrote to stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  /** How the child ended, once it has. */
  get exitStatus() {
    return this.exit;
  }

  /** Resolves when the child has exited. */
  whenExited(): Promise<void> {
    return this.exited;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}
