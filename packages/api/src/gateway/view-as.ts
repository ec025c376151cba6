/**
 * "View as": the admin reads the catalogue as one caller would get it — a key (`key:<id>`) or one
 * access mapping (`user:<name>`, `group:<name>`, alone: a user's groups are not known here). The
 * caller is rebuilt as the principal its own requests carry, so the gateway's own decision applies.
 */
import { z } from "@hono/zod-openapi";
import type { AccessSubject, Store } from "@mcpgw/aws";
import { AppError } from "@mcpgw/core";
import { keyPrincipal } from "../auth";
import type { Principal } from "../env";
import { reachOfMappings } from "../oauth/resource-check";

/** `key:<id>`, `user:<name>` or `group:<name>`. */
export const ViewAs = z
  .string()
  .max(300)
  .regex(/^(key|user|group):\S(?:[^\n]*\S)?$/, "must be key:<id>, user:<name> or group:<name>")
  .openapi({
    description: "Admin only: the catalogue as this key or access mapping sees it",
    example: "key:0b6f…",
  });

/** The principal `as` names; 403 for a caller other than the admin, 404 for an unknown key or mapping. */
export async function principalAs(
  store: Store,
  viewer: Principal | undefined,
  as: string,
): Promise<Principal> {
  if (viewer?.kind !== "admin")
    throw new AppError("auth.forbidden", "Only the admin may view the tools as another caller.");
  if (as.startsWith("key:")) {
    const id = as.slice("key:".length);
    const key = (await store.keys.list()).find((candidate) => candidate.id === id);
    if (!key) throw new AppError("request.not_found", `No API key with id '${id}'.`);
    return keyPrincipal(key);
  }
  const [mapping] = await store.oauth.access([as as AccessSubject]);
  if (!mapping) throw new AppError("request.not_found", `No access mapping for '${as}'.`);
  const { ids, grants } = reachOfMappings([mapping]);
  return { kind: "user", sub: mapping.subject, serverIds: ids, ...(grants ? { grants } : {}) };
}
