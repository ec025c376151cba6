/**
 * Pinned tool definitions: what a server's catalogue serves is what an admin approved. A probe that
 * finds a tool's definition changed, or a new tool, records a pending change instead of serving it; a
 * tool removed upstream goes at once. Pure: the store writes what these functions decide.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./profile";
import { ToolInfo } from "./tool";
import type { ScreeningFlag } from "./tool-screening";

/** How a server's tool definitions reach callers: `approve` (pinned; changes wait), `auto` (pinned at once, logged), `off`. */
export const PINNING_MODES = ["approve", "auto", "off"] as const;
export const Pinning = z.enum(PINNING_MODES).meta({
  description:
    "approve: tool definitions are pinned and a changed or new tool waits for an admin's approval (GET /v1/servers/{id}/changes); auto: changes are pinned as they come, each logged; off: served as the upstream lists them. Default: PINNING_DEFAULT (approve)",
});
export type Pinning = z.infer<typeof Pinning>;

/** The fields of a tool's definition that are pinned (and compared, and diffed), in this order. */
export const PINNED_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "_meta",
] as const;

/** A stable hash of a tool's pinned fields (canonical JSON: key order does not matter). */
export function toolDefinitionHash(tool: ToolInfo): string {
  const fields = Object.fromEntries(PINNED_FIELDS.map((field) => [field, tool[field]]));
  return createHash("sha256").update(canonicalJson(fields)).digest("base64url");
}

/** One pinned field that differs: its value before and after (absent → null). */
export interface FieldDiff {
  field: (typeof PINNED_FIELDS)[number];
  before: unknown;
  after: unknown;
}

/** The pinned fields that differ between two definitions of a tool (`before` undefined: every field `after` has). */
export function diffTool(before: ToolInfo | undefined, after: ToolInfo): FieldDiff[] {
  return PINNED_FIELDS.flatMap((field) => {
    const was = before?.[field];
    const now = after[field];
    if (canonicalJson(was ?? null) === canonicalJson(now ?? null)) return [];
    return [{ field, before: was ?? null, after: now ?? null }];
  });
}

/** Screens a tool's new definition against its pinned one (none for a new tool): `screenToolChange`. */
export type ScreenChange = (before: ToolInfo | undefined, after: ToolInfo) => ScreeningFlag[];

/**
 * A change waiting for an admin, as stored: the upstream's new definition of a pinned tool, or a new
 * tool. What it changes from (the pinned definition) and the diff are read off the catalogue beside it
 * ({@link viewChange}), so a change costs the catalogue one definition.
 */
export interface StoredChange {
  /** Names the tool and the new definition: a newer definition is another change. */
  id: string;
  tool: string;
  kind: "added" | "changed";
  after: ToolInfo;
  screening: ScreeningFlag[];
  detectedAt: string;
}

/** A pending change as an admin reviews it: with the pinned definition (`before`) and a diff per field. */
export interface PendingChange extends StoredChange {
  before: ToolInfo | null;
  diff: FieldDiff[];
}

/** A stored change of a catalogue whose pinned tools are `tools`, as an admin reviews it. */
export function viewChange(tools: readonly ToolInfo[], change: StoredChange): PendingChange {
  const before = change.kind === "changed" ? tools.find((tool) => tool.name === change.tool) : undefined;
  return { ...change, before: before ?? null, diff: diffTool(before, change.after) };
}

/** What a catalogue keeps about its pins besides the pinned tools themselves. */
export interface Pins {
  /** Pinned tools whose upstream definition differs now: calls to them are refused. */
  drifted?: string[];
  /** Per tool, the hash of the definition an admin rejected: it is not offered again. */
  rejected?: Record<string, string>;
  changes?: StoredChange[];
}

const Flag = z.object({ rule: z.string(), detail: z.string() });
/** {@link Pins} as a stored catalogue body holds them (read back through this schema). */
export const StoredPins = z.object({
  drifted: z.array(z.string()).optional(),
  rejected: z.record(z.string(), z.string()).optional(),
  changes: z
    .array(
      z.object({
        id: z.string(),
        tool: z.string(),
        kind: z.enum(["added", "changed"]),
        after: ToolInfo,
        screening: z.array(Flag),
        detectedAt: z.string(),
      }),
    )
    .optional(),
});

/** The most pending changes one server keeps (one per tool; the rest wait for a later probe). */
export const MAX_PENDING_CHANGES = 200;

/** The most bytes (JSON) of pending definitions one server keeps: past them, the newest wait for a later probe. */
export const MAX_PENDING_BYTES = 256 * 1024;

/**
 * The largest definition (JSON bytes) kept as a pending change: a larger one is left out (logged) and
 * never served — a changed tool stays refused under `approve` (`auto` takes it), as no admin could
 * approve what no change shows. As large as all pending changes together, so any definition that can
 * wait alone can be approved.
 */
export const MAX_CHANGE_BYTES = MAX_PENDING_BYTES;

/** A definition's size as a catalogue body stores it (JSON bytes). */
function definitionBytes(tool: ToolInfo): number {
  return Buffer.byteLength(JSON.stringify(tool));
}

/** A catalogue's tools and pins. */
export interface PinnedTools {
  tools: ToolInfo[];
  pins?: Pins;
}

/** The outcome of {@link reconcileTools}: what to serve and keep, and which served tools changed (for `auto`'s log). */
export interface Reconciled extends PinnedTools {
  changed: string[];
  /** Tools whose new definition was left out of the pending changes (past the size bounds); to be logged. */
  dropped: string[];
}

/** A change's id: its tool and new definition. */
function changeId(tool: string, hash: string): string {
  return createHash("sha256").update(`${tool}\0${hash}`).digest("base64url").slice(0, 22);
}

