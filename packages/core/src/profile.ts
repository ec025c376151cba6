import { createHash } from "node:crypto";
import { z } from "zod";
import { jsonDepth, MAX_JSON_DEPTH } from "./json-depth";

/** The longest protocol revision kept (`2026-07-28`, `2025-03-26`, a draft's name). */
export const MAX_PROTOCOL_VERSION_CHARS = 32;
/** The longest `instructions` text kept, in characters: an upstream could send megabytes. */
export const MAX_INSTRUCTIONS_CHARS = 64 * 1024;
/** The largest `capabilities` or `serverInfo` kept, as JSON bytes (icons may be `data:` URIs). */
export const MAX_PROFILE_OBJECT_BYTES = 64 * 1024;
/** The largest `server/discover` answer kept, as JSON bytes (it repeats capabilities, identity, instructions). */
export const MAX_DISCOVER_BYTES = 256 * 1024;

/** The most 2025 tool names a dual-era server's profile keeps (its 2025 surface's tools, by name). */
export const MAX_LEGACY_TOOLS = 1_000;
/** The longest tool name kept in a profile (the spec's own limit on tool names). */
export const MAX_TOOL_NAME_CHARS = 128;

/** A protocol revision: a date (`2025-11-25`) or a word (`DRAFT-2026-v1`); no spaces, at most 32 characters. */
export const PROTOCOL_VERSION = /^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[A-Za-z][A-Za-z0-9._-]*)$/;
export const ProtocolVersion = z.string().max(MAX_PROTOCOL_VERSION_CHARS).regex(PROTOCOL_VERSION);

/** A plain JSON object nesting at most {@link MAX_JSON_DEPTH} levels and at most `maxBytes` as JSON. */
function jsonObject(maxBytes: number) {
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (jsonDepth(value) > MAX_JSON_DEPTH) {
      ctx.addIssue({ code: "custom", message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
      return;
    }
    const bytes = jsonBytes(value);
    if (bytes === undefined) ctx.addIssue({ code: "custom", message: "is not plain JSON" });
    else if (bytes > maxBytes) ctx.addIssue({ code: "custom", message: `is over ${maxBytes} bytes as JSON` });
  });
}

const utf8 = new TextEncoder();

function jsonBytes(value: unknown): number | undefined {
  try {
    return utf8.encode(JSON.stringify(value)).length;
  } catch {
    return undefined; // a BigInt, or a cycle jsonDepth let through (it cannot: a cycle nests forever)
  }
}

/** What one era of a server says of itself: the revision negotiated, capabilities, identity, instructions. */
export const EraSurface = z.object({
  protocolVersion: ProtocolVersion,
  capabilities: jsonObject(MAX_PROFILE_OBJECT_BYTES),
  serverInfo: jsonObject(MAX_PROFILE_OBJECT_BYTES).optional(),
  instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).optional(),
});
export type EraSurface = z.infer<typeof EraSurface>;

/**
 * What a session learned of its server: the protocol revision it negotiated, the server's declared
 * capabilities, identity and instructions, and (modern era) its `server/discover` answer, kept so a
 * later connect needs no round trip — plus, for a server that also answers a 2025 `initialize`, that
 * era's surface (`legacy`). Bounded throughout: it comes from an upstream nobody vouches for.
 */
export const ServerProfile = EraSurface.extend({
  discover: jsonObject(MAX_DISCOVER_BYTES).optional(),
  /** The 2025 surface, with the names of the tools it lists (a 2025 client's call goes there only for those). */
  legacy: EraSurface.extend({
    tools: z.array(z.string().max(MAX_TOOL_NAME_CHARS)).max(MAX_LEGACY_TOOLS).optional(),
  }).optional(),
});
export type ServerProfile = z.infer<typeof ServerProfile>;

/** The first revision of the 2026 era; revisions are dates, so they sort as strings. */
const FIRST_MODERN_REVISION = "2026-07-28";

/** Whether a protocol revision is of the 2026 era (`server/discover`), not a 2025 one (`initialize`). */
export function isModernRevision(revision: string): boolean {
  return revision >= FIRST_MODERN_REVISION;
}

/**
 * The revisions a profiled server speaks, the negotiated one first: `["2026-07-28", "2025-11-25"]` for
 * a server that serves both eras, one revision otherwise.
 */
