/**
 * The world of a mixed-load test: the servers the load knows (their current names, whether they have
 * served, which admin changes ran when, whether they were deleted), the steps its clients take — tool
 * calls, edits of every kind, reconnects, creates and deletes — and the figures those steps leave:
 * calls, refusals caused by an edit to a serving server, PATCH 409s, 5xx (with the changes under way
 * meanwhile) and call latency.
 */
import { percentile } from "../../scripts/lib/processes";
import type { Upstream } from "../fixtures/mcp-upstream";
import type { Stack } from "../support/stack";
import { uniqueName } from "./helpers";
import { callOutcome, type LoadClient, type Refused } from "./load-client";

/** A server the load knows: its current name (the highest version seen) and what happened to it. */
export interface Tracked {
  id: string;
  kind: "http" | "stdio";
  name: string;
  version: number;
  /** `serving`: created before the load, never deleted; `churn`: created and deleted under load. */
  pool: "serving" | "churn" | "broken";
  /** A call through the gateway has answered (so from now on it was serving). */
  served: boolean;
  /** A DELETE has been sent. */
  deleted: boolean;
  /** Admin changes (rename, url, reconnect, delete…) logged when they start and when they end. */
  changeLog: string[];
  /** Admin changes under way. */
  pending: string[];
}

export interface Figures {
  calls: number;
  served: number;
  /** Calls that did not answer because of an edit to a server that was serving. */
  refusals: Array<{ kind: Tracked["kind"]; via: string; outcome: Refused }>;
  /** Calls that did not answer for another reason (not yet serving, deleted, renamed, broken). */
  excused: Record<string, number>;
  /** Each 5xx, with the admin changes to its server under way or made while a call ran. */
  errors5xx: Array<{ what: string; status: number; detail: string; during?: string[] }>;
  patches: number;
  patchConflicts: string[];
  /** Admin requests by kind and answer status: `{"rename 200": 30, "reconnect 409": 1}`. */
  admin: Record<string, number>;
  latencyMs: number[];
}

/** The command, args and env of the load's stdio servers, varied by `v` (an edit's number). */
export type StdioSpec = (v: number) => { command: string; args: string[]; env: Record<string, string> };

/** The tool a server's calls use, and its arguments. */
export function toolOf(server: Pick<Tracked, "kind">, name: string) {
  return server.kind === "stdio"
    ? { tool: `${name}__ping`, args: {} }
    : { tool: `${name}__echo`, args: { text: "x" } };
}

export class LoadWorld {
  readonly servers = new Map<string, Tracked>();
  readonly figures: Figures = {
    calls: 0,
    served: 0,
    refusals: [],
    excused: {},
    errors5xx: [],
    patches: 0,
    patchConflicts: [],
    admin: {},
    latencyMs: [],
  };
  private counter = 0;

  constructor(
    private readonly stack: Pick<Stack, "call">,
    private readonly upstreams: Upstream[],
    private readonly stdioSpec: StdioSpec,
    /** Churn servers alive at once at most. */
    private readonly maxChurn: number,
  ) {}

  /** Registers a server the load created. */
  track(id: string, kind: Tracked["kind"], name: string, pool: Tracked["pool"]): Tracked {
    const server: Tracked = {
      ...{ id, kind, name, version: 1, pool },
      ...{ served: false, deleted: false, changeLog: [], pending: [] },
    };
    this.servers.set(id, server);
    return server;
  }

  /** Servers not deleted (of one pool). */
  live(pool?: Tracked["pool"]): Tracked[] {
    return [...this.servers.values()].filter((s) => !s.deleted && (pool === undefined || s.pool === pool));
  }

  /**
   * One step of a client: a call (80 %), an edit (10 %), a reconnect (3 %), a create or a delete of a
   * churn server (7 %).
   */
  async step(client: LoadClient): Promise<void> {
    const roll = Math.random();
    if (roll < 0.8) {
      // Mostly the long-lived servers; churn ones are called too, but are new and connecting more often.
      const churn = this.live("churn");
      return this.call(client, pick(Math.random() < 0.25 && churn.length ? churn : this.live("serving")));
    }
    const editable = [...this.live("serving"), ...this.live("churn")];
    if (roll < 0.9) return this.editSomething(pick(editable));
    if (roll < 0.93) {
      const server = pick(editable);
      await this.change(server, "reconnect", () =>
        this.admin("reconnect", "POST", `/v1/servers/${server.id}/reconnect`),
      );
      return;
    }
    const churn = this.live("churn");
    if (churn.length < 2 || (churn.length < this.maxChurn && Math.random() < 0.5)) return this.createChurn();
    return this.deleteChurn(pick(churn));
  }

  /** The figures as plain lines. */
  report(): string[] {
    const f = this.figures;
    const byVia = (via: string) => f.refusals.filter((r) => r.via === via).length;
    return [
      `calls ${f.calls}, served ${f.served}, not served for other reasons ${JSON.stringify(f.excused)}`,
      `refusals from edits ${f.refusals.length} (REST ${byVia("rest")}, MCP ${byVia("mcp")}) = ${((100 * f.refusals.length) / Math.max(1, f.calls)).toFixed(1)} % of calls`,
      `refusal kinds ${JSON.stringify(this.refusalKinds())}`,
      `PATCH 409 ${f.patchConflicts.length} of ${f.patches} PATCHes`,
      `5xx ${f.errors5xx.length}${f.errors5xx.length ? ` ${JSON.stringify(f.errors5xx.slice(0, 5))}` : ""}`,
      `admin ${JSON.stringify(f.admin)}`,
      `call latency p50 ${percentile(f.latencyMs, 50).toFixed(1)} ms, p99 ${percentile(f.latencyMs, 99).toFixed(1)} ms`,
    ];
  }

