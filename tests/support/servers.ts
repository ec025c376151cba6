/** Server helpers shared by the end-to-end suites: create through the admin API, read and await status. */
import type { ServerStatus } from "@mcpgw/core";
import { type Stack, waitFor } from "./stack";

/** The status part of `GET /v1/servers/{id}`: the type of the API's own schema. */
export type StatusView = ServerStatus;

type Caller = Pick<Stack, "call">;

/** Reads a server's status through the admin API (throws on a non-200). */
export function statusReader(stack: Caller, id: string): () => Promise<StatusView> {
  return async () => {
    const response = await stack.call("GET", `/v1/servers/${id}`);
    if (response.status !== 200)
      throw new Error(`GET /v1/servers/${id} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.status as StatusView;
  };
}

/** Waits until the server leaves `connecting`, and returns that status. */
export function settled(stack: Caller, id: string, timeoutMs = 15_000): Promise<StatusView> {
  return waitFor(statusReader(stack, id), (s) => s.state !== "connecting", { timeoutMs });
}

/** Waits until the server is in `state`. */
export function reaches(
  stack: Caller,
  id: string,
  state: StatusView["state"],
  timeoutMs = 15_000,
): Promise<StatusView> {
  return waitFor(statusReader(stack, id), (s) => s.state === state, { timeoutMs, intervalMs: 100 });
}

/** Creates a server through the admin API and returns its id (asserting 201). */
export async function createServer(stack: Caller, body: Record<string, unknown>): Promise<string> {
  const created = await stack.call("POST", "/v1/servers", body);
  if (created.status !== 201) throw new Error(`create → ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/** A unique-enough server name for one test. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Parsed log lines (the stack captures JSON lines). */
export function logLines(stack: Pick<Stack, "logs">): Array<Record<string, unknown>> {
  return stack.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
}
