#!/usr/bin/env node
import { command, dryRunOption, runTool } from "@mcops/core/cli";
import { LOG_FILES } from "@mcops/core/log-events";

await runTool({
  name: "restart-with-warning",
  usage: `$0 [--countdown 5m] [--reason TEXT]\n\nCounts down in game through the panel console, then restarts the server (drop-in for restart-with-warning.sh). Logs to /var/log/${LOG_FILES["restart-with-warning"]}.`,
  commands: [
    command({
      command: "$0",
      describe: false,
      options: (y) =>
        y
          .option("countdown", { type: "string", default: "5m", describe: "how long to warn before restarting" })
          .option("reason", { type: "string", describe: "said to the players with every warning" })
          .option("lock-wait", { type: "string", default: "30m", describe: "how long to wait for a running backup" })
          .option("dry-run", dryRunOption("print the schedule, do nothing")),
      settings: async (ctx, args) => (await import("./settings.ts")).restartPlan(ctx, args),
      run: async (ctx, _args, plan) => (await import("./restart.ts")).runRestart(ctx, plan),
    }),
  ],
  // The process ends at the first SIGINT or SIGTERM, as it always has: nothing in a restart waits on ctx.signal.
  windDownMs: 0,
});
