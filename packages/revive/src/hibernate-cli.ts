#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("hibernate", async () => {
  const args = await createCli(
    "hibernate",
    hideBin(process.argv),
    "$0 [--yes] [--skip-backup] [--keep N] [--force]\n\nOn the operator's computer, with the local .env: stops the game server, runs a last backup on the VM, shuts the droplet down, snapshots it and, once the snapshot is listed, destroys the droplet (a powered-off droplet is still billed; a snapshot costs 0.06 USD per GB-month). `revive` brings it back.",
  )
    .option("config", { type: "string", describe: "the local .env (default ./.env)" })
    .option("yes", {
      type: "boolean",
      default: false,
      describe: "destroy without asking (needed when not on a terminal)",
    })
    .option("skip-backup", { type: "boolean", default: false, describe: "no last backup over SSH" })
    .option("keep", {
      type: "number",
      describe: "mcops snapshots to keep, 1 or more (default KEEP_SNAPSHOTS, else 2)",
    })
    .option("force", {
      type: "boolean",
      default: false,
      describe: "go on when the game does not answer a ping, so nobody can tell who plays",
    })
    .parseAsync();
  const { runHibernate, context } = await import("./revive-main.ts");
  return runHibernate(context(args.config), {
    yes: args.yes,
    skipBackup: args.skipBackup,
    keep: args.keep,
    force: args.force,
  });
});
