#!/usr/bin/env node
import { command, runTool } from "@mcops/core/cli";
import { flagOptions, pickFields } from "@mcops/core/config";
import { LOG_FILES } from "@mcops/core/log-events";
import { fields } from "./settings.ts";

await runTool({
  name: "idle-monitor",
  usage: `$0 [--once]\n\nWatches who plays (Server List Ping, else the game log, else the panel) and runs one backup once the server has stayed empty after play (drop-in for idle-monitor.py). Optionally stops an idle server. Logs every decision to /var/log/${LOG_FILES["idle-monitor"]}.`,
  commands: [
    command({
      command: "$0",
      describe: false,
      options: (y) =>
        y.options({
          once: { type: "boolean", default: false, describe: "make one decision and exit" },
          // In the order --help has always listed them.
          ...flagOptions(
            pickFields(fields, [
              "IDLE_AFTER",
              "IDLE_COOLDOWN",
              "IDLE_POLL",
              "IDLE_STOP_AFTER",
              "BACKUP_WHILE_PLAYING",
              "GAME_ADDRESS",
              "IDLE_BACKUP_COMMAND",
              "IDLE_STOP_COMMAND",
            ]),
          ),
        }),
      settings: async (ctx, args) => (await import("./settings.ts")).loadSettings(ctx, args),
      run: async (ctx, args, loaded) => (await import("./monitor.ts")).runMonitor(ctx, loaded, args.once),
    }),
  ],
});
