import yargs, { type Argv } from "yargs";
import { UsageError } from "./errors.ts";
import { helpWidth } from "./help.ts";
import { VERSION } from "./version.ts";

/**
 * A yargs parser with the behaviour every tool shares: `--help`, `--version`, strict flags, and usage errors thrown
 * as UsageError (exit 2) instead of yargs printing the whole help. runTool loads this module (and yargs with it) with a
 * dynamic import, only for arguments that help.ts does not answer; help.ts lays out the same text as this parser's
 * --help (its test compares them), so what changes here changes there.
 */
export function createCli(tool: string, argv: string[], usage: string): Argv {
  return yargs(argv)
    .scriptName(tool)
    .usage(usage)
    .version(VERSION)
    .help()
    .alias("h", "help")
    .strict()
    .detectLocale(false)
    .wrap(helpWidth())
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message.replace(/\s*\n\s*/g, " "), { hint: `see ${tool} --help` });
    });
}
