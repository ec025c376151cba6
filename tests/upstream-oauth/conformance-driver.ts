/**
 * The client the MCP conformance suite runs in `client` mode for its `auth/*` scenarios, acting for the
 * gateway through its admin API only: the suite runs `<command> <server URL>` with
 * MCP_CONFORMANCE_SCENARIO and, for some scenarios, MCP_CONFORMANCE_CONTEXT (pre-registered client
 * credentials). The driver registers the URL as an OAuth upstream, starts the authorization, follows
 * the authorization URL as a browser would (the suite's AS answers at once with a redirect to the
 * gateway's callback), waits for the worker's probe to connect, calls the scenario server's tool and
 * deletes the server. When the upstream then refuses the token and the status says authorization is
 * required again (auth/authorization-server-migration: the resource moved to another AS), it
 * authorizes once more, as the status tells an admin to; never more than twice. Exits 0 when all that
 * worked; else 1 with what failed on stderr (never a token, code or secret: it prints only statuses
 * and the gateway's own error texts).
 *
 * Env: CONFORMANCE_GATEWAY_URL (the stack's API), CONFORMANCE_ADMIN_TOKEN. Runs on Node 22 with type
 * stripping (no loader): plain TypeScript, node built-ins only.
 */
import { randomBytes } from "node:crypto";

const STATUS_TIMEOUT_MS = 10_000;

const serverUrl = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "unknown";
const gateway = process.env.CONFORMANCE_GATEWAY_URL;
const adminToken = process.env.CONFORMANCE_ADMIN_TOKEN;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
  client_id?: string;
  client_secret?: string;
};

class DriverError extends Error {}

interface Status {
  state: string;
  reason?: string | null;
  error?: string | null;
  toolCount?: number;
  authorization?: string;
  lastConnectionFailureAt?: string | null;
}

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the admin API's answers are read loosely
  body: any;
}

async function admin(method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`${gateway}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminToken}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body: parsed };
}

/** The gateway's own problem text (title/detail), never anything the upstream sent as a secret. */
const describe = (reply: Reply) =>
  `${reply.status} ${typeof reply.body === "object" ? (reply.body?.detail ?? reply.body?.title ?? "") : ""}`.trim();

/** A unique server name from the scenario: letters, digits and single dashes, at most 32 characters. */
function serverName(): string {
  const slug = scenario
    .replace(/^auth\//, "")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .slice(0, 24)
    .replace(/^-+|-+$/g, "");
  return `${slug || "scenario"}-${randomBytes(3).toString("hex")}`;
}

function authFor(): Record<string, unknown> {
  if (scenario.startsWith("auth/client-credentials"))
    return { type: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret };
  return {
    type: "oauth",
    ...(context.client_id ? { clientId: context.client_id } : {}),
    ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
  };
}

/**
 * Opens the authorization URL as a browser: follows redirects until one lands on the gateway's
 * callback. Answers when the callback was requested (its probe's outcome is stamped later).
 */
async function followAuthorization(authorizationUrl: string): Promise<number> {
  let next = authorizationUrl;
  for (let hop = 0; hop < 5; hop++) {
    const response = await fetch(next, { redirect: "manual" });
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location)
      throw new DriverError(`the authorization endpoint answered ${response.status} without a redirect`);
    next = new URL(location, next).href;
    if (next.startsWith(`${gateway}/`)) {
      const requestedAt = Date.now();
      const callback = await fetch(next, { redirect: "manual" });
      const page = await callback.text();
      if (callback.status !== 200) {
        const reason = /<p>([\s\S]*?)<\/p>/.exec(page)?.[1] ?? "";
        throw new DriverError(`the gateway's callback answered ${callback.status}: ${reason}`);
      }
      return requestedAt;
    }
  }
  throw new DriverError("the authorization URL redirected too often");
}

/**
 * Waits until the server is connected with its tools, or a connection attempt after `since` failed
 * (the worker's probe after the callback): that status is the answer.
 */
async function settle(id: string, since: number): Promise<Status> {
  const deadline = Date.now() + STATUS_TIMEOUT_MS;
  let status: Status | undefined;
  while (Date.now() < deadline) {
    const reply = await admin("GET", `/v1/servers/${id}`);
    status = reply.body?.status as Status | undefined;
    if (status?.state === "connected" && (status.toolCount ?? 0) > 0) return status;
    if (status?.state === "failed" && Date.parse(status.lastConnectionFailureAt ?? "") >= since)
      return status;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new DriverError(
    `the server did not settle within ${STATUS_TIMEOUT_MS} ms; last status: ${show(status)}`,
  );
}

const show = (status: Status | undefined) =>
  status
    ? `${status.state}${status.reason ? ` (${status.reason})` : ""}${status.error ? `: ${status.error}` : ""}`
    : "none";

async function main(): Promise<void> {
  if (!serverUrl || !gateway || !adminToken)
    throw new DriverError(
      "usage: CONFORMANCE_GATEWAY_URL=… CONFORMANCE_ADMIN_TOKEN=… conformance-driver.ts <server URL>",
    );
  const auth = authFor();
  const created = await admin("POST", "/v1/servers", { name: serverName(), url: serverUrl, auth });
  if (created.status !== 201) throw new DriverError(`registering the server: ${describe(created)}`);
  const id = created.body.id as string;
  const name = created.body.name as string;
  try {
    // As an admin would: authorize; when the upstream later refuses the gateway's token and the
    // status says authorization is required again (a changed authorization server), authorize once more.
    for (let authorizations = 0; ; ) {
      let since = Date.now();
      if (auth.type === "oauth" && authorizations < 2) {
        const started = await admin("POST", `/v1/servers/${id}/authorize`);
        if (started.status !== 200) throw new DriverError(`starting the authorization: ${describe(started)}`);
        since = await followAuthorization(started.body.authorizationUrl as string);
        authorizations++;
      }
      const status = await settle(id, since);
      if (status.state === "connected") {
        const called = await admin("POST", `/v1/tools/${name}__test-tool/call`, { arguments: {} });
        if (called.status === 200 && called.body?.isError !== true) return;
        const now = await admin("GET", `/v1/servers/${id}`);
        if (now.body?.status?.authorization !== "required" || authorizations >= 2 || auth.type !== "oauth")
          throw new DriverError(`calling the tool: ${describe(called)}`);
        continue;
      }
      if (status.authorization !== "required" || authorizations >= 2 || auth.type !== "oauth")
        throw new DriverError(`the server did not connect: ${show(status)}`);
    }
  } finally {
    await admin("DELETE", `/v1/servers/${id}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const message = error instanceof DriverError ? error.message : `unexpected: ${String(error)}`;
    process.stderr.write(`conformance driver (${scenario}): ${message}\n`);
    process.exit(1);
  },
);
