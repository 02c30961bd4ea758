#!/usr/bin/env node
import { command, configOption, runTool } from "@mcops/core/cli";

await runTool({
  name: "discord-control",
  usage:
    "$0 register [--guild ID] [--config FILE]\n\nOn the operator's computer: puts /start, /status and /stop into the Discord application (its id and bot token from the local .env). The Worker itself is deployed with wrangler (packages/discord-control/README.md).",
  commands: [
    command({
      command: "register",
      describe: "put the slash commands into the Discord application",
      options: (y) =>
        y
          .option("guild", { type: "string", describe: "one guild (server) id: shown at once, not globally" })
          .option("config", configOption),
      settings: async (ctx, args) => (await import("./settings.ts")).registerSettings({ ...ctx, envFile: args.config }),
      run: async (ctx, args, settings) =>
        (await import("./register.ts")).runRegister(ctx, settings, { guild: args.guild }),
    }),
  ],
});
