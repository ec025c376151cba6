/** `npm run emulator`: install the emulator venv if missing (`-- --install`), or run it until Ctrl-C. */
import { ensureVenv, startEmulator } from "./lib/emulator";

if (process.argv.includes("--install")) {
  ensureVenv((line) => console.error(line));
} else {
  const emulator = await startEmulator((line) => console.error(line));
  console.log(`AWS emulator at ${emulator.endpoint} (Ctrl-C stops it)`);
  const stop = () => void emulator.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
