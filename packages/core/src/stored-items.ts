/**
 * Reading stored items safely: the one home of what a status, catalogue or config item must hold to
 * be trusted. An item that fails is never half-used: a status or catalogue is treated as absent (and
 * rewritten), a config is shown as unreadable (and can be deleted).
 */
import { z } from "zod";
import { type Pins, StoredPins } from "./pinning";
import { ServerProfile } from "./profile";
import { type PlainServer, Transport } from "./server";
import { ServerStatus, type StoredStatus, UpstreamAuthorization } from "./status";
import { ToolInfo } from "./tool";

/** A generation as stored: a whole number a fence can compare (DynamoDB `ADD` works on it). */
const Generation = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The diagnostics every status has; those stored before a field existed read it as null. */
const STATUS_FIELDS = Object.keys(ServerStatus.shape).filter(
  (field) => !(ServerStatus.shape[field as keyof typeof ServerStatus.shape] instanceof z.ZodOptional),
);

/**
 * A status item as the status it stores (internal fields left out), or undefined when it cannot be
 * trusted: no valid state or numeric generation, or a diagnostic of the wrong type. Optional fields
 * that do not parse are left out, as before.
 */
export function readStoredStatus(item: Record<string, unknown>): StoredStatus | undefined {
  const generation = Generation.safeParse(item.generation);
  if (!generation.success) return undefined;
  const status = ServerStatus.safeParse({
    ...Object.fromEntries(STATUS_FIELDS.map((field) => [field, item[field] ?? null])),
    toolCount: item.toolCount ?? 0,
    ...(typeof item.protocolVersion === "string" ? { protocolVersion: item.protocolVersion } : {}),
    ...(ServerStatus.shape.eras.safeParse(item.eras).data ? { eras: item.eras } : {}),
    ...(UpstreamAuthorization.safeParse(item.authorization).success
      ? { authorization: item.authorization }
      : {}),
    ...(typeof item.credentialExpiresAt === "string" || item.credentialExpiresAt === null
      ? { credentialExpiresAt: item.credentialExpiresAt }
      : {}),
    ...(typeof item.nextAttemptAt === "string" ? { nextAttemptAt: item.nextAttemptAt } : {}),
    ...(Generation.safeParse(item.pendingChanges).success ? { pendingChanges: item.pendingChanges } : {}),
  });
  if (!status.success) return undefined;
  return {
    ...status.data,
    generation: generation.data,
    supersededAt: typeof item.supersededAt === "string" ? item.supersededAt : null,
    ...(typeof item.toolsListedAt === "string" ? { toolsListedAt: item.toolsListedAt } : {}),
    ...(typeof item.profileDigest === "string" ? { profileDigest: item.profileDigest } : {}),
    ...(Generation.safeParse(item.failureCount).success ? { failureCount: item.failureCount as number } : {}),
    ...(Generation.safeParse(item.servingGeneration).success && typeof item.servingSince === "string"
      ? { servingGeneration: item.servingGeneration as number, servingSince: item.servingSince }
      : {}),
  };
}

/**
 * The generation a rewritten status starts at: above any a fenced writer could hold. The stored one is
 * unreadable, so the clock stands in for it — epoch ms outgrows a counter moved once per write — and a
 * stored number still legible (a numeric string, say) is stepped past too.
 */
export function freshGeneration(stored: unknown, now = Date.now()): number {
  const legible = typeof stored === "number" || typeof stored === "string" ? Number(stored) : Number.NaN;
  const past = Number.isSafeInteger(legible) && legible >= 0 ? legible + 1 : 0;
  return Math.min(Math.max(Math.floor(now), past), Number.MAX_SAFE_INTEGER);
}

const CatalogBody = z.union([
  z.array(ToolInfo),
  z.object({ tools: z.array(ToolInfo), profile: ServerProfile.optional(), pins: StoredPins.optional() }),
]);

/**
 * A catalogue's stored body (`{tools, profile, pins}`, or the bare tools array of old), or undefined if
 * it does not parse.
 */
export function readCatalogBody(
  json: string,
): { tools: ToolInfo[]; profile?: ServerProfile; pins?: Pins } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  const body = CatalogBody.safeParse(parsed);
  if (!body.success) return undefined;
  if (Array.isArray(body.data)) return { tools: body.data };
  const { tools, profile, pins } = body.data;
  return { tools, ...(profile ? { profile } : {}), ...(pins ? { pins: pins as Pins } : {}) };
}

/** The fields a config item cannot do without: who it is, its version, and how to reach it. */
const StoredConfig = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    version: z.number().int().positive(),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .and(
    z.discriminatedUnion("transport", [
      z.object({ transport: z.literal("http"), url: z.string().min(1) }),
      z.object({ transport: z.literal("stdio"), command: z.string().min(1) }),
    ]),
  );

/** What is wrong with a stored config item ("name missing", "version invalid"); empty when nothing. */
export function storedConfigProblems(item: Record<string, unknown>): string[] {
  const parsed = StoredConfig.safeParse(item);
  if (parsed.success) return [];
  const fields = new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? "config")));
  return [...fields].map((field) => `${field} ${item[field] === undefined ? "missing" : "invalid"}`);
}

/** The sentence an unreadable config's status carries. */
export function unreadableConfigSentence(problems: readonly string[]): string {
  return `the stored config is unreadable: ${problems.join(", ")}; delete the server and create it again`;
}

/**
 * What can be shown of a config item that is unreadable: its id (from its key when need be), a name
 * (its own, else the one it is listed under, else its id), disabled, and the sentence saying what is
 * wrong — enough to list it and to delete it, nothing to run it with.
 */
export function salvagedServer(
  id: string,
  item: Record<string, unknown>,
  problems: readonly string[],
): PlainServer {
  const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);
  const transport = Transport.safeParse(item.transport);
  const version = Generation.safeParse(item.version);
  return {
    id,
    name: text(item.name) ?? text(item.kindSort) ?? id,
    transport: transport.success ? transport.data : "http",
    enabled: false,
    timeoutSeconds: typeof item.timeoutSeconds === "number" ? item.timeoutSeconds : 30,
    scope: "project",
    version: version.success ? version.data : 0,
    createdAt: text(item.createdAt) ?? "",
    updatedAt: text(item.updatedAt) ?? "",
    masked: {},
    sealIntact: true,
    unreadable: unreadableConfigSentence(problems),
  } as PlainServer;
}
