/**
 * Who may reach which servers through OAuth: a mapping per user or group (`user:<name>`,
 * `group:<name>`) to servers, named or by id in, stored by id (as key scopes are). At authorization a
 * user reaches the union of their own mapping and their groups'; no mapping, no access.
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AccessMapping, AccessSubject, Store } from "@mcpgw/aws";
import { AppError, changedFields } from "@mcpgw/core";
import type { AppEnv } from "../env";
import { grantsFit } from "../oauth/resource-check";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { forgetSubject } from "../upstream-authorization";
import { AccessMappingList, AccessMappingView } from "../views";
import { noteChange } from "./change-audit";
import { NotBlank, PersonSubject, resolveScope } from "./keys";
import { assertToolsets, ToolPolicyInput, ToolsetNames } from "./toolsets";

/** `user:<name>` or `group:<name>`, as the sign-in records them. */
const Subject = PersonSubject.openapi({ param: { name: "subject", in: "path" }, example: "user:ada" });

const PutAccess = z.strictObject({
  servers: z.array(NotBlank.max(64)).max(500).nullable().openapi({
    description:
      "Names or ids of the servers (unknown → 404 access.unknown_server); null = every server (with `toolsets`: none beyond the sets)",
  }),
  toolsets: ToolsetNames.optional().openapi({
    description: "Tool sets the subject may use besides its servers (unknown → 404 access.unknown_toolset)",
  }),
  toolPolicy: ToolPolicyInput.optional(),
});

/** Registers the access-mapping routes (admin only). */
export function registerAccessRoutes(app: OpenAPIHono<AppEnv>, deps: { store: Store }): void {
  const names = async () =>
    new Map((await deps.store.servers.listPlain()).map((server) => [server.id, server.name]));

  app.openapi(
    route({
      method: "get",
      path: "/v1/access",
      tags: ["access"],
      summary: "Who may reach which servers by OAuth sign-in (users and groups)",
      responses: { 200: json(AccessMappingList, "Mappings") },
    }),
    async (c) => {
      const [mappings, byId] = await Promise.all([deps.store.oauth.listAccess(), names()]);
      return c.json({ access: mappings.map((mapping) => view(mapping, byId)) }, 200);
    },
  );

  app.openapi(
    route({
      method: "put",
      path: "/v1/access/{subject}",
      tags: ["access"],
      summary: "Map a user or group to the servers it may reach by OAuth (replaces its mapping)",
      request: { params: z.object({ subject: Subject }), ...jsonBody(PutAccess) },
      responses: { 200: json(AccessMappingView, "The mapping as stored"), ...problems(404) },
    }),
    async (c) => {
      const subject = c.req.valid("param").subject as AccessSubject;
      const { servers, toolPolicy } = c.req.valid("json");
      const scope =
        servers === null ? null : await resolveScope(deps.store, servers, "access.unknown_server");
      const toolsets = await assertToolsets(
        deps.store,
        c.req.valid("json").toolsets,
        "access.unknown_toolset",
      );
      // A mapping with tool sets or a policy travels whole in its users' tokens (`grants`).
      const grant = { serverIds: scope ? [...scope.keys()] : null, toolsets: toolsets ?? [], toolPolicy };
      if ((toolsets || toolPolicy) && !grantsFit([grant]))
        throw new AppError(
          "request.invalid",
          "The mapping's servers, tool sets and tool policy are too large to carry in an access token (4 KiB).",
        );
      const [before] = await deps.store.oauth.access([subject]);
      const stored = await deps.store.oauth.putAccess(subject, scope ? [...scope.keys()].sort() : null, {
        toolsets,
        toolPolicy,
      });
      noteChange(c, {
        resource: { type: "access", id: subject },
        fields: changedFields(grantOf(before), grantOf(stored)),
      });
      c.get("logger").info("access mapping set", { subject, scoped: stored.serverIds !== null });
      return c.json(view(stored, scope ?? new Map()), 200);
    },
  );

  app.openapi(
    route({
      method: "delete",
      path: "/v1/access/{subject}",
      tags: ["access"],
      summary: "Remove a user's or group's mapping (new sign-ins and refreshes lose that access)",
      request: { params: z.object({ subject: Subject }) },
      responses: { 204: { description: "Removed" }, ...problems(404) },
    }),
    async (c) => {
      const subject = c.req.valid("param").subject as AccessSubject;
      if (!(await deps.store.oauth.deleteAccess(subject)))
        throw new AppError("request.not_found", `No access mapping for '${subject}'.`);
      // A user's own upstream connections go with their access (a group's members keep theirs).
      const upstreamCredentials = subject.startsWith("user:") ? await forgetSubject(deps.store, subject) : 0;
      c.get("logger").info("access mapping removed", { subject, upstreamCredentials });
      return c.body(null, 204);
    },
  );
}

/** What a mapping grants (its subject and time apart): what a put may change. */
function grantOf(mapping: AccessMapping | undefined): Record<string, unknown> | undefined {
  if (!mapping) return undefined;
  const { subject: _s, updatedAt: _u, ...grant } = mapping;
  return grant;
}

function view(mapping: AccessMapping, names: ReadonlyMap<string, string>) {
  const servers = mapping.serverIds?.flatMap((id) => names.get(id) ?? []).sort() ?? null;
  return {
    subject: mapping.subject,
    servers,
    serverIds: mapping.serverIds,
    toolsets: mapping.toolsets ?? [],
    toolPolicy: mapping.toolPolicy ?? null,
    updatedAt: mapping.updatedAt,
  };
}
