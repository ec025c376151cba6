/**
 * `npm run emulator`: install the emulator venv if missing (`-- --install`), or run it until Ctrl-C —
 * on a port of your choice with `-- --port <n>` (e.g. to stop it and start an empty one in its place).
 */
import { ensureVenv, startEmulator, startMoto } from "./lib/emulator";

const log = (line: string) => console.error(line);
const portArg = process.argv.indexOf("--port");
if (process.argv.includes("--install")) {
  ensureVenv(log);
} else {
  const emulator =
    portArg > 0
      ? await startMoto({ port: Number(process.argv[portArg + 1]), log })
      : await startEmulator(log);
  console.log(`AWS emulator at ${emulator.endpoint} (Ctrl-C stops it)`);
  const stop = () => void emulator.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
