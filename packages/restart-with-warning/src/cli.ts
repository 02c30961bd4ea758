#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("restart-with-warning", async () => {
  const args = await createCli(
    "restart-with-warning",
    hideBin(process.argv),
    "$0 [--countdown 5m] [--reason TEXT]\n\nCounts down in game through the panel console, then restarts the server (drop-in for restart-with-warning.sh). Logs to /var/log/mc-restart.log.",
  )
    .option("countdown", { type: "string", default: "5m", describe: "how long to warn before restarting" })
    .option("reason", { type: "string", describe: "said to the players with every warning" })
    .option("lock-wait", { type: "string", default: "30m", describe: "how long to wait for a running backup" })
    .option("dry-run", { type: "boolean", default: false, describe: "print the schedule, do nothing" })
    .parseAsync();
  const { parseDuration, resolvePaths, runRestart, systemClock } = await import("./restart.ts");
  return runRestart(
    { paths: resolvePaths(), env: process.env, clock: systemClock, stdout: process.stdout, stderr: process.stderr },
    {
      countdownMs: parseDuration(args.countdown),
      reason: args.reason,
      lockWaitMs: parseDuration(args.lockWait),
      dryRun: args.dryRun,
    },
  );
});
