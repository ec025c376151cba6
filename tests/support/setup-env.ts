/**
 * Per-worker setup: point the AWS SDK at the run's emulator (per service, where services differ), with
 * the access key it requires.
 */
import { inject } from "vitest";
import { EMULATOR_ENV } from "../../scripts/lib/emulator";

for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
Object.assign(process.env, inject("awsEndpoints"), inject("awsCredentials"));
