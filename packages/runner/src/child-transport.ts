import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { type LimitKind, type ResolvedLimits, rlimitOptions } from "@mcpgw/core";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { LimitWatch } from "./limits";
import { type ReplyBudget, replyId } from "./reply-budget";

const STDERR_TAIL_BYTES = 4_096;
/** The longest stdout line (one JSON-RPC message) a child may write unless told otherwise: 10 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface ChildSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The uid and gid the child runs as (its own, from the runner's pool); unset → the runner's. */
  uid?: number;
  gid?: number;
  /** A stdout line longer than this kills the child (that child only). */
  maxMessageBytes?: number;
  /**
   * SIGKILL the child when the runner dies (Linux: exec'd through `setpriv --pdeathsig KILL`, when
   * util-linux's setpriv is there). Default true.
   */
  dieWithParent?: boolean;
  /**
   * What the child may use: capped per process by the kernel (through util-linux `prlimit`, when it is
   * there) and summed over its processes by `watch`, which has the transport kill it past a limit.
   */
  limits?: { values: ResolvedLimits; watch: LimitWatch };
  /**
   * The bytes of this child's replies the runner may hold: a request sent with a `relatedRequestId`
   * names the owner its reply is charged to, and a reply past the budget is answered as an error.
   */
  replies?: ReplyBudget;
}

/** Why a child was ended by its transport (or the kernel, for its limits) rather than by its own exit or by close(). */
export type TransportKill = "message_too_large" | LimitKind;

/**
 * An MCP client transport over a child's stdio — like the SDK's StdioClientTransport, but the child
 * leads its own process group (so the whole tree can be killed), gets exactly the env it is given
 * (nothing merged in), dies with the runner (a parent-death signal, where the platform has one), and
 * its stderr tail is kept for diagnostics.
 */
