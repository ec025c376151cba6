/**
 * Vitest global setup: one AWS emulator for the whole run (or the one AWS_ENDPOINT_URL names),
 * with the system's resources created, shared with the test workers through the environment; the
 * admin console built, and the headless Chromium its browser tests drive unpacked, once.
 */
import type { TestProject } from "vitest/node";
import { chromiumPath } from "../../scripts/lib/chromium";
import { ensureConsoleBuilt } from "../../scripts/lib/console";
import { startEmulator } from "../../scripts/lib/emulator";

export default async function setup(project: TestProject) {
  const [emulator, chromium] = await Promise.all([startEmulator(), chromiumPath(), ensureConsoleBuilt()]);
  project.provide("awsEndpoint", emulator.endpoint);
  project.provide("chromiumPath", chromium);
  return () => emulator.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    awsEndpoint: string;
    chromiumPath: string;
  }
}
