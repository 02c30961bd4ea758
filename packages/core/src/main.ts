import yargs, { type Argv } from "yargs";
import { formatErrorLine, McopsError, UsageError } from "./errors.ts";
import { oneLine, type Writer } from "./log.ts";
import { redact } from "./secrets.ts";
import { VERSION } from "./version.ts";

/**
 * The one place that turns what a tool's body returned or threw into an exit code and, for errors, the one line of
 * docs/contract.md: `<tool>: <what is wrong> (<file or field>) — <what to do>`. Stack traces only with MCOPS_DEBUG=1.
 */
export function reportError(tool: string, error: unknown, stderr: Writer, debug: boolean): number {
  if (error instanceof McopsError) {
    // One line, and game text in it (a level-name, a file name) cannot reach the terminal as control characters.
    stderr.write(`${oneLine(redact(formatErrorLine(tool, error)))}\n`);
    if (debug && error.stack) stderr.write(`${redact(error.stack)}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  stderr.write(`${tool}: unexpected error: ${oneLine(redact(message))} — run again with MCOPS_DEBUG=1 and report it\n`);
  if (debug && error instanceof Error && error.stack) stderr.write(`${redact(error.stack)}\n`);
  return 1;
}

/** Runs a tool's body and exits with its code once stdout has drained. */
export async function runMain(tool: string, body: () => Promise<number | undefined>): Promise<never> {
  let code: number;
  try {
    code = (await body()) ?? 0;
  } catch (error) {
    code = reportError(tool, error, process.stderr, process.env.MCOPS_DEBUG === "1");
  }
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(code);
}

/**
 * A yargs parser with the behaviour every tool shares: `--help`, `--version`, strict flags, and usage errors thrown
 * as UsageError (exit 2) instead of yargs printing the whole help.
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
    .wrap(Math.min(110, process.stdout.columns || 80))
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message.replace(/\s*\n\s*/g, " "), { hint: `see ${tool} --help` });
    });
}
