/**
 * Each transport kind's one secret map — HTTP headers, stdio env — sealed at rest and masked by its
 * own rule: the one place a kind says where its secrets live and how they are shown.
 */
import { assertNever } from "./exhaustive";
import { ENV_MASKS, HEADER_MASKS, type MaskRule, maskMap } from "./masking";
import type { ServerSpec, Transport } from "./server";

/** Where a kind keeps its secret map and how the map is masked. */
export interface SecretMap {
  /** The spec field holding the map. */
  field: "headers" | "env";
  /** What one entry of the map is called in messages. */
  noun: string;
  /** How the map's values are masked and its names compared. */
  rule: MaskRule;
}

const HEADERS: SecretMap = { field: "headers", noun: "header", rule: HEADER_MASKS };
const ENV: SecretMap = { field: "env", noun: "env", rule: ENV_MASKS };

/** The secret map of a transport kind. */
export function secretMapOf(transport: Transport): SecretMap {
  switch (transport) {
    case "http":
      return HEADERS;
    case "stdio":
      return ENV;
    default:
      return assertNever(transport);
  }
}

/** The values of a spec's secret map (real or masked, as the spec holds them). */
export function secretValues(spec: ServerSpec): Record<string, string> {
  switch (spec.transport) {
    case "http":
      return spec.headers;
    case "stdio":
      return spec.env;
    default:
      return assertNever(spec);
  }
}

/** A spec's secret map with every value masked under its kind's rule. */
export function maskedSecrets(spec: ServerSpec): Record<string, string> {
  return maskMap(secretValues(spec), secretMapOf(spec.transport).rule);
}
