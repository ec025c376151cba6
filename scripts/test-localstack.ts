/**
 * `npm run test:localstack`: the integration suites against LocalStack (not part of `npm test`).
 * - With Docker (a daemon answering and `docker compose`): the whole suite against the full LocalStack
 *   image (docker-compose.localstack.yml: DynamoDB, SQS and KMS), brought up on a free loopback port
 *   and down again afterwards.
 * - Without: LocalStack in host mode (PyPI localstack-core in .venv-localstack, installed on first use)
 *   serves SQS and KMS, DynamoDB stays on moto (LocalStack's needs DynamoDB Local, a Java jar), and the
 *   suites below, those that use the queue and the keys, run (AWS_EMULATOR=localstack for the global
 *   setup; scripts/lib/localstack.ts).
 * Further arguments go to vitest (e.g. a file filter).
 */
import { spawn, spawnSync } from "node:child_process";
import { freePort, ROOT } from "./lib/processes";

/** The suites that send jobs and seal, open or sign with keys. */
const SQS_AND_KMS_SUITES = [
  "tests/aws",
  "tests/lifecycle",
  "tests/emulator.test.ts",
  "tests/api/servers.test.ts",
  "tests/api/secrets-masking.test.ts",
  "tests/api/readiness.test.ts",
  "tests/api/missing-resources.test.ts",
  "tests/api/oauth-as.test.ts",
];
const COMPOSE = [
  "compose",
  "-f",
  "docker-compose.localstack.yml",
  "-p",
  `mcp-gateway-localstack-${process.pid}`,
];

const args = process.argv.slice(2);
process.exitCode = hasDocker()
  ? await onDocker()
  : await vitest(["--project", "integration", ...SQS_AND_KMS_SUITES], { AWS_EMULATOR: "localstack" });

function hasDocker(): boolean {
  const answers = (...command: string[]) =>
    spawnSync("docker", command, { stdio: "ignore", timeout: 20_000 }).status === 0;
  return answers("info") && answers("compose", "version");
}

async function onDocker(): Promise<number> {
  const port = await freePort();
  const env = { ...process.env, LOCALSTACK_PORT: String(port) };
  const compose = (...command: string[]) =>
    spawnSync("docker", [...COMPOSE, ...command], { cwd: ROOT, env, stdio: "inherit" }).status ?? 1;
  try {
    if (compose("up", "--detach", "--wait") !== 0) return 1;
    return await vitest([], { AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` });
  } finally {
    compose("down", "--volumes");
  }
}

/** `vitest run` with `env` added; resolves to its exit code. SIGINT and SIGTERM reach it, so its teardown runs. */
function vitest(selection: string[], env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...selection, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: "inherit",
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise((done) =>
    child.once("exit", (code) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      done(code ?? 1);
    }),
  );
}
