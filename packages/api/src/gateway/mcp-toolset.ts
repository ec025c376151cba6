/**
 * `/mcp/sets/{name}`: the tools of one tool set (those the caller may use), under the set's overrides —
 * an overridden name lists and calls the original tool.
 */
import type { ToolOverride } from "@mcpgw/aws";
import { AppError } from "@mcpgw/core";
import { type ResolvedSet, resolveSet, toolsetIndex } from "../toolsets";
import type { CatalogTool } from "./catalogue";
import type { GatewayDeps } from "./deps";

/** A set's tools by the name the set lists them under: the tool's qualified name and its override. */
export type SetListing = Map<string, { qualified: string; override: ToolOverride }>;

const listings = new WeakMap<ResolvedSet, SetListing>();

/**
 * The set's listing now: each member under its overridden name, else its qualified name (of two
 * members that would list under one name, the first by qualified name keeps it). 404
 * `toolset.not_found` when there is no such set.
 */
export async function setListing(
  deps: Pick<GatewayDeps, "store" | "directory">,
  name: string,
): Promise<SetListing> {
  const [set, snapshot] = await Promise.all([
    toolsetIndex(deps.store).named(name),
    deps.directory.snapshot(),
  ]);
  if (!set) throw new AppError("toolset.not_found", `No tool set named '${name}'.`);
  const resolved = resolveSet(set, snapshot);
  let listing = listings.get(resolved);
  if (!listing) {
    listing = new Map();
    for (const qualified of [...resolved.members.keys()].sort()) {
      const override = resolved.members.get(qualified) ?? {};
      const listed = override.name ?? qualified;
      if (!listing.has(listed)) listing.set(listed, { qualified, override });
    }
    listings.set(resolved, listing);
  }
  return listing;
}

/** The catalogue's tools that are in the listing, each as the set shows it (a definition to list). */
export function setTools(
  listing: SetListing,
  tools: readonly CatalogTool[],
  shown: (tool: CatalogTool) => Record<string, unknown>,
): Record<string, unknown>[] {
  const byQualified = new Map(tools.map((tool) => [tool.name, tool]));
  const listed: Record<string, unknown>[] = [];
  for (const [name, { qualified, override }] of listing) {
    const tool = byQualified.get(qualified);
    if (!tool) continue;
    const definition = shown(tool);
    listed.push({
      ...definition,
      name,
      ...(override.description !== undefined ? { description: override.description } : {}),
      ...(override.annotations
        ? { annotations: { ...(definition.annotations as object | undefined), ...override.annotations } }
        : {}),
    });
  }
  return listed.sort((a, b) => (String(a.name) < String(b.name) ? -1 : 1));
}

/** The qualified name of the tool the set lists as `name`; `tool.not_found` when it lists none. */
export function setTarget(listing: SetListing, set: string, name: string): string {
  const found = listing.get(name);
  if (!found) throw new AppError("tool.not_found", `Tool set '${set}' has no tool '${name}'.`);
  return found.qualified;
}
