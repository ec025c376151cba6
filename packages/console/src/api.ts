/**
 * The console's one way to the API: same origin, the session cookie, the CSRF token (kept in memory
 * only) on every state change, and problem+json answers turned into {@link ApiError}s.
 */
import type * as views from "@mcpgw/api/views";
import type { z } from "zod";

/**
 * One of a problem's `errors`: the field it is about (a dotted path; "" for the request as a whole)
 * and a sentence for people; an import's also names the document's entry.
 */
export interface FieldError {
  field: string;
  message: string;
  entry?: string;
}

/** A problem+json answer: its stable code, what went wrong, and per-field messages when it has them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
  }
}

/** What the session routes answer. */
export type Session = z.infer<typeof views.ConsoleSession>;

let csrfToken: string | undefined;
let gatewayUrl = "";
let onSignedOut: (() => void) | undefined;

/** Called when the API says the session is gone (expired, signed out elsewhere). */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

/** Exchanges the admin token for a session cookie; the token itself is not kept anywhere. */
export async function signIn(token: string): Promise<Session> {
  const session = await request<Session>("POST", "/console/session", { token });
  keep(session);
  return session;
}

/** How an admin may sign in: the OpenID provider's button, when the gateway has one. */
export type SignInOptions = z.infer<typeof views.ConsoleSignInOptions>;

/** The sign-in options (no session needed). */
export function signInOptions(): Promise<SignInOptions> {
  return request<SignInOptions>("GET", "/console/sign-in");
}

/** The session a reload finds, if the cookie still names a live one. */
export async function resumeSession(): Promise<Session | undefined> {
  try {
    const session = await request<Session>("GET", "/console/session");
    keep(session);
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return undefined;
    throw error;
  }
}

/** What the page keeps of a session: its CSRF token, and where MCP clients reach the gateway. */
function keep(session: Session): void {
  csrfToken = session.csrfToken;
  gatewayUrl = session.gatewayUrl;
}

/** The MCP endpoint a client connects to: `/mcp` (every server a key may use), or one server's. */
export function mcpUrl(server?: string): string {
  return `${gatewayUrl || window.location.origin}/mcp${server === undefined ? "" : `/${encodeURIComponent(server)}`}`;
}

export async function signOut(): Promise<void> {
  await request("DELETE", "/console/session");
  csrfToken = undefined;
}

/** One API request; JSON in and out. */
export async function request<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: {
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(method === "GET" || !csrfToken ? {} : { "x-csrf-token": csrfToken }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const problem = (parsed ?? {}) as { code?: string; detail?: string; title?: string; errors?: unknown };
    if (response.status === 401 && path !== "/console/session") onSignedOut?.();
    throw new ApiError(
      response.status,
      problem.code ?? `http.${response.status}`,
      problem.detail ?? problem.title ?? `The request failed (${response.status}).`,
      Array.isArray(problem.errors) ? problem.errors.flatMap(fieldError) : [],
    );
  }
  return parsed as T;
}

/** One of a problem's `errors` as the console reads it (none when it is not one). */
function fieldError(error: unknown): FieldError[] {
  if (typeof error !== "object" || error === null) return [];
  const { field, message, entry } = error as Record<string, unknown>;
  if (typeof message !== "string") return [];
  return [
    {
      field: typeof field === "string" ? field : "",
      message,
      ...(typeof entry === "string" ? { entry } : {}),
    },
  ];
}

/** `error` as one line: `entry: field: message`, with the parts it has. */
export function errorLine(error: FieldError): string {
  return [error.entry, error.field, error.message].filter(Boolean).join(": ");
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The segment of a path for a name or id. */
export const seg = encodeURIComponent;
