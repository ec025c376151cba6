/**
 * Vitest global setup: one AWS emulator for the whole run (or the one AWS_ENDPOINT_URL names),
 * with the system's resources created, shared with the test workers through the environment.
 */
import type { TestProject } from "vitest/node";
import { startEmulator } from "../../scripts/lib/emulator";

export default async function setup(project: TestProject) {
  const emulator = await startEmulator();
  project.provide("awsEndpoint", emulator.endpoint);
  return () => emulator.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}