/** Pins with empty parts left out (so an unpinned catalogue's body is as before pinning). */
function compactPins({ drifted = [], rejected = {}, changes = [] }: Pins): Pins | undefined {
  const pins: Pins = {
    ...(drifted.length > 0 ? { drifted } : {}),
    ...(Object.keys(rejected).length > 0 ? { rejected } : {}),
    ...(changes.length > 0 ? { changes } : {}),
  };
  return Object.keys(pins).length > 0 ? pins : undefined;
}

/** `tools` with `pins` beside them only when there are any. */
function withPins(tools: ToolInfo[], pins: Pins): PinnedTools {
  const compact = compactPins(pins);
  return compact ? { tools, pins: compact } : { tools };
}

/**
 * What a server's catalogue becomes after a probe listed `upstream`, given what it served
 * (`previous`; undefined on the first listing, which pins everything). `approve`: a pinned tool whose
 * definition is unchanged stays; a changed one keeps its pinned definition, is marked drifted, and
 * its new definition waits as a change (unless it is the one rejected); a new tool waits; a tool gone
 * upstream goes (with its change). `auto` and `off` serve the upstream's list (and keep no pins).
 */
export function reconcileTools(
  previous: PinnedTools | undefined,
  upstream: ToolInfo[],
  mode: Pinning,
  at: string,
  screen: ScreenChange,
): Reconciled {
  const pinned = new Map((previous?.tools ?? []).map((tool) => [tool.name, tool]));
  if (mode !== "approve" || !previous) {
    const changed = previous
      ? upstream
          .filter((tool) => {
            const was = pinned.get(tool.name);
            return !was || toolDefinitionHash(was) !== toolDefinitionHash(tool);
          })
          .map((tool) => tool.name)
      : [];
    return { tools: upstream, changed, dropped: [] };
  }
  const earlier = new Map((previous.pins?.changes ?? []).map((change) => [change.id, change]));
  const rejectedBefore = previous.pins?.rejected ?? {};
  const tools: ToolInfo[] = [];
  const drifted: string[] = [];
  const rejected: Record<string, string> = {};
  const changes: StoredChange[] = [];
  for (const tool of upstream) {
    const was = pinned.get(tool.name);
    const hash = toolDefinitionHash(tool);
    if (was && toolDefinitionHash(was) === hash) {
      tools.push(was);
      continue;
    }
    if (was) {
      tools.push(was);
      drifted.push(tool.name);
    }
    if (rejectedBefore[tool.name] === hash) {
      rejected[tool.name] = hash;
      continue;
    }
    const id = changeId(tool.name, hash);
    changes.push({
      id,
      tool: tool.name,
      kind: was ? "changed" : "added",
      after: tool,
      screening: earlier.get(id)?.screening ?? screen(was, tool),
      detectedAt: earlier.get(id)?.detectedAt ?? at,
    });
  }
  const { kept, dropped } = boundChanges(changes, earlier);
  return { ...withPins(tools, { drifted, rejected, changes: kept }), changed: [], dropped };
}

/**
 * The pending changes a catalogue keeps: those already pending first, then the new ones, in order, up to
 * {@link MAX_PENDING_CHANGES} and {@link MAX_PENDING_BYTES}; a definition over {@link MAX_CHANGE_BYTES} is
 * never kept. The rest are `dropped` (the newest): a later probe offers them again.
 */
export function boundChanges(
  changes: StoredChange[],
  earlier: ReadonlyMap<string, StoredChange>,
): { kept: StoredChange[]; dropped: string[] } {
  const ordered = [
    ...changes.filter((change) => earlier.has(change.id)),
    ...changes.filter((change) => !earlier.has(change.id)),
  ];
  const kept: StoredChange[] = [];
  const dropped: string[] = [];
  let bytes = 0;
  for (const change of ordered) {
    const size = definitionBytes(change.after);
    if (size > MAX_CHANGE_BYTES || bytes + size > MAX_PENDING_BYTES || kept.length >= MAX_PENDING_CHANGES) {
      dropped.push(change.tool);
      continue;
    }
    bytes += size;
    kept.push(change);
  }
  return { kept: changes.filter((change) => kept.includes(change)), dropped };
}

/** An admin's decision on a pending change. */
export type Decision = "approved" | "rejected";

/**
 * The catalogue after an admin's decision on change `id`: approved → its definition is pinned (a new
 * tool served, a drifted one served as it is now); rejected → its definition is remembered and not
 * offered again. Undefined when there is no such pending change.
 */
export function decideChange(
  current: PinnedTools,
  id: string,
  decision: Decision,
): (PinnedTools & { change: StoredChange }) | undefined {
  const pins = current.pins ?? {};
  const change = pins.changes?.find((pending) => pending.id === id);
  if (!change) return undefined;
  const changes = (pins.changes ?? []).filter((pending) => pending !== change);
  if (decision === "rejected") {
    const rejected = { ...pins.rejected, [change.tool]: toolDefinitionHash(change.after) };
    return { ...withPins(current.tools, { ...pins, rejected, changes }), change };
  }
  const tools =
    change.kind === "added"
      ? [...current.tools.filter((tool) => tool.name !== change.tool), change.after]
      : current.tools.map((tool) => (tool.name === change.tool ? change.after : tool));
  const drifted = (pins.drifted ?? []).filter((name) => name !== change.tool);
  return { ...withPins(tools, { ...pins, drifted, changes }), change };
}

/** The effective pinning of a server: its own setting, else the deployment's default. */
export function effectivePinning(server: { pinning?: Pinning | undefined }, fallback: Pinning): Pinning {
  return server.pinning ?? fallback;
}
