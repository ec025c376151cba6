/**
 * Where a stdio instance goes in a fleet of runners: weighted rendezvous hashing. Every instance
 * ranks every runner by a score of (instance, runner) and its weight; the best score wins. The same
 * fleet always gives the same answer, and a runner that joins or leaves moves only the instances it
 * wins or held — about 1/n of them — and no other.
 */
import { createHash } from "node:crypto";

/** A runner as placement sees it: its id, and how much more it takes (0: none; it is never chosen). */
export interface PlacementCandidate {
  id: string;
  weight: number;
}

/**
 * The placement key of a stdio instance: its server, and its thread where it is a thread's (the children
 * of a `per_caller` server's callers go with their server).
 */
export function placementKey(serverId: string, threadId?: string): string {
  return threadId ? `${serverId}#${threadId}` : serverId;
}

/**
 * The candidate `key` is placed on: the highest `-weight / ln(u)`, with `u` in (0, 1) from a hash of
 * (key, id) — the weighted rendezvous score (a runner of twice the weight wins twice as often). Ties
 * go to the lower id. Undefined when no candidate has a positive weight.
 */
export function placeOn(key: string, candidates: readonly PlacementCandidate[]): string | undefined {
  let best: { id: string; score: number } | undefined;
  for (const { id, weight } of candidates) {
    if (!(weight > 0)) continue;
    const score = -weight / Math.log(unitHash(`${key}\0${id}`));
    if (!best || score > best.score || (score === best.score && id < best.id)) best = { id, score };
  }
  return best?.id;
}

/** A uniform number in (0, 1) from the first 52 bits of `text`'s SHA-256. */
function unitHash(text: string): number {
  const digest = createHash("sha256").update(text).digest();
  const bits = digest.readUIntBE(0, 6) * 16 + (digest.readUInt8(6) >> 4); // 52 bits
  return (bits + 0.5) / 2 ** 52;
}
