/**
 * Deployed, the console is served by the admin function while tool calls belong to the gateway
 * function (another URL). The console's "try it" stays same-origin: the admin function forwards the
 * catalogue and call requests of an admin (token or console session) to the gateway with the admin
 * token, and hands back its answer. `npm run dev` serves both planes in one app and needs none of this.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { problemOf } from "../problem";
import { requireAdmin } from "../route-groups";
import { clientAddress } from "../throttle";
import { CONSOLE_CALL_HEADER, CONSOLE_SOURCE_HEADER, CONSOLE_SUB_HEADER } from "./session";

/** The largest gateway answer passed back (a tool result the console shows). */
const MAX_FORWARDED_BYTES = 16 * 1024 * 1024;

/**
 * Registers `GET /v1/tools`, `POST /v1/tools/{name}/call` and a server's browse lists (`GET
 * /v1/resources`, `GET /v1/prompts`), forwarded to `gatewayUrl`.
 */
export function registerGatewayForwarding(
  app: OpenAPIHono<AppEnv>,
  options: { gatewayUrl: string; adminToken: string; fetch?: typeof fetch },
): void {
  const base = options.gatewayUrl.replace(/\/$/, "");
  const send = options.fetch ?? fetch;
  const forward = async (c: Context<AppEnv>) => {
    const url = new URL(c.req.url);
    const response = await send(`${base}${url.pathname}${url.search}`, {
      method: c.req.method,
      headers: {
        authorization: `Bearer ${options.adminToken}`,
        accept: "application/json",
        // The gateway audits the call as the console's (plane `console`), by whom and from where.
        [CONSOLE_CALL_HEADER]: "1",
        ...consoleCaller(c),
        ...(c.req.method === "POST" ? { "content-type": "application/json" } : {}),
      },
      ...(c.req.method === "POST" ? { body: await c.req.text() } : {}),
      signal: c.req.raw.signal,
    });
    const body = await response.arrayBuffer();
    if (body.byteLength > MAX_FORWARDED_BYTES) {
      return problemOf(c, "upstream.response_too_large", "The gateway's answer is too large to pass on.");
    }
    return new Response(body, {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
    });
  };
  app.get("/v1/tools", requireAdmin, forward);
  app.post("/v1/tools/:name/call", requireAdmin, forward);
  app.get("/v1/resources", requireAdmin, forward);
  app.get("/v1/prompts", requireAdmin, forward);
}

/** The headers naming the console's admin (their provider subject, if any) and the browser's address. */
function consoleCaller(c: Context<AppEnv>): Record<string, string> {
  const principal = c.get("principal");
  const sub = principal?.kind === "admin" ? principal.sub : undefined;
  const source = clientAddress(c);
  return {
    ...(sub ? { [CONSOLE_SUB_HEADER]: sub } : {}),
    ...(source ? { [CONSOLE_SOURCE_HEADER]: source } : {}),
  };
}
