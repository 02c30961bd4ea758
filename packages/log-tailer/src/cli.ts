#!/usr/bin/env node
import { command, runTool } from "@mcops/core/cli";

await runTool({
  name: "log-tailer",
  usage:
    "$0 [command]\n\nFollows the game log and posts join, leave, death, start, stop and crash messages to the webhook (drop-in for log-tailer.py; runs as a service).",
  commands: [
    command({
      command: "$0",
      describe: "follow <WORLD_DIR>/logs/latest.log (from backup.env) until stopped",
      options: (y) =>
        y.option("file", { type: "string", describe: "follow this log instead" }).option("from-start", {
          type: "boolean",
          default: false,
          describe: "ignore the saved position: read the file from its beginning",
        }),
      settings: async (ctx, args) => (await import("./settings.ts")).loadSettings(ctx, { file: args.file }),
      run: async (ctx, args, settings) =>
        (await import("./tailer.ts")).runTailer(ctx, { file: args.file, fromStart: args.fromStart }, settings),
    }),
    command({
      command: "scan <files..>",
      describe: "print the events of whole log files as JSON lines; posts nothing",
      options: (y) => y.positional("files", { type: "string", array: true, describe: "game log files" }),
      run: async (ctx, args) => (await import("./scan.ts")).runScan(args.files ?? [], ctx.stdout),
    }),
  ],
});