export class ChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly lines: LineReader;
  private killedFor: TransportKill | undefined;
  private unwatch: (() => void) | undefined;
  private stderr = "";
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  constructor(private readonly spec: ChildSpec) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
    this.lines = new LineReader(spec.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const spec = this.spec;
      const wrapper = execWrappers(spec);
      let argv: [string, string[]] = [spec.command, spec.args];
      if (wrapper) {
        // setpriv or prlimit would report a missing command as its own exit 127: find it first, as
        // spawn does, so a missing command still fails start() with ENOENT.
        const command = findCommand(spec.command, spec.env.PATH, spec.cwd);
        if (!command) {
          this.exit = { code: null, signal: null };
          this.markExited();
          const error = Object.assign(new Error(`spawn ${spec.command} ENOENT`), {
            code: "ENOENT",
            errno: -2,
            syscall: `spawn ${spec.command}`,
            path: spec.command,
          });
          reject(error);
          this.report(error);
          this.closed();
          return;
        }
        argv = [wrapper[0], [...wrapper[1], command, ...spec.args]];
      }
      const child = spawn(argv[0], argv[1], {
        env: spec.env,
        cwd: spec.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
        ...(spec.uid === undefined ? {} : { uid: spec.uid, gid: spec.gid ?? spec.uid }),
      });
      this.child = child;
      child.once("error", (error) => {
        this.exit ??= { code: null, signal: null };
        this.markExited();
        reject(error);
        this.report(error);
        this.closed();
      });
      child.once("spawn", () => {
        const limits = spec.limits;
        if (limits && child.pid !== undefined)
          this.unwatch = limits.watch.watch(child.pid, limits.values, (kind) => this.kill(child, kind));
        resolve();
      });
      child.once("exit", (code, signal) => {
        this.unwatch?.();
        // The child's tree goes with it: a wrapper's server (npx, uvx) would otherwise be orphaned.
        if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
        this.exit = { code, signal };
        this.markExited();
        this.closed();
      });
      child.stdout?.on("data", (chunk: Buffer) => this.onStdout(child, chunk));
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      child.stdin?.on("error", (error) => this.report(error));
    });
  }

  /** `onerror`, never throwing into the child's event listeners. */
  private report(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // a handler's own fault must not take the runner down
    }
  }

  private closed(): void {
    try {
      this.onclose?.();
    } catch (error) {
      this.report(error as Error);
    }
  }

  /**
   * Frames stdout into messages. Nothing a child writes may throw out of here (that would take the
   * runner and every other child down): a line that is not JSON-RPC is reported to `onerror`, and a
   * line past the limit kills this child's process group.
   */
  private onStdout(child: ChildProcess, chunk: Buffer): void {
    if (this.killedFor) return;
    const lines = this.lines.pushBytes(chunk);
    if (lines === undefined) {
      this.kill(child, "message_too_large");
      this.report(new Error(`the server wrote a message larger than ${this.lines.maxBytes} bytes`));
      return;
    }
    for (const line of lines) {
      let message: JSONRPCMessage;
      try {
        message = this.refusal(line) ?? this.admitted(deserializeMessage(line.toString("utf8")), line.length);
      } catch (error) {
        this.report(error as Error);
        continue;
      }
      try {
        this.onmessage?.(message);
      } catch (error) {
        this.report(error as Error);
      }
    }
  }

  /**
   * The error answering `line` when it is a reply past this child's reply budget, found without
   * parsing it (a refused reply costs its bytes only); undefined for any other line.
   */
  private refusal(line: Buffer): JSONRPCMessage | undefined {
    const replies = this.spec.replies;
    if (!replies || replies.fits(line.length)) return undefined;
    const id = replyId(line);
    return id === undefined || replies.admit(id, line.length) ? undefined : refused(id, line.length, replies);
  }

  /** `message`, or — a reply past this child's reply budget — an error answering the same request. */
  private admitted(message: JSONRPCMessage, bytes: number): JSONRPCMessage {
    const replies = this.spec.replies;
    if (!replies || !(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))) return message;
    if (message.id === undefined || replies.admit(message.id, bytes)) return message;
    return refused(message.id, bytes, replies);
  }

  /** Kills the child's process group for `why` (the first reason stays). */
  private kill(child: ChildProcess, why: TransportKill): void {
    this.killedFor ??= why;
    if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) throw new Error("the child process is not running");
    const owner = options?.relatedRequestId;
    if (this.spec.replies && isJSONRPCRequest(message) && typeof owner === "string")
      this.spec.replies.expect(message.id, owner);
    if (!stdin.write(serializeMessage(message))) await new Promise((resolve) => stdin.once("drain", resolve));
  }

  /**
   * Ends the child's whole process group: SIGTERM, then SIGKILL after `graceMs` (at once with 0: a
   * child that stopped answering gets no grace, and SIGTERM would not reach a stopped one).
   */
  async close(graceMs = 2_000): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || this.exit) return;
    if (graceMs <= 0) signalGroup(pid, "SIGKILL");
    else signalGroup(pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), Math.max(graceMs, 0));
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

  /** The longest stdout line this child may write. */
  get maxMessageBytes(): number {
    return this.lines.maxBytes;
  }

  /** The limits the child runs under, if any. */
  get limits(): ResolvedLimits | undefined {
    return this.spec.limits?.values;
  }

  /** Set when the transport itself killed the child, and why. */
  get killedBy(): TransportKill | undefined {
    return this.killedFor;
  }

  /** Resolves when the child has exited. */
  whenExited(): Promise<void> {
    return this.exited;
  }
}

/**
 * Newline framing with a bound: chunks are kept as they arrive (never re-concatenated per chunk) until
 * a newline completes a line; a line longer than `maxBytes` makes `push` return undefined.
 */
export class LineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** The complete lines this chunk finishes (without their newline, a trailing CR dropped). */
  push(chunk: Buffer): string[] | undefined {
    return this.pushBytes(chunk)?.map((line) => line.toString("utf8"));
  }

  /** {@link push}, the lines left as bytes. */
  pushBytes(chunk: Buffer): Buffer[] | undefined {
    const lines: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      if (this.pendingBytes + end - start > this.maxBytes) return this.overflow();
      this.pending.push(chunk.subarray(start, end));
      const line = Buffer.concat(this.pending);
      lines.push(line.at(-1) === 0x0d ? line.subarray(0, -1) : line);
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
    }
    if (start < chunk.length) {
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxBytes) return this.overflow();
      this.pending.push(chunk.subarray(start));
    }
    return lines;
  }

  private overflow(): undefined {
    this.pending = [];
    this.pendingBytes = 0;
    return undefined;
  }
}

