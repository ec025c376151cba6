/**
 * Vitest global setup: one AWS emulator for the whole run (or the one AWS_ENDPOINT_URL names),
 * with the system's resources created, shared with the test workers through the environment; the
 * admin console built, and the headless Chromium its browser tests drive unpacked, once.
 * AWS_EMULATOR=localstack (`npm run test:localstack` without Docker): SQS and KMS on LocalStack,
 * DynamoDB on moto (scripts/lib/localstack.ts).
 */
import type { TestProject } from "vitest/node";
import { chromiumPath } from "../../scripts/lib/chromium";
import { ensureConsoleBuilt } from "../../scripts/lib/console";
import { startEmulator } from "../../scripts/lib/emulator";
import { startLocalStackWithMoto } from "../../scripts/lib/localstack";

export default async function setup(project: TestProject) {
  const aws =
    process.env.AWS_EMULATOR === "localstack"
      ? startLocalStackWithMoto((line) => console.error(line)) // says so when it installs (a minute, once)
      : startEmulator();
  const [emulator, chromium] = await Promise.all([aws, chromiumPath(), ensureConsoleBuilt()]);
  project.provide(
    "awsEndpoints",
    Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] => entry[0].startsWith("AWS_ENDPOINT_URL") && !!entry[1],
      ),
    ),
  );
  // The emulator started here serves only requests signed with the key it was started with.
  project.provide("awsCredentials", {
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? "",
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? "",
  });
  project.provide("chromiumPath", chromium);
  return () => emulator.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    /** AWS_ENDPOINT_URL and any AWS_ENDPOINT_URL_<SERVICE>, as the workers are to have them. */
    awsEndpoints: Record<string, string>;
    /** The access key the run's emulator requires (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY). */
    awsCredentials: Record<string, string>;
    chromiumPath: string;
  }
}
