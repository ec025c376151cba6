/**
 * `npm run emulator`: install the emulator venv if missing (`-- --install`), or run it until Ctrl-C —
 * on a port of your choice with `-- --port <n>` (e.g. to stop it and start an empty one in its place).
 * It serves only requests signed with its access key: a fresh one, or with `--port` the one in
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when both are set (the key of the stack it stands in for).
 * It prints the key: point a stack at it with AWS_ENDPOINT_URL and that key.
 */
import { ensureVenv, generateEmulatorCredentials, startEmulator, startMoto } from "./lib/emulator";

const log = (line: string) => console.error(line);
const portArg = process.argv.indexOf("--port");
if (process.argv.includes("--install")) {
  ensureVenv(log);
} else {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = process.env;
  const given = portArg > 0 && accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
  const emulator =
    portArg > 0
      ? await startMoto({
          port: Number(process.argv[portArg + 1]),
          log,
          credentials: given ?? generateEmulatorCredentials(),
        })
      : await startEmulator(log);
  console.log(`AWS emulator at ${emulator.endpoint} (Ctrl-C stops it)`);
  if (given) console.log("requests must be signed with the key in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY");
  else if (emulator.credentials) {
    // Generated here: the developer's own terminal is the one place it is shown (like dev's ADMIN_TOKEN).
    const { accessKeyId: id, secretAccessKey: secret } = emulator.credentials;
    console.log(`requests must be signed with AWS_ACCESS_KEY_ID=${id} AWS_SECRET_ACCESS_KEY=${secret}`);
  }
  const stop = () => void emulator.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
