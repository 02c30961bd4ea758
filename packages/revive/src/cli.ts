#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("revive", async () => {
  let run: (() => Promise<number>) | undefined;
  const common = { config: { type: "string", describe: "the local .env (default ./.env)" } } as const;
  await createCli(
    "revive",
    hideBin(process.argv),
    "$0 [--size SLUG] [--region SLUG]\n$0 dns [--ip ADDRESS] [--dry-run]\n\nOn the operator's computer, with the local .env: brings the hibernated game VM back from its newest mcops snapshot, repoints DNS, starts the game and waits until it answers. `revive dns` only repoints DNS (docs/system.md 1.7).",
  )
    .options(common)
    .command(
      "$0",
      false,
      (y) =>
        y
          .option("size", { type: "string", describe: "droplet size (default: what hibernate remembered)" })
          .option("region", { type: "string", describe: "region (default: what hibernate remembered)" })
          .option("ssh-key", {
            type: "string",
            array: true,
            describe: "SSH key id or fingerprint (default: all on the account)",
          })
          .option("wait", { type: "string", default: "10m", describe: "how long to wait for the panel and the game" }),
      (args) => {
        run = async () => {
          const { parseDuration, runRevive, context } = await import("./revive-main.ts");
          return runRevive(context(args.config), {
            size: args.size,
            region: args.region,
            sshKeys: args.sshKey?.map(String),
            waitMs: parseDuration(args.wait),
          });
        };
      },
    )
    .command(
      "dns",
      "point the panel and play names at the VM (or --ip)",
      (y) =>
        y
          .option("ip", { type: "string", describe: "the address to set (default: the game VM's)" })
          .option("dry-run", { type: "boolean", default: false, describe: "print the plan, change nothing" }),
      (args) => {
        run = async () => {
          const { runDns, context } = await import("./revive-main.ts");
          return runDns(context(args.config), { ip: args.ip, dryRun: args.dryRun });
        };
      },
    )
    .parseAsync();
  return run?.();
});
