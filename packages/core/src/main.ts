import { formatErrorLine, McopsError } from "./errors.ts";
import { journalStream, withPriority } from "./journal.ts";
import { type LogLevel, oneLine, type Writer } from "./log.ts";
import { redact } from "./secrets.ts";

/**
 * `--config FILE`: the operator's local .env, for the tools run on the operator's computer (revive, hibernate,
 * discord-control register); declared once, spread into each command's options.
 */
export const configOption = { type: "string", describe: "the local .env (default ./.env)" } as const;

/**
 * `--dry-run`: show what the command would do and do none of it (backup restore, jar-download, restart-with-warning,
 * revive dns, webhook); declared once, each command saying in its help what it shows.
 */
export function dryRunOption(describe: string) {
  return { type: "boolean", default: false, describe } as const;
}

/**
 * The one place that turns what a tool's body returned or threw into an exit code and, for errors, the one line of
 * docs/contract.md: `<tool>: <what is wrong> (<file or field>) — <what to do>`. Stack traces only with MCOPS_DEBUG=1.
 * When stderr is the journal the line carries `<3>` (`journalctl -p err` finds it) and each line of a stack `<7>`:
 * the stack is MCOPS_DEBUG's output, so it files as debug, right after its error.
 */
export function reportError(
  tool: string,
  error: unknown,
  stderr: Writer,
  options: { debug?: boolean; journal?: boolean } = {},
): number {
  const { debug = false, journal = false } = options;
  const write = (level: LogLevel, text: string) => stderr.write(journal ? withPriority(level, text) : text);
  if (error instanceof McopsError) {
    // One line, and game text in it (a level-name, a file name) cannot reach the terminal as control characters.
    write("ERROR", `${oneLine(redact(formatErrorLine(tool, error)))}\n`);
    if (debug && error.stack) write("DEBUG", `${redact(error.stack)}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  write(
    "ERROR",
    `${tool}: unexpected error: ${oneLine(redact(message))} — run again with MCOPS_DEBUG=1 and report it\n`,
  );
  if (debug && error instanceof Error && error.stack) write("DEBUG", `${redact(error.stack)}\n`);
  return 1;
}

/** Runs a tool's body and exits with its code once stdout has drained. */
export async function runMain(tool: string, body: () => Promise<number | undefined>): Promise<never> {
  let code: number;
  try {
    code = (await body()) ?? 0;
  } catch (error) {
    code = reportError(tool, error, process.stderr, {
      debug: process.env.MCOPS_DEBUG === "1",
      journal: journalStream(process.env),
    });
  }
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(code);
}
