/**
 * The dev stack in-process for end-to-end suites: fresh emulator resources, the API on a real
 * 127.0.0.1 listener, the worker's poller; every log line captured.
 */
import { randomUUID } from "node:crypto";
import {
  type AppDeps,
  AuditWriter,
  type AuditWriterOptions,
  CallLatency,
  createApp,
  listen,
  loadConsoleAssets,
  OidcClient,
} from "@mcpgw/api";
import {
  type AwsConfig,
  type ConsoleAdminSettings,
  createKmsTokenSigner,
  type OidcSettings,
} from "@mcpgw/aws";
import { createLogger, defaultWorktreeBase } from "@mcpgw/core";
import { type RunnerOptions, startRunner } from "@mcpgw/runner";
import { createGuardedFetch, type RunnerRoute } from "@mcpgw/upstream";
import { runSweep, type SweepOptions, startPoller, type WorkerDeps } from "@mcpgw/worker";
import { CONSOLE_DIST } from "../../scripts/lib/console";
import { TEST_ADMIN_TOKEN } from "./app";
import { createTestStore } from "./aws";

export interface StackOptions {
  allowPrivateUpstreams?: boolean;
  retryDelaySeconds?: number;
  /** The longest retry delay, and a deterministic failure's (the worker's default: 5 min). */
  maxRetryDelaySeconds?: number;
  deadlineMs?: number;
  graceMs?: number;
  /** Data-plane overrides passed to createApp (a counting fetch, a short heartbeat, a directory…). */
  gateway?: AppDeps["gateway"];
  /** Origin/Host policy of the MCP endpoints passed to createApp (allowed origins, loopback-only Host). */
  mcp?: AppDeps["mcp"];
  /**
   * Thread worktree roots must lie under this path (WORKTREE_BASE), for the API and the runner alike;
   * default, as deployed: `mcpgw-worktrees` under the runner's `tempBase` (or the OS temp dir).
   */
  worktreeBase?: string;
  /** Starts the stdio runner with the stack's store and logger, wired into the API and the worker. */
  runner?: boolean | Partial<RunnerOptions>;
  /**
   * A stdio runner running elsewhere (its own process, say) for the API and the worker, instead of
   * `runner` — or a fleet's directory (its runners' own processes).
   */
  runnerAt?: RunnerRoute;
  /** The upstream fetch of the worker and the data plane (default: the outbound guard). */
  fetch?: typeof fetch;
  /** Serves the admin console (built by the global setup) at `/`. */
  console?: boolean;
  /** How often the gateway writes the call latencies of ended 10 s slots (default 10 s). */
  callLatencyFlushMs?: number;
  /**
   * Serves the OAuth authorization server: issuer = the stack's own URL, development sign-in on,
   * tokens signed by the emulator's KMS signing key (client metadata documents fetched with `fetch`).
   */
  oauth?: boolean;
  /** People sign in at this OpenID provider (authorization server and console); `admins` may use the console. */
  oidc?: OidcSettings & { admins?: ConsoleAdminSettings };
  /** Wrong tokens one source may present before it is throttled (default: the app's, 20 a minute). */
  tokenFailures?: AppDeps["tokenFailures"];
  /** Each caller's limits on the data plane (default: DEFAULT_CALLER_LIMITS). */
  limits?: AppDeps["limits"];
  /** Overrides of the store's AWS config (an endpoint through a link a test can cut, say). */
  aws?: Partial<AwsConfig>;
  /** The audit writer's options (default: to the table, flushed every 50 ms). */
  audit?: AuditWriterOptions;
}

