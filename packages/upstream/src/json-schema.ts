import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";

/**
 * The JSON Schema validator every SDK client and server of the system is given. The SDK checks a
 * tool's structured output (`Client.callTool`) and an elicitation's answer (`Server.elicitInput`) with
 * it; the system relays both as they are and calls neither, so nothing is validated with it on any
 * path a call takes. Given explicitly, no SDK object builds its own default (ajv, heavy to load), and
 * the bundles leave that default out (scripts/esbuild-plugins.mjs).
 */
export const jsonSchemaValidator = new CfWorkerJsonSchemaValidator();
