#!/usr/bin/env node
import { type Category, command, runTool } from "@mcops/core/cli";
import { EXAMPLES, options, positionals, USAGE } from "./settings.ts";

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

const { argv, text } = protectTexts(process.argv.slice(2));

await runTool({
  name: "webhook",
  usage: USAGE,
  argv,
  commands: [
    command({
      command: "$0 <title> [description] [colour]",
      describe: false,
      options: (y) =>
        y
          .positional("title", positionals.title)
          .positional("description", positionals.description)
          .positional("colour", positionals.colour)
          .options(options),
      settings: async (ctx) => (await import("./webhook.ts")).webhookSettings(ctx),
      run: async (ctx, args, settings) =>
        (await import("./webhook.ts")).runWebhook(ctx, settings, {
          title: text(args.title) ?? "",
          description: text(args.description),
          colour: text(args.colour),
          category: args.category as Category | undefined,
          footer: args.footer,
          dryRun: args.dryRun,
        }),
    }),
  ],
  examples: EXAMPLES,
});