  /** Refusals counted by server kind, status, code and detail (names elided). */
  refusalKinds(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { kind, outcome } of this.figures.refusals) {
      const key = `${kind} ${outcome.status} ${outcome.code}: ${outcome.detail.replace(/'[^']*'/g, "'…'")}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  private async call(client: LoadClient, server: Tracked): Promise<void> {
    const via = Math.random() < 0.5 ? "rest" : "mcp";
    const { name } = server;
    const pendingAtStart = [...server.pending];
    const logAtStart = server.changeLog.length;
    const wasServing = server.served && !server.deleted;
    const { tool, args } = toolOf(server, name);
    const started = performance.now();
    const outcome = await callOutcome(client, via, tool, args);
    this.figures.latencyMs.push(performance.now() - started);
    this.figures.calls++;
    if (outcome.ok) {
      this.figures.served++;
      server.served = true;
      return;
    }
    const during = [...new Set([...pendingAtStart, ...server.changeLog.slice(logAtStart)])];
    if (outcome.status >= 500) {
      const what = `${via} call (${server.pool} ${server.kind})`;
      this.figures.errors5xx.push({ what, status: outcome.status, detail: outcome.detail, during });
      return;
    }
    const renamedMeanwhile = during.includes("rename") || name !== server.name;
    const excuse = !wasServing
      ? "not yet serving"
      : server.deleted
        ? "deleted"
        : server.pool === "broken"
          ? "broken"
          : renamedMeanwhile && ["server.not_found", "tool.not_found"].includes(outcome.code)
            ? "renamed"
            : undefined;
    if (excuse) this.figures.excused[excuse] = (this.figures.excused[excuse] ?? 0) + 1;
    else this.figures.refusals.push({ kind: server.kind, via, outcome });
  }

  /** An admin request, its 5xx and PATCH 409s recorded; resolves to the response. */
  private async admin(what: string, method: string, path: string, body?: unknown) {
    const response = await this.stack.call(method, path, body);
    const key = `${what} ${response.status}`;
    this.figures.admin[key] = (this.figures.admin[key] ?? 0) + 1;
    if (response.status >= 500)
      this.figures.errors5xx.push({ what, status: response.status, detail: JSON.stringify(response.body) });
    if (method === "PATCH") {
      this.figures.patches++;
      if (response.status === 409) this.figures.patchConflicts.push(JSON.stringify(response.body));
    }
    return response;
  }

  /** Runs an admin change of `server`, logged so that calls can tell what changed while they ran. */
  private async change<T>(server: Tracked, what: string, act: () => Promise<T>): Promise<T> {
    server.changeLog.push(what);
    server.pending.push(what);
    try {
      return await act();
    } finally {
      server.pending.splice(server.pending.indexOf(what), 1);
      server.changeLog.push(what);
    }
  }

  /** Applies a PATCH; a 200 body newer than what the load knows updates the server's name. */
  private async edit(server: Tracked, what: string, patch: Record<string, unknown>): Promise<void> {
    const response = await this.change(server, what, () =>
      this.admin(what, "PATCH", `/v1/servers/${server.id}`, patch),
    );
    if (response.status === 200 && response.body.version > server.version) {
      server.version = response.body.version;
      server.name = response.body.name;
    }
  }

  private async editSomething(server: Tracked): Promise<void> {
    const n = ++this.counter;
    if (Math.random() < 0.25) return this.edit(server, "rename", { name: uniqueName(`load-${server.kind}`) });
    if (Math.random() < 0.3) return this.edit(server, "timeoutSeconds", { timeoutSeconds: 10 + (n % 20) });
    if (server.kind === "stdio") {
      return Math.random() < 0.5
        ? this.edit(server, "env", { env: this.stdioSpec(n).env })
        : this.edit(server, "args", { args: this.stdioSpec(n).args });
    }
    const headers = { "X-Load": `h${n}` };
    return Math.random() < 0.5
      ? this.edit(server, "headers", { headers })
      : this.edit(server, "url", { url: pick(this.upstreams).url, headers });
  }

  private async createChurn(): Promise<void> {
    const n = ++this.counter;
    const kind = n % 3 === 0 ? "stdio" : "http";
    const name = uniqueName(`load-${kind}`);
    const spec = kind === "stdio" ? this.stdioSpec(n) : { url: pick(this.upstreams).url };
    const response = await this.admin("create", "POST", "/v1/servers", { name, ...spec });
    if (response.status === 201) this.track(response.body.id, kind, name, "churn");
  }

  private async deleteChurn(server: Tracked): Promise<void> {
    server.deleted = true;
    await this.change(server, "delete", () => this.admin("delete", "DELETE", `/v1/servers/${server.id}`));
  }
}

function pick<T>(items: T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}
