/** Dynamic client registration (RFC 7591): public clients of the code flow. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { type SourceThrottle, sourceOf } from "../throttle";
import { RegistrationRequest } from "./clients";
import { type AuthorizationServer, noStore } from "./http";

/**
 * Serves `POST /oauth/register`: 201 with the client's metadata, 400 with RFC 7591 §3.2.2 errors, or
 * — a source past its share of `registrations` — 429 in the same shape (`rate_limited`, Retry-After).
 */
export function registerRegistrationRoute(
  app: OpenAPIHono<AppEnv>,
  server: AuthorizationServer,
  registrations: SourceThrottle,
): void {
  app.post("/oauth/register", async (c) => {
    noStore(c);
    const wait = registrations.take(sourceOf(c));
    if (wait !== undefined) {
      c.header("retry-after", String(wait));
      return c.json(
        { error: "rate_limited", error_description: `Too many registrations; try again in ${wait} s.` },
        429,
      );
    }
    const body = await c.req.json().catch(() => undefined);
    const parsed = RegistrationRequest.safeParse(body);
    if (!parsed.success) {
      const redirect = parsed.error.issues.some((issue) => issue.path[0] === "redirect_uris");
      return c.json(
        {
          error: redirect ? "invalid_redirect_uri" : "invalid_client_metadata",
          error_description: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
        },
        400,
      );
    }
    const client = await server.clients.register(parsed.data);
    c.get("logger").info("oauth client registered", { clientId: client.clientId });
    return c.json(
      {
        client_id: client.clientId,
        client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
        client_name: client.clientName,
        redirect_uris: client.redirectUris,
        grant_types: client.grantTypes,
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      201,
    );
  });
}
