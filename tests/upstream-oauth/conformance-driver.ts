/**
 * The client the MCP conformance suite runs in `client` mode for its `auth/*` scenarios, acting for the
 * gateway through its admin API only: the suite runs `<command> <server URL>` with
 * MCP_CONFORMANCE_SCENARIO and, for some scenarios, MCP_CONFORMANCE_CONTEXT (pre-registered client
 * credentials). The driver registers the URL as an OAuth upstream, starts the authorization, follows
 * the authorization URL as a browser would (the suite's AS answers at once with a redirect to the
 * gateway's callback), waits for the worker's probe to connect, calls the scenario server's tool and
 * deletes the server. Exits 0 when all that worked; else 1 with what failed on stderr (never a token,
 * code or secret: it prints only statuses and the gateway's own error texts).
 *
 * Env: CONFORMANCE_GATEWAY_URL (the stack's API), CONFORMANCE_ADMIN_TOKEN. Runs on Node 22 with type
 * stripping (no loader): plain TypeScript, node built-ins only.
 */
import { randomBytes } from "node:crypto";

const STATUS_TIMEOUT_MS = 15_000;

const serverUrl = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "unknown";
const gateway = process.env.CONFORMANCE_GATEWAY_URL;
const adminToken = process.env.CONFORMANCE_ADMIN_TOKEN;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
  client_id?: string;
  client_secret?: string;
};

class DriverError extends Error {}

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

/** Opens the authorization URL as a browser: follows redirects until one lands on the gateway. */
async function followAuthorization(authorizationUrl: string): Promise<void> {
  let next = authorizationUrl;
  for (let hop = 0; hop < 5; hop++) {
    const response = await fetch(next, { redirect: "manual" });
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location)
      throw new DriverError(`the authorization endpoint answered ${response.status} without a redirect`);
    next = new URL(location, next).href;
    if (next.startsWith(`${gateway}/`)) {
      const callback = await fetch(next, { redirect: "manual" });
      const page = await callback.text();
      if (callback.status !== 200) {
        const reason = /<p>([\s\S]*?)<\/p>/.exec(page)?.[1] ?? "";
        throw new DriverError(`the gateway's callback answered ${callback.status}: ${reason}`);
      }
      return;
    }
  }
  throw new DriverError("the authorization URL redirected too often");
}

async function waitConnected(id: string): Promise<void> {
  const deadline = Date.now() + STATUS_TIMEOUT_MS;
  let last = "";
  while (Date.now() < deadline) {
    const reply = await admin("GET", `/v1/servers/${id}`);
    const status = reply.body?.status;
    if (status?.state === "connected" && (status.toolCount ?? 0) > 0) return;
    last = `${status?.state ?? reply.status}${status?.reason ? ` (${status.reason})` : ""}${status?.error ? `: ${status.error}` : ""}`;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new DriverError(`the server did not connect within ${STATUS_TIMEOUT_MS} ms; last status: ${last}`);
}

async function main(): Promise<void> {
  if (!serverUrl || !gateway || !adminToken)
    throw new DriverError(
      "usage: CONFORMANCE_GATEWAY_URL=… CONFORMANCE_ADMIN_TOKEN=… conformance-driver.ts <server URL>",
    );
  const auth = authFor();
  const created = await admin("POST", "/v1/servers", { name: serverName(), url: serverUrl, auth });
  if (created.status !== 201) throw new DriverError(`registering the server: ${describe(created)}`);
  const id = created.body.id as string;
  try {
    if (auth.type === "oauth") {
      const started = await admin("POST", `/v1/servers/${id}/authorize`);
      if (started.status !== 200) throw new DriverError(`starting the authorization: ${describe(started)}`);
      await followAuthorization(started.body.authorizationUrl as string);
    }
    await waitConnected(id);
    const name = created.body.name as string;
    const called = await admin("POST", `/v1/tools/${name}__test-tool/call`, { arguments: {} });
    if (called.status !== 200) throw new DriverError(`calling the tool: ${describe(called)}`);
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
