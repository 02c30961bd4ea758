#!/usr/bin/env node
import { KEEP_SNAPSHOTS_DEFAULT } from "@mcops/cloud/keep";
import { command, configOption, runTool } from "@mcops/core/cli";

await runTool({
  name: "hibernate",
  usage:
    "$0 [--yes] [--skip-backup] [--keep N] [--force]\n\nOn the operator's computer, with the local .env: stops the game server, runs a last backup on the VM, shuts the droplet down, snapshots it and, once the snapshot is listed, destroys the droplet (a powered-off droplet is still billed; a snapshot costs 0.06 USD per GB-month). `revive` brings it back.",
  commands: [
    command({
      command: "$0",
      describe: false,
      options: (y) =>
        y
          .option("config", configOption)
          .option("yes", {
            type: "boolean",
            default: false,
            describe: "destroy without asking (needed when not on a terminal)",
          })
          .option("skip-backup", { type: "boolean", default: false, describe: "no last backup over SSH" })
          .option("keep", {
            type: "number",
            describe: `this server's snapshots to keep, 1 or more (default KEEP_SNAPSHOTS, else ${KEEP_SNAPSHOTS_DEFAULT})`,
          })
          .option("force", {
            type: "boolean",
            default: false,
            describe: "go on when the game does not answer a ping, so nobody can tell who plays",
          }),
      settings: async (ctx, args) =>
        (await import("./settings.ts")).hibernateSettings({ ...ctx, envFile: args.config }, args.keep),
      run: async (ctx, args, settings) => {
        const [{ runHibernate }, { terminalAsk }] = await Promise.all([
          import("./commands/hibernate.ts"),
          import("./local.ts"),
        ]);
        return runHibernate({ ...ctx, envFile: args.config, ask: terminalAsk() }, settings, {
          yes: args.yes,
          skipBackup: args.skipBackup,
          force: args.force,
          runner: ctx.runner,
        });
      },
    }),
  ],
});