const MIB = 1024 * 1024;

/** The error that answers request `id` in place of its reply of `bytes`, past the budget. */
function refused(id: RequestId, bytes: number, replies: ReplyBudget): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InternalError, message: replyRefused(bytes, replies.maxBytes) },
  };
}

/** What a caller is told when its reply would take the runner past the child's reply budget (no content of it). */
export function replyRefused(bytes: number, budgetBytes: number): string {
  const mib = (value: number) => `${(value / MIB).toFixed(1)} MiB`;
  return (
    `the server's reply (${mib(bytes)}) was refused: the runner already holds close to this server's ` +
    `reply budget of ${mib(budgetBytes)} (RUNNER_CHILD_REPLY_BUDGET_MIB) for replies not yet sent; try again later`
  );
}

/** SIGKILLs the child's process group now, synchronously (a runner that must exit at once). */
export function killGroupNow(transport: ChildTransport): void {
  if (transport.pid !== undefined && !transport.exitStatus) signalGroup(transport.pid, "SIGKILL");
}

/**
 * The programs a child is exec'd through, in order, each running the next in place (same pid, same
 * process group; argv still never a shell): setpriv for the parent-death signal, prlimit for the
 * kernel's caps. Undefined when there are none.
 */
function execWrappers(spec: ChildSpec): [string, string[]] | undefined {
  const argv: string[] = [];
  const setpriv = spec.dieWithParent === false ? undefined : parentDeathWrapper();
  if (setpriv) argv.push(setpriv, "--pdeathsig", "KILL", "--");
  const caps = spec.limits ? rlimitOptions(spec.limits.values, spec.uid !== undefined) : [];
  const prlimit = caps.length > 0 ? limitWrapper() : undefined;
  if (prlimit) argv.push(prlimit, ...caps, "--");
  const [program, ...args] = argv;
  return program === undefined ? undefined : [program, args];
}

let wrapperPath: string | null | undefined;
let prlimitPath: string | null | undefined;

/**
 * util-linux's `prlimit`, when it is there (checked once): run with a command, it sets its own rlimits
 * and execs the command in place. It runs after the uid switch, so the child's caps are lowered by
 * the child's own uid (which may always lower them), and the per-uid process cap counts that uid.
 */
export function limitWrapper(): string | undefined {
  if (prlimitPath === undefined) prlimitPath = findUtility("prlimit", ["--core=0", "--", "true"]) ?? null;
  return prlimitPath ?? undefined;
}

/**
 * util-linux's `setpriv`, when it is there and takes `--pdeathsig` (checked once): a child exec'd
 * through it gets SIGKILL when the runner dies, even by SIGKILL. It runs after the uid switch (the
 * kernel clears the setting when credentials change, so it must) and execs the command in place: same
 * pid, same process group, argv still never a shell. Undefined elsewhere (no Linux, no util-linux).
 */
export function parentDeathWrapper(): string | undefined {
  if (wrapperPath === undefined)
    wrapperPath = findUtility("setpriv", ["--pdeathsig", "KILL", "--", "true"]) ?? null;
  return wrapperPath ?? undefined;
}

/** The util-linux program `name` that runs `checkArgs` successfully (Linux only), if any. */
function findUtility(name: string, checkArgs: string[]): string | undefined {
  if (process.platform !== "linux") return undefined;
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    // `true` from the runner's PATH: ~5 ms once (node itself would take ~80 ms).
    const check = spawnSync(join(dir, name), checkArgs, { stdio: "ignore", timeout: 5_000 });
    if (check.status === 0) return join(dir, name);
  }
  return undefined;
}

/**
 * Where `command` is, looked up the way spawn looks it up: a path (anything with a slash) relative
 * to `cwd`, else the first executable file of that name on the child's PATH. Undefined when none is.
 */
export function findCommand(command: string, path: string | undefined, cwd: string): string | undefined {
  if (command.includes("/")) return isExecutableFile(resolve(cwd, command)) ? command : undefined;
  // No PATH: the default libuv searches (`_PATH_DEFPATH`).
  for (const dir of (path ?? "/usr/bin:/bin").split(delimiter)) {
    const candidate = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}