export async function startStack(options: StackOptions = {}) {
  const allowPrivate = options.allowPrivateUpstreams ?? true;
  const store = await createTestStore(options.aws);
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", sink: (line) => logs.push(line) });
  const runnerOptions = options.runner === true ? {} : options.runner || {};
  const worktreeBase =
    options.worktreeBase ?? runnerOptions.worktreeBase ?? defaultWorktreeBase(runnerOptions.tempBase);
  const runner = options.runner
    ? await startRunner({
        token: `test-runner-token-${randomUUID()}`,
        ...runnerOptions,
        worktreeBase,
        store,
        logger,
      })
    : undefined;
  const runnerEndpoint = runner ? { url: runner.url, token: runner.token } : options.runnerAt;
  // The gateway's call latencies, written on `stop` too (the stack's close hook).
  const callLatency =
    options.gateway?.callLatency ??
    new CallLatency(
      store,
      logger,
      options.callLatencyFlushMs === undefined ? {} : { flushMs: options.callLatencyFlushMs },
    );
  const gateway = {
    ...options.gateway,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    callLatency,
  };
  // Every call and change audited, written soon after (and on `stop`).
  const audit = new AuditWriter(store, logger, { flushMs: 50, ...options.audit });
  // Listening first: with OAuth on, the issuer is the listener's own origin, known only once it listens.
  let app: ReturnType<typeof createApp> | undefined;
  const api = await listen(
    { fetch: (request, ...rest) => (app as NonNullable<typeof app>).fetch(request, ...rest) },
    0,
  );
  const oauth = options.oauth
    ? {
        issuer: api.url,
        signer: createKmsTokenSigner(store.clients.kms, store.config.signingKeyId),
        devSignIn: true,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }
    : undefined;
  app = createApp({
    store,
    logger,
    adminToken: TEST_ADMIN_TOKEN,
    allowPrivateUpstreams: allowPrivate,
    gateway,
    audit,
    ...(options.audit?.retentionDays ? { auditRetentionDays: options.audit.retentionDays } : {}),
    // Upstream OAuth's redirect URI: this listener's callback.
    publicAdminUrl: api.url,
    ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
    ...(options.tokenFailures ? { tokenFailures: options.tokenFailures } : {}),
    worktreeBase,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(runnerEndpoint ? { runner: runnerEndpoint } : {}),
    ...(options.console ? { console: loadConsoleAssets(CONSOLE_DIST) } : {}),
    ...(oauth ? { oauth } : {}),
    ...(options.oidc
      ? {
          oidc: new OidcClient(options.oidc),
          consoleAdmins: options.oidc.admins ?? { group: undefined, users: [] },
        }
      : {}),
  });
  const gate = fetchGate(options.fetch ?? createGuardedFetch({ allowPrivate }));
  const worker: WorkerDeps = {
    store,
    logger,
    fetch: gate.fetch,
    ...(options.retryDelaySeconds === undefined ? {} : { retryDelaySeconds: options.retryDelaySeconds }),
    ...(options.maxRetryDelaySeconds === undefined
      ? {}
      : { maxRetryDelaySeconds: options.maxRetryDelaySeconds }),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
    ...(runnerEndpoint ? { runner: runnerEndpoint } : {}),
  };
  const poller = startPoller(worker, { waitSeconds: 1 });

  /** Requests with `Authorization: Bearer <token>` and a JSON body; each resolves to status and parsed body. */
  const callAs =
    (token: string) =>
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
    async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const response = await fetch(`${api.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };
  /** An admin API request (read loosely, as tests do). */
  const call = callAs(TEST_ADMIN_TOKEN);

  return {
    store,
    logs,
    logger,
    api,
    /** The audit writer: `flush()` before reading what a call recorded. */
    audit,
    /** The OAuth issuer and token signer, when started with `oauth: true`. */
    oauth,
    worker,
    runner,
    /** WORKTREE_BASE of the API and the runner. */
    worktreeBase,
    call,
    /** A request with another bearer (a client key, say): `callAs(key)(method, path, body)`. */
    callAs,
    /**
     * One health sweep, its jobs sent at once (not spread); resolves to the number of probes and checks
     * it enqueued. `maxListingAgeMs: 0` makes every connected server's job a full probe (tools re-listed).
     * Runs never overlap: one asked for while another test's runs waits for that one to end.
     */
    sweep: async (options: SweepOptions = {}) => {
      for (const started = Date.now(); ; ) {
        const result = await runSweep({ store, logger }, { spreadSeconds: 0, ...options });
        if (result.skipped === undefined) return result.probes + result.checks;
        if (Date.now() - started > 20_000) throw new Error(`the sweep was skipped: ${result.skipped}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    /** Holds the worker's upstream requests until {@link releaseProbes}: a state kept still to look at. */
    holdProbes() {
      gate.hold();
    },
    releaseProbes() {
      gate.release();
    },
    async stop() {
      await Promise.all([poller.stop(), api.close()]);
      await callLatency.close();
      await audit.close();
      await runner?.stop();
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

/** A fetch that waits while held. */
function fetchGate(inner: typeof fetch) {
  let held: { promise: Promise<void>; open: () => void } | undefined;
  return {
    fetch: (async (input, init) => {
      await held?.promise;
      return inner(input, init);
    }) as typeof fetch,
    hold() {
      let open = () => {};
      held ??= { promise: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
    },
    release() {
      held?.open();
      held = undefined;
    },
  };
}

/** Polls `read` until `accept` holds, or fails after `timeoutMs` with the last value seen. */
export async function waitFor<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!accept(last)) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    last = await read();
  }
  return last;
}
