#!/usr/bin/env node
import { CATEGORIES, type Category, createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("webhook", async () => {
  const args = await createCli(
    "webhook",
    hideBin(process.argv),
    "$0 TITLE [DESCRIPTION] [COLOUR]\n\nPosts one rich message to the Discord channel webhook of /etc/mc-backup/webhook.env (drop-in for webhook.sh). Does nothing when no webhook is configured.",
  )
    .command("$0 <title> [description] [colour]", false, (y) =>
      y
        .positional("title", { type: "string", describe: "message title" })
        .positional("description", { type: "string", describe: "message text (Discord markdown allowed)" })
        .positional("colour", {
          type: "string",
          describe: "decimal RGB, #rrggbb, or success|error|warning|info|event (default info, 3447003)",
        }),
    )
    .option("category", {
      type: "string",
      choices: CATEGORIES,
      describe: "event category; nothing is sent when webhook.json turns it off",
    })
    .option("footer", {
      type: "string",
      describe: "footer text (default: PLAY_HOST from webhook.env, else the host name)",
    })
    .option("dry-run", { type: "boolean", default: false, describe: "print the JSON that would be sent; send nothing" })
    .example("$0 'Backup done' 'took 42 s, 1.2 GiB' success", "")
    .parseAsync();

  // Loaded only now, so that --help and usage errors do not pay for the HTTP client and the schemas.
  const { resolvePaths, runWebhook, systemClock } = await import("./webhook.ts");
  return runWebhook(
    { paths: resolvePaths(), env: process.env, clock: systemClock, stdout: process.stdout, stderr: process.stderr },
    {
      title: String(args.title),
      // yargs does not carry the default command's positional types through to the parsed arguments.
      description: args.description as string | undefined,
      colour: args.colour as string | undefined,
      category: args.category as Category | undefined,
      footer: args.footer,
      dryRun: args.dryRun,
    },
  );
});