export function profileEras(profile: ServerProfile): string[] {
  return profile.legacy
    ? [profile.protocolVersion, profile.legacy.protocolVersion]
    : [profile.protocolVersion];
}

/**
 * The profile to keep of what a session reported, leniently: undefined only when its revision or its
 * capabilities are unusable; instructions past {@link MAX_INSTRUCTIONS_CHARS} are cut short, and a
 * `serverInfo` or `discover` that is not a bounded JSON object is left out, as is a `legacy` surface
 * that is unusable (a usable one keeps its bounded tool names). Unknown keys are dropped.
 */
export function toServerProfile(reported: unknown): ServerProfile | undefined {
  const surface = toEraSurface(reported);
  if (!surface) return undefined;
  const raw = reported as Record<string, unknown>;
  const profile: ServerProfile = surface;
  const discover = ServerProfile.shape.discover.safeParse(raw.discover);
  if (discover.success && discover.data) profile.discover = discover.data;
  const legacy = toEraSurface(raw.legacy);
  if (legacy) profile.legacy = { ...legacy, ...legacyTools(raw.legacy) };
  return profile;
}

/**
 * A 2025 surface's tool names, bounded: names past {@link MAX_TOOL_NAME_CHARS} (no tool the spec allows)
 * left out, sorted and each once (a server listing in another order each time leaves its profile's
 * digest as it was), the first {@link MAX_LEGACY_TOOLS} kept; none when it reported no list.
 */
function legacyTools(reported: unknown): { tools?: string[] } {
  const { tools } = reported as { tools?: unknown };
  if (!Array.isArray(tools)) return {};
  const names = tools.filter(
    (name): name is string => typeof name === "string" && name.length <= MAX_TOOL_NAME_CHARS,
  );
  return { tools: [...new Set(names)].sort().slice(0, MAX_LEGACY_TOOLS) };
}

/** One era's surface, bounded as {@link toServerProfile} keeps it (undefined when unusable). */
function toEraSurface(reported: unknown): EraSurface | undefined {
  if (typeof reported !== "object" || reported === null) return undefined;
  const raw = reported as Record<string, unknown>;
  const { shape } = EraSurface;
  const protocolVersion = shape.protocolVersion.safeParse(raw.protocolVersion);
  const capabilities = shape.capabilities.safeParse(raw.capabilities);
  if (!protocolVersion.success || !capabilities.success) return undefined;
  return { protocolVersion: protocolVersion.data, ...boundedFace(raw) };
}

/**
 * What a server says of itself — capabilities, identity, instructions — bounded as a profile keeps it:
 * capabilities `{}` when unusable, instructions cut short, a `serverInfo` that is not a bounded JSON
 * object left out.
 */
export function boundedFace(reported: {
  capabilities?: unknown;
  serverInfo?: unknown;
  instructions?: unknown;
}): Pick<ServerProfile, "capabilities" | "serverInfo" | "instructions"> {
  const { shape } = ServerProfile;
  const capabilities = shape.capabilities.safeParse(reported.capabilities);
  const face: Pick<ServerProfile, "capabilities" | "serverInfo" | "instructions"> = {
    capabilities: capabilities.success ? capabilities.data : {},
  };
  const serverInfo = shape.serverInfo.safeParse(reported.serverInfo);
  if (serverInfo.success && serverInfo.data) face.serverInfo = serverInfo.data;
  if (typeof reported.instructions === "string")
    face.instructions = cut(reported.instructions, MAX_INSTRUCTIONS_CHARS);
  return face;
}

/** `text` cut to at most `max` characters, never through a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const cutShort = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cutShort) ? cutShort.slice(0, -1) : cutShort;
}

/**
 * A digest of what a session reported of its server (revision, capabilities, identity, instructions,
 * discover answer), independent of key order: a liveness check compares it with the one of the last
 * tools listing, and lists the tools again when the server changed (an upgrade, a new revision).
 */
export function profileDigest(profile: ServerProfile | undefined): string {
  return createHash("sha256")
    .update(canonicalJson(profile ?? null))
    .digest("base64url");
}

/** JSON with every object's keys sorted (so equal values give equal text). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
