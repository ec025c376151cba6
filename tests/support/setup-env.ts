/** Per-worker setup: point the AWS SDK at the run's emulator (per service, where services differ). */
import { inject } from "vitest";
import { EMULATOR_ENV } from "../../scripts/lib/emulator";

for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
Object.assign(process.env, inject("awsEndpoints"));
