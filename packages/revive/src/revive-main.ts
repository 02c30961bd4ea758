import { systemClock } from "@mcops/core/clock";
import { type LocalContext, terminalAsk } from "./local.ts";

// What the two executables need, named here so that each bundle keeps only what it uses.
export { parseDuration } from "@mcops/core/format";
export { runHibernate } from "./hibernate.ts";
export { runDns, runRevive } from "./revive.ts";

export function context(envFile: string | undefined): LocalContext {
  return {
    envFile,
    env: process.env,
    clock: systemClock,
    stdout: process.stdout,
    stderr: process.stderr,
    ask: terminalAsk(),
  };
}
