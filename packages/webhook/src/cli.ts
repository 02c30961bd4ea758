#!/usr/bin/env node
import { CATEGORIES, type Category, command, runTool } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

/**
 * webhook.sh took its arguments as they came, and a description may well start with "-" ("- item", "-5 players").
 * Words that start with "-" but are not option-like, and every word after `--`, are hidden from the option parser
 * behind placeholders and given back as text.
 */
function protectTexts(argv: string[]): { argv: string[]; text: (value: unknown) => string | undefined } {
  const texts = new Map<string, string>();
  const OPTION = /^--?[A-Za-z][\w-]*(=.*)?$/;
  const out: string[] = [];
  let rest = false;
  for (const word of argv) {
    if (!rest && word === "--") {
      rest = true;
      continue;
    }
    if (rest || (word.startsWith("-") && !OPTION.test(word))) {
      const key = `\u0000${texts.size}`;
      texts.set(key, word);
      out.push(key);
    } else out.push(word);
  }
  return {
    argv: out,
    text: (value) => (value === undefined ? undefined : (texts.get(String(value)) ?? String(value))),
  };
}

const { argv, text } = protectTexts(hideBin(process.argv));

await runTool({
  name: "webhook",
  usage:
    "$0 TITLE [DESCRIPTION] [COLOUR]\n\nPosts one rich message to the Discord channel webhook of /etc/mc-backup/webhook.env (drop-in for webhook.sh). Does nothing when no webhook is configured.",
  argv,
  commands: [
    command({
      command: "$0 <title> [description] [colour]",
      describe: false,
      options: (y) =>
        y
          .positional("title", { type: "string", describe: "message title" })
          .positional("description", { type: "string", describe: "message text (Discord markdown allowed)" })
          .positional("colour", {
            type: "string",
            describe: "decimal RGB, #rrggbb, or success|error|warning|info|event (default info, 3447003)",
          })
          .option("category", {
            type: "string",
            choices: CATEGORIES,
            describe: "event category; nothing is sent when webhook.json turns it off",
          })
          .option("footer", {
            type: "string",
            describe: "footer text (default: PLAY_HOST from webhook.env, else the host name)",
          })
          .option("dry-run", {
            type: "boolean",
            default: false,
            describe: "print the JSON that would be sent; send nothing",
          }),
      run: async (ctx, args) =>
        (await import("./webhook.ts")).runWebhook(ctx, {
          title: text(args.title) ?? "",
          description: text(args.description),
          colour: text(args.colour),
          category: args.category as Category | undefined,
          footer: args.footer,
          dryRun: args.dryRun,
        }),
    }),
  ],
  examples: [["$0 'Backup done' 'took 42 s, 1.2 GiB' success", ""]],
});
