/**
 * Runs in a fresh Node process, as Lambda would: sets the runtime's `awslambda` global, imports one
 * bundle (timing the cold import), then invokes `exportName` with each event in turn and writes
 * `{ importMs, streaming, results }` as JSON to `outFile` (stdout and stderr stay the handler's, for its
 * logs). A response-streaming handler is called as the runtime calls it; its result is what the Function
 * URL's client gets, `{ statusCode, headers, cookies, body }`, like a buffered handler's.
 *
 *   node invoke-bundle.mjs <bundle.mjs> <exportName> <events.json> <outFile>
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { installLambdaRuntime, invokeStreaming, isStreamingHandler } from "./lambda-runtime.mjs";

const [bundle, exportName, eventsFile, outFile] = process.argv.slice(2);
if (!bundle || !exportName || !eventsFile || !outFile) {
  console.error("usage: node invoke-bundle.mjs <bundle.mjs> <exportName> <events.json> <outFile>");
  process.exit(2);
}

installLambdaRuntime();
const started = performance.now();
const mod = await import(pathToFileURL(bundle).href);
const importMs = performance.now() - started;

const handler = mod[exportName];
if (typeof handler !== "function") {
  console.error(`${bundle} exports no function named ${exportName}`);
  process.exit(2);
}

const context = {
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? "bundle-test",
  awsRequestId: "00000000-0000-4000-8000-000000000000",
  getRemainingTimeInMillis: () => 30_000,
  callbackWaitsForEmptyEventLoop: false,
};
const streaming = isStreamingHandler(handler);
const results = [];
for (const event of JSON.parse(readFileSync(eventsFile, "utf8"))) {
  if (!streaming) results.push(await handler(event, context));
  else {
    // The runtime's default for a streaming invocation is to wait for an empty event loop.
    const invocation = { ...context, callbackWaitsForEmptyEventLoop: true };
    const { statusCode, headers, cookies, body } = await invokeStreaming(handler, event, invocation);
    results.push({ statusCode, headers, cookies, body });
  }
}
writeFileSync(outFile, JSON.stringify({ importMs, streaming, results }));
// Keep-alive sockets and warm sessions would hold the process open; Lambda freezes it instead.
process.exit(0);
