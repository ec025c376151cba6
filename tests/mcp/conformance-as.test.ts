/**
 * The MCP conformance suite's authorization-server mode (`conformance authorization`, 0.2.0-alpha.12 on
 * Node 22) against the gateway's own authorization server, for each protocol era: the metadata scenario
 * and the authorization-code grant. The suite prints an authorize URL and waits on its callback; the
 * test registers its public client (DCR), signs in on the development page as a mapped user and
 * delivers the redirect to the suite's listener. Any FAILURE or WARNING check fails the test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureNode22 } from "../../scripts/lib/node22";
import { type Stack, startStack } from "../support/stack";

const ERAS = ["2026-07-28", "2025-11-25"] as const;
const CLI = join(import.meta.dirname, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const RUN_TIMEOUT_MS = 120_000;

let stack: Stack;
let node22: string;

beforeAll(async () => {
  node22 = ensureNode22();
  stack = await startStack({ oauth: true });
  const server = await stack.call("POST", "/v1/servers", { name: "conf-as", url: "http://127.0.0.1:9/mcp" });
  expect(server.status).toBe(201);
  expect((await stack.call("PUT", "/v1/access/user:conformance", { servers: null })).status).toBe(200);
}, 300_000);

afterAll(() => stack?.stop());

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const hiddenFields = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );

/** Signs in on the development page and returns where the consent redirects. */
async function signIn(authorizeUrl: string): Promise<string> {
  const first = await fetch(authorizeUrl, { redirect: "manual" });
  const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const post = (body: Record<string, string>) =>
    fetch(`${stack.api.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(body),
    });
  const consent = await post({ ...hiddenFields(await first.text()), user: "conformance", groups: "" });
  const done = await post({ ...hiddenFields(await consent.text()), decision: "allow" });
  const location = done.headers.get("location");
  if (!location) throw new Error(`no redirect after consent (${done.status})`);
  return location;
}

describe.each(ERAS)("conformance authorization-server scenarios (%s)", (era) => {
  it("passes the metadata and authorization-code-grant scenarios with no failure or warning", async () => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/callback`;
    const registered = await fetch(`${stack.api.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [redirect], client_name: "conformance" }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const out = mkdtempSync(join(tmpdir(), "conformance-as-"));
    try {
      const args = [CLI, "authorization", "--url", stack.api.url, "--client-id", clientId];
      args.push("--resource", `${stack.api.url}/mcp`, "-p", String(port), "-o", out, "--spec-version", era);
      const child: ChildProcess = spawn(node22, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
      let output = "";
      let driving: Promise<void> | undefined;
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), RUN_TIMEOUT_MS);
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        const url = /Access the following URL[^\n]*\n\s*(\S+)/.exec(output)?.[1];
        if (url && !driving) {
          // Deliver the redirect to the suite's callback listener, as a browser would.
          driving = signIn(url).then(async (location) => void (await fetch(location)).text());
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      const code = await exited;
      clearTimeout(timer);
      await driving;

      const checks = readdirSync(out, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith("checks.json"))
        .flatMap(
          (file) => JSON.parse(readFileSync(join(out, file), "utf8")) as Array<Record<string, unknown>>,
        );
      const bad = checks.filter((check) => check.status === "FAILURE" || check.status === "WARNING");
      expect(bad, output).toEqual([]);
      expect(
        checks.map((check) => [check.id, check.status]),
        output,
      ).toEqual(
        expect.arrayContaining([
          ["authorization-server-metadata", "SUCCESS"],
          ["authorization-code-grant", "SUCCESS"],
        ]),
      );
      expect(code, output).toBe(0);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
