/**
 * LocalStack in host mode, without Docker: `localstack-core` from PyPI in a project-local venv
 * (`.venv-localstack`, created on first use), serving SQS and KMS on 127.0.0.1 on a free port, its
 * files in a directory of its own under `.localstack/` (gitignored), stopped with its parent.
 * DynamoDB is not among them: LocalStack's needs DynamoDB Local, a Java jar that no package registry
 * carries — {@link startLocalStackWithMoto} leaves it on moto.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EMULATOR_ENV, type Emulator, startMoto, stopByStdin } from "./emulator";
import { parkedPort, ROOT } from "./processes";
import { ensureVenv, type VenvSpec, venvPath } from "./venv";

/**
 * 4.10.0: later releases need Python 3.12 while claiming 3.10 (4.14 uses 3.12 syntax; from 4.11 on,
 * KMS's CreateKey passes bytes to uuid.uuid5, which 3.11 refuses), and Debian 12 has 3.11. The pins
 * bound dependencies it leaves open whose later releases break it: cbor2 6 drops the `cbor2._decoder`
 * it imports, pyOpenSSL 26 drops `X509.add_extensions` (its TLS certificate), and localstack-twisted
 * 26 needs `service_identity`, which it does not install.
 */
const LOCALSTACK: VenvSpec = {
  dir: ".venv-localstack",
  requirement: "localstack-core[base-runtime]==4.10.0",
  pins: ["cbor2<6", "pyopenssl<26", "localstack-twisted<26"],
  probe:
    "import localstack.aws.components, localstack.services.sqs.provider, localstack.services.kms.provider, twisted.internet.ssl",
  purpose: "LocalStack",
};
const SERVICES = ["sqs", "kms"] as const;
const START_TIMEOUT_MS = 60_000;
const SERVER_SCRIPT = join(import.meta.dirname, "localstack_server.py");

/** Starts LocalStack's SQS and KMS on a free loopback port; resolves once both answer. */
export async function startLocalStack(log: (line: string) => void = () => {}): Promise<Emulator> {
  ensureVenv(LOCALSTACK, log);
  const port = await parkedPort();
  const address = `127.0.0.1:${port}`;
  mkdirSync(join(ROOT, ".localstack"), { recursive: true });
  const root = mkdtempSync(join(ROOT, ".localstack", "run-"));
  const child = spawn(venvPath(LOCALSTACK, "bin", "python"), [SERVER_SCRIPT], {
    cwd: root,
    env: {
      ...process.env,
      SERVICES: SERVICES.join(","),
      EAGER_SERVICE_LOADING: "1",
      GATEWAY_LISTEN: address,
      // The host and port in the URLs it answers (queue URLs), and queue URLs as <endpoint>/<account>/<queue>.
      LOCALSTACK_HOST: address,
      SQS_ENDPOINT_STRATEGY: "path",
      // Host mode, even on a machine that is itself a container: directories under FILESYSTEM_ROOT.
      OVERRIDE_IN_DOCKER: "0",
      FILESYSTEM_ROOT: root,
      // No DNS server (it would bind port 53), no certificate download, no analytics: nothing leaves the machine.
      DNS_ADDRESS: "0",
      SKIP_SSL_CERT_DOWNLOAD: "1",
      DISABLE_EVENTS: "1",
    },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  const stop = async () => {
    process.off("exit", onExit);
    await stopByStdin(child, 10_000); // LocalStack shuts down in 5 s at most (localstack_server.py)
    rmSync(root, { recursive: true, force: true });
  };
  const endpoint = `http://${address}`;
  try {
    await waitUntilRunning(endpoint, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: child.pid, owned: true, stop };
}

/**
 * SQS and KMS on LocalStack, DynamoDB on moto, both started; process.env points the SDK at each by
 * service (AWS_ENDPOINT_URL_SQS/_KMS at LocalStack; AWS_ENDPOINT_URL_DYNAMODB, and AWS_ENDPOINT_URL for
 * anything that names one endpoint, at moto). The emulator returned is moto; its stop stops both.
 */
export async function startLocalStackWithMoto(log: (line: string) => void = () => {}): Promise<Emulator> {
  for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
  const [localstack, moto] = await Promise.allSettled([startLocalStack(log), startMoto({ log })]);
  if (localstack.status === "rejected" || moto.status === "rejected") {
    await Promise.all(
      [localstack, moto].map((started) => started.status === "fulfilled" && started.value.stop()),
    );
    throw localstack.status === "rejected" ? localstack.reason : (moto as PromiseRejectedResult).reason;
  }
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: moto.value.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: moto.value.endpoint,
    AWS_ENDPOINT_URL_SQS: localstack.value.endpoint,
    AWS_ENDPOINT_URL_KMS: localstack.value.endpoint,
  });
  return {
    ...moto.value,
    stop: async () => {
      await Promise.all([localstack.value.stop(), moto.value.stop()]);
    },
  };
}

/** Polls LocalStack's health endpoint until every service runs, bounded by {@link START_TIMEOUT_MS}. */
async function waitUntilRunning(endpoint: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`LocalStack exited (code ${child.exitCode}) before it was ready: ${stderr()}`);
    }
    try {
      const health = (await (await fetch(`${endpoint}/_localstack/health`)).json()) as {
        services?: Record<string, string>;
      };
      if (SERVICES.every((service) => health.services?.[service] === "running")) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`LocalStack did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr()}`);
}
