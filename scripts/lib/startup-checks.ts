/**
 * What `npm run dev` checks before it starts anything, each failure one line saying what to do next
 * ({@link StartupError}): the port it will listen on is free — and held from then until the API
 * listens there — and the AWS endpoints it was given (AWS_ENDPOINT_URL…) answer AWS calls.
 */
import { createServer } from "node:net";
import { type AwsConfig, type AwsService, checkAwsEndpoints, type EndpointProblem } from "@mcpgw/aws";

/** A start-up problem the user can act on: its message is the one line to print before exiting. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/** A port bound on 127.0.0.1 (its connections closed at once) until {@link HeldPort.release}. */
export interface HeldPort {
  release(): Promise<void>;
}

/**
 * Binds 127.0.0.1:`port` — where the API will listen — so nothing else can take it while the stack
 * starts; throws a {@link StartupError} naming `variable` when it is in use or cannot be had.
 */
export function holdPort(port: number, variable = "PORT"): Promise<HeldPort> {
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", (error) => reject(portError(port, error, variable)));
    server.listen(port, "127.0.0.1", () =>
      resolve({ release: () => new Promise((done) => server.close(() => done())) }),
    );
  });
}

/** The one line for a port that cannot be listened on (EADDRINUSE: another process has it). */
export function portError(port: number, error: unknown, variable = "PORT"): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") {
    return new StartupError(
      `port ${port} is in use (another npm run dev?): stop it or set ${variable}=<a free port>`,
    );
  }
  if (code === "EACCES" || code === "EADDRNOTAVAIL") {
    return new StartupError(`port ${port} cannot be listened on (${code}): set ${variable}=<a free port>`);
  }
  return error;
}

const SERVICE_NAMES: Record<AwsService, string> = { dynamodb: "DynamoDB", sqs: "SQS", kms: "KMS" };

/**
 * Throws a {@link StartupError} unless every AWS endpoint of `config` but those in `skip` (an
 * emulator this run started, checked as it started) answers a call (see `checkAwsEndpoints`).
 */
export async function assertAwsEndpointsAnswer(config: AwsConfig, skip: string[] = []): Promise<void> {
  const problem = await checkAwsEndpoints(config, { skip });
  if (problem) throw new StartupError(awsEndpointLine(problem));
}

/** `AWS endpoint http://127.0.0.1:4599 (AWS_ENDPOINT_URL) is unreachable (connection refused): start …`. */
export function awsEndpointLine(problem: EndpointProblem): string {
  const { endpoint, variable, kind, reason } = problem;
  const orUnset = `or unset ${variable}${variable === "AWS_ENDPOINT_URL" ? " to let npm run dev start one" : ""}`;
  const [what, next] =
    kind === "unreachable" || kind === "timeout"
      ? [`is unreachable (${reason})`, `start the emulator there, ${orUnset}`]
      : kind === "credentials"
        ? [
            `refused this run's AWS credentials (${reason})`,
            `set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to a key it accepts, ${orUnset}`,
          ]
        : [
            `answered a ${SERVICE_NAMES[problem.service]} call with ${reason}`,
            `check that it is an AWS emulator (LocalStack, moto) and see its log, ${orUnset}`,
          ];
  return `AWS endpoint ${endpoint} (${variable}) ${what}: ${next}`;
}
