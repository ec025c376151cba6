/** `npm run build:console`: the admin console's static files into packages/console/dist. */
import { buildConsole } from "./lib/console";

console.log(`console built into ${await buildConsole()}`);
