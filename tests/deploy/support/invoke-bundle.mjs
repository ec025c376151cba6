/**
 * Runs in a fresh Node process, as Lambda would: imports one bundle (timing the cold import), then
 * invokes `exportName` with each event in turn and writes `{ importMs, results }` as JSON to `outFile`
 * (stdout and stderr stay the handler's, for its logs).
 *
 *   node invoke-bundle.mjs <bundle.mjs> <exportName> <events.json> <outFile>
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, exportName, eventsFile, outFile] = process.argv.slice(2);
if (!bundle || !exportName || !eventsFile || !outFile) {
  console.error("usage: node invoke-bundle.mjs <bundle.mjs> <exportName> <events.json> <outFile>");
  process.exit(2);
}

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
const results = [];
for (const event of JSON.parse(readFileSync(eventsFile, "utf8"))) {
  results.push(await handler(event, context));
}
writeFileSync(outFile, JSON.stringify({ importMs, results }));
// Keep-alive sockets and warm sessions would hold the process open; Lambda freezes it instead.
process.exit(0);
