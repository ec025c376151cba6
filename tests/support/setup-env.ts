/** Per-worker setup: point the AWS SDK at the run's emulator. */
import { inject } from "vitest";
import { EMULATOR_ENV } from "../../scripts/lib/emulator";

for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
process.env.AWS_ENDPOINT_URL = inject("awsEndpoint");
