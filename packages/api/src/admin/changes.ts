/**
 * Pending tool definition changes (pinning): an admin lists a server's, and approves or rejects each.
 * The decision rewrites the catalogue the data plane serves (its clients then hear `list_changed`).
 */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  AppError,
  type Decision,
  decideChange,
  type PendingChange,
  PINNED_FIELDS,
  viewChange,
} from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { json, problems, route } from "../openapi-helpers";
import { IdParam } from "./params";
import { type AdminDeps, findServer } from "./service";

/** How often a decision is tried again when the catalogue was rewritten under it (a probe meanwhile). */
const DECISION_ATTEMPTS = 5;

const ToolDef = z.record(z.string(), z.unknown()).openapi({
  description:
    "a tool's definition as the upstream lists it (name, title, description, schemas, annotations, _meta)",
});

export const ToolChangeView = z
  .object({
    id: z.string(),
    tool: z.string().openapi({ description: "the upstream's own name of the tool" }),
    kind: z.enum(["added", "changed"]),
    before: ToolDef.nullable().openapi({ description: "the pinned definition (null for a new tool)" }),
    after: ToolDef.openapi({ description: "the upstream's definition, waiting for approval" }),
    diff: z.array(z.object({ field: z.enum(PINNED_FIELDS), before: z.unknown(), after: z.unknown() })),
    screening: z.array(z.object({ rule: z.string(), detail: z.string() })).openapi({
      description: "what screening flagged in the new definition (it informs; it never approves)",
    }),
    detectedAt: z.string(),
  })
  .openapi("ToolChange");

const ChangeList = z.object({ changes: z.array(ToolChangeView) }).openapi("ToolChangeList");
const DecisionView = z
  .object({ id: z.string(), tool: z.string(), decision: z.enum(["approved", "rejected"]) })
  .openapi("ToolChangeDecision");

const ChangeParams = IdParam.extend({
  changeId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: "A pending change's id", param: { name: "changeId", in: "path" } }),
});

/** A server's pending changes, oldest first. */
export async function listChanges(deps: AdminDeps, idOrName: string): Promise<PendingChange[]> {
  const server = await findServer(deps, idOrName);
  const catalog = await deps.store.statuses.getCatalog(server.id);
  return (catalog?.pins?.changes ?? [])
    .map((change) => viewChange(catalog?.tools ?? [], change))
    .sort((a, b) => (a.detectedAt < b.detectedAt ? -1 : 1));
}

/**
 * Approves or rejects change `changeId` of a server: written only over the catalogue it was decided on
 * (a probe or another decision meanwhile makes it decide again), so a decision applies once; 404
 * `change.not_found` when no such change is pending (decided already, or superseded by a newer one).
 */
export async function decide(
  deps: AdminDeps,
  idOrName: string,
  changeId: string,
  decision: Decision,
): Promise<{ id: string; tool: string; decision: Decision }> {
  const server = await findServer(deps, idOrName);
  for (let attempt = 1; attempt <= DECISION_ATTEMPTS; attempt++) {
    const catalog = await deps.store.statuses.getCatalog(server.id);
    const decided = catalog && !catalog.damaged ? decideChange(catalog, changeId, decision) : undefined;
    if (!catalog || !decided)
      throw new AppError("change.not_found", `Server '${server.name}' has no pending change '${changeId}'.`);
    const { change, ...pinned } = decided;
    const found = { ...pinned, ...(catalog.profile ? { profile: catalog.profile } : {}) };
    if (await deps.store.statuses.repin(server.id, found, catalog.hash ?? null)) {
      deps.noteChange?.({
        resource: { type: "change", id: change.id, name: change.tool },
        server: { id: server.id, name: server.name },
      });
      deps.logger.info(`tool change ${decision}`, { serverId: server.id, tool: change.tool, changeId });
      return { id: change.id, tool: change.tool, decision };
    }
  }
  throw new AppError("server.version_conflict", "The server's tools kept changing; try again.");
}

/** Registers the pending-change routes in the admin group; `scoped` gives a request's deps. */
export function registerChangeRoutes(
  app: OpenAPIHono<AppEnv>,
  scoped: (c: Context<AppEnv>) => AdminDeps,
): void {
  app.openapi(
    route({
      method: "get",
      path: "/v1/servers/{id}/changes",
      tags: ["servers"],
      summary: "Pending tool definition changes (pinning `approve`): new tools and changed definitions",
      description:
        "Each change names its tool, the pinned definition (`before`, null for a new tool), the upstream's (`after`), a diff per field and what screening flagged. Until approved, clients see the pinned definition (a new tool not at all) and calls to a changed tool are refused with 409 `tool.definition_changed`.",
      request: { params: IdParam },
      responses: { 200: json(ChangeList, "Pending changes"), ...problems(404, 409) },
    }),
    async (c) => c.json({ changes: await listChanges(scoped(c), c.req.valid("param").id) }, 200),
  );
  for (const [verb, decision] of [
    ["approve", "approved"],
    ["reject", "rejected"],
  ] as const) {
    app.openapi(
      route({
        method: "post",
        path: `/v1/servers/{id}/changes/{changeId}/${verb}`,
        tags: ["servers"],
        summary:
          decision === "approved"
            ? "Approve a pending change: its definition is pinned and served (clients hear list_changed)"
            : "Reject a pending change: the pinned definition stays, and this definition is not offered again",
        request: { params: ChangeParams },
        responses: { 200: json(DecisionView, "Decided"), ...problems(404, 409) },
      }),
      async (c) => {
        const { id, changeId } = c.req.valid("param");
        return c.json(await decide(scoped(c), id, changeId, decision), 200);
      },
    );
  }
}
