#!/usr/bin/env node
import { command, configOption, dryRunOption, runTool } from "@mcops/core/cli";

/** --config's value: a global option is not in a command's own argument types, so it is read as what yargs made of it. */
function envFile(args: Record<string, unknown>): string | undefined {
  return typeof args.config === "string" ? args.config : undefined;
}

await runTool({
  name: "revive",
  usage:
    "$0 [--size SLUG] [--region SLUG]\n$0 dns [--ip ADDRESS] [--dry-run]\n\nOn the operator's computer, with the local .env: brings the hibernated game VM back from its newest snapshot (named for its play host), repoints DNS, starts the game and waits until it answers. `revive dns` only repoints DNS (docs/system.md 1.7).",
  // Every command reads the local .env: --config is the one option they all take (runTool's `global`).
  global: (y) => y.options({ config: configOption }),
  commands: [
    command({
      command: "$0",
      describe: false,
      options: (y) =>
        y
          .option("size", { type: "string", describe: "droplet size (default: what hibernate remembered)" })
          .option("region", { type: "string", describe: "region (default: what hibernate remembered)" })
          .option("ssh-key", {
            type: "string",
            array: true,
            describe: "SSH key id or fingerprint (default: all on the account)",
          })
          .option("wait", { type: "string", default: "10m", describe: "how long to wait for the panel and the game" }),
      settings: async (ctx, args) =>
        (await import("./settings.ts")).reviveSettings({ ...ctx, envFile: envFile(args) }, args.wait),
      run: async (ctx, args, settings) =>
        (await import("./commands/revive.ts")).runRevive({ ...ctx, envFile: envFile(args) }, settings, {
          size: args.size,
          region: args.region,
          sshKeys: args.sshKey?.map(String),
        }),
    }),
    command({
      command: "dns",
      describe: "point the panel and play names at the VM (or --ip)",
      options: (y) =>
        y
          .option("ip", { type: "string", describe: "the address to set (default: the game VM's)" })
          .option("dry-run", dryRunOption("print the plan, change nothing")),
      settings: async (ctx, args) => (await import("./settings.ts")).dnsSettings({ ...ctx, envFile: envFile(args) }),
      run: async (ctx, args, settings) =>
        (await import("./commands/dns.ts")).runDns(ctx, settings, { ip: args.ip, dryRun: args.dryRun }),
    }),
  ],
});
