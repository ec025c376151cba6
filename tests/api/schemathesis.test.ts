/**
 * The API against its own OpenAPI document: schemathesis (pinned, in `.venv-schemathesis`) runs every
 * check over every operation of `/openapi.json` on a real listener — documented statuses and bodies,
 * schema-valid requests accepted, schema-violating ones refused, 405 + Allow for undeclared methods,
 * auth, and stateful sequences — and must find nothing. Bounded: few examples per operation,
 * deterministic generation, a per-request timeout, and a hard deadline.
 *
 * No request leaves this machine: the worker and the data plane reach upstreams through a fetch that
 * refuses every host but loopback (so the servers the fuzzer registers fail at once), and there is
 * no stdio runner (thread starts answer 409). One real upstream on loopback gives lookups, the tool
 * catalogue and tool calls real data.
 */
import { createGuardedFetch } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { ensureSchemathesis, runSchemathesis, SCHEMATHESIS_REQUIREMENT } from "../support/schemathesis";
import { reaches } from "../support/servers";
import { type Stack, startStack } from "../support/stack";

/** Test cases per operation and phase: about 3,500 requests in all phases over 46 operations, some 130 s. */
const MAX_EXAMPLES = 10;
/**
 * The whole run's hard deadline: st is killed then, and the test fails. Issue 28's audit routes and
 * each admin change's audit event took the run from under 110 s to 131 s (on a quiet machine).
 */
const DEADLINE_MS = 180_000;

/** Upstream fetch for this suite: loopback only, anything else fails as an unreachable host would. */
function loopbackOnly(): typeof fetch {
  const guarded = createGuardedFetch({ allowPrivate: true });
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!/^(?:127(?:\.\d{1,3}){3}|localhost|\[::1\])$/.test(url.hostname)) {
      return Promise.reject(new TypeError("fetch failed", { cause: new Error("no network in this test") }));
    }
    return guarded(input, init);
  };
}

describe("the OpenAPI document, fuzzed by schemathesis", () => {
  let stack: Stack;
  let upstream: Upstream;

  beforeAll(async () => {
    ensureSchemathesis((line) => console.error(line));
    upstream = await startUpstream();
    // Its auth checks send wrong bearer tokens by the hundred from one address: past 20 a minute the
    // stack would answer everything from it 429 (as admin-throttle.test.ts shows), so here the bound is
    // raised out of the way.
    stack = await startStack({
      fetch: loopbackOnly(),
      tokenFailures: { limit: 1_000_000, windowMs: 60_000 },
    });
    // Real data for lookups: a connected server with tools, a thread-scoped stdio server, a secret.
    const up = await stack.call("POST", "/v1/servers", { name: "up", url: upstream.url });
    expect(up.status).toBe(201);
    const files = await stack.call("POST", "/v1/servers", { name: "files", command: "npx", scope: "thread" });
    expect(files.status).toBe(201);
    expect((await stack.call("PUT", "/v1/secrets/db", { values: { PASSWORD: "hunter2" } })).status).toBe(200);
    await reaches(stack, up.body.id, "connected");
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it(
    "finds no failure with every check",
    async () => {
      const run = await runSchemathesis(
        [
          `${stack.api.url}/openapi.json`,
          "--checks",
          "all",
          "--header",
          `Authorization: Bearer ${TEST_ADMIN_TOKEN}`,
          "--max-examples",
          String(MAX_EXAMPLES),
          "--generation-deterministic", // reproducible, and no example database written
          "--request-timeout",
          "10",
          "--max-failures",
          "20",
          "--no-color",
        ],
        DEADLINE_MS,
      );

      // The summary (and the hook's tally of dropped answers); on failure the assertion shows it all.
      // Its "=== … ===" banners are left out: CI's log parser reads a banner such as "=== 3 warnings in
      // 33s ===" as a pytest run's closing line that executed no test.
      const summary = run.output
        .slice(Math.max(0, run.output.lastIndexOf("=== SUMMARY ===") - 40))
        .split("\n")
        .filter((line) => !/^=+ .* =+$/.test(line.trim()))
        .join("\n");
      console.log(
        `${SCHEMATHESIS_REQUIREMENT} finished in ${(run.durationMs / 1000).toFixed(1)} s\n${summary || run.output}`,
      );
      expect(run.code, run.output).toBe(0);
      expect(run.output).toMatch(/\d+ generated, \d+ passed/);
    },
    DEADLINE_MS + 10_000,
  );
});
