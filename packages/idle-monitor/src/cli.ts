#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("idle-monitor", async () => {
  const args = await createCli(
    "idle-monitor",
    hideBin(process.argv),
    "$0 [--once]\n\nWatches who plays (Server List Ping, else the game log, else the panel) and runs one backup once the server has stayed empty after play (drop-in for idle-monitor.py). Optionally stops an idle server. Logs every decision to /var/log/mc-idle-monitor.log.",
  )
    .option("once", { type: "boolean", default: false, describe: "make one decision and exit" })
    .option("idle-after", { type: "string", describe: "empty this long after play: back up (IDLE_AFTER, 30m)" })
    .option("cooldown", { type: "string", describe: "least time between idle backups (IDLE_COOLDOWN, 2h)" })
    .option("poll", { type: "string", describe: "how often to look (IDLE_POLL, 60s)" })
    .option("stop-after", {
      type: "string",
      describe: "empty this long and backed up: stop the server (IDLE_STOP_AFTER, off)",
    })
    .option("game-address", { type: "string", describe: "host:port of the game (GAME_ADDRESS, 127.0.0.1:25565)" })
    .option("backup-command", { type: "string", describe: "the backup executable (IDLE_BACKUP_COMMAND)" })
    .option("stop-command", { type: "string", describe: "run after an idle stop (IDLE_STOP_COMMAND)" })
    .parseAsync();
  const { resolvePaths, runMonitor, systemClock } = await import("./monitor.ts");
  const abort = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => abort.abort());
  return runMonitor(
    { paths: resolvePaths(), env: process.env, clock: systemClock, stderr: process.stderr, signal: abort.signal },
    {
      idleAfter: args.idleAfter,
      cooldown: args.cooldown,
      poll: args.poll,
      stopAfter: args.stopAfter,
      gameAddress: args.gameAddress,
      backupCommand: args.backupCommand,
      stopCommand: args.stopCommand,
    },
    args.once,
  );
});
