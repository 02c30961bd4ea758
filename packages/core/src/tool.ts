import type { ArgumentsCamelCase, Argv } from "yargs";
import type { Clock } from "./clock.ts";
import { JobError } from "./errors.ts";
import { helpRequest, renderHelp } from "./help.ts";
import type { Writer } from "./log.ts";
import { runMain } from "./main.ts";
import type { Paths } from "./paths.ts";
import type { Runner } from "./runner.ts";
import { VERSION } from "./version.ts";

/**
 * Everything a tool touches of the outside world, built in one place for every executable. A tool's functions take
 * only what they use (`Pick<ToolContext, "paths" | "env" | "clock">`), so a test builds a small one that points at
 * temporary directories and loopback stand-ins.
 */
export interface ToolContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stdout: Writer & { isTTY?: boolean };
  /** Its `fd` (process.stderr's is 2) lets toolLogger tell whether it is the journal; test stand-ins have none. */
  stderr: Writer & { isTTY?: boolean; fd?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  runner: Runner;
  /** Aborted on the first SIGINT or SIGTERM; its reason is the signal's name. */
  signal: AbortSignal;
  /**
   * What must still happen if a second signal ends the run at once (turning autosave back on): a job adds it while it
   * is owed and removes it once done; runTool runs what is left, for a few seconds at most, before the run ends.
   */
  atExit: Set<() => Promise<void>>;
}

/**
 * One subcommand (or the default one, `$0`): its yargs form, its typed options, its settings, and what it runs.
 *
 * `settings` reads and checks what the command is configured with (its flags, the environment, its env file: the
 * tool's settings.ts) and gives it typed; runTool calls it once the context is built and hands the result to `run`, so
 * a command never reads its own configuration from untyped arguments, and a bad value ends the run with its one line
 * before anything is done. A command whose settings depend on what it is asked (a dry run that needs none) says so in
 * its loader. Like `run`, it loads the tool's code with a dynamic import, so --help stays fast.
 */
export interface Command<A = object, S = undefined> {
  /** yargs' command string: "$0", "restore <snapshot>", "$0 [VERSION]". */
  command: string;
  /** Its line in --help; false hides it (a default command that the usage text already explains). */
  describe: string | false;
  options?: (argv: Argv) => Argv<A>;
  settings?: (ctx: ToolContext, args: ArgumentsCamelCase<A>) => S | Promise<S>;
  /** Loads the tool's code (a dynamic import, so --help stays fast) and runs it; the number is the exit code. */
  run: (ctx: ToolContext, args: ArgumentsCamelCase<A>, settings: S) => Promise<number | undefined>;
}

/** A command with its argument and settings types inferred from its options and its settings loader. */
export function command<A, S = undefined>(spec: Command<A, S>): Command<A, S> {
  return spec;
}

export interface Tool {
  name: string;
  /** The usage text at the top of --help. */
  usage: string;
  // biome-ignore lint/suspicious/noExplicitAny: each command has its own argument types; command() checked them
  commands: readonly Command<any, any>[];
  /** Options every command takes (revive's --config). */
  global?: (argv: Argv) => Argv;
  examples?: readonly [command: string, description: string][];
  /** Rewrites the arguments before parsing (webhook hides descriptions that start with "-"). */
  argv?: string[];
  /**
   * After the first signal, how long the run may take to wind down before the process ends with 130 (jar-download:
   * a download's temporary file is removed on the way out, anything else gets this long). Default: no limit.
   */
  windDownMs?: number;
}

/** How long a second SIGINT or SIGTERM waits for what atExit still owes before the run ends anyway. */
const SECOND_SIGNAL_MS = 5000;

/**
 * The whole executable: parses the arguments against the table of commands, builds the context, wires the signals,
 * runs the chosen command and exits with its code (errors as docs/contract.md's one line).
 *
 * Signals: the first SIGINT or SIGTERM aborts `ctx.signal` and lets the command end cleanly. A second one ends the run
 * without waiting for the command, once what `ctx.atExit` still owes is done or SECOND_SIGNAL_MS passed: runMain then
 * prints "interrupted by <the first signal>" and exits 1.
 */
export function runTool(tool: Tool): Promise<never> {
  return runMain(tool.name, async () => {
    const argv = tool.argv ?? process.argv.slice(2);
    const chosen = (await answerHelp(tool, argv)) ? undefined : await parse(tool, argv);
    if (!chosen) return 0;
    const controller = new AbortController();
    const atExit = new Set<() => Promise<void>>();
    const ended = onSignals(controller, atExit, tool.windDownMs);
    const ctx = await systemContext(controller.signal, atExit);
    const { command, args } = chosen;
    // Whichever ends first: the command (its settings read first), or a second signal.
    const run = async () => command.run(ctx, args, await command.settings?.(ctx, args));
    return Promise.race([run(), ended]);
  });
}

/**
 * `--help`, `-h`, `--version` and `<command> --help` answered from the table, as yargs would answer them, without
 * loading yargs (help.ts); true once answered. Anything else is yargs' to parse.
 */
async function answerHelp(tool: Tool, argv: readonly string[]): Promise<boolean> {
  const asked = helpRequest(tool, argv, process.env);
  if (!asked) return false;
  const text = asked.version ? VERSION : await renderHelp(tool, asked.command);
  if (text === undefined) return false;
  // As yargs prints it: console.log, which ignores a reader gone (EPIPE) where a bare write would throw.
  console.log(text);
  return true;
}

/** The arguments parsed by yargs (loaded here): the command they choose, or none when yargs answered them itself. */
async function parse(
  tool: Tool,
  argv: string[],
): Promise<{ command: Command<object, unknown>; args: ArgumentsCamelCase<object> } | undefined> {
  const { createCli } = await import("./yargs-cli.ts");
  let chosen: { command: Command<object, unknown>; args: ArgumentsCamelCase<object> } | undefined;
  let cli = createCli(tool.name, argv, tool.usage);
  if (tool.global) cli = tool.global(cli);
  for (const spec of tool.commands) {
    cli = cli.command(spec.command, spec.describe as string, spec.options ?? ((y) => y), (args) => {
      chosen = { command: spec, args };
    });
  }
  for (const [example, description] of tool.examples ?? []) cli = cli.example(example, description);
  await cli.parseAsync();
  return chosen;
}

function onSignals(
  controller: AbortController,
  atExit: Set<() => Promise<void>>,
  windDownMs: number | undefined,
): Promise<never> {
  let endNow: (error: Error) => void = () => {};
  const ended = new Promise<never>((_, reject) => {
    endNow = reject;
  });
  let signals = 0;
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.on(name, () => {
      if (++signals === 1) {
        controller.abort(name);
        if (windDownMs !== undefined) setTimeout(() => process.exit(130), windDownMs).unref();
        return;
      }
      if (signals > 2) return;
      const bound = new Promise((resolve) => setTimeout(resolve, SECOND_SIGNAL_MS).unref());
      void Promise.race([Promise.allSettled([...atExit].map((fn) => fn())), bound]).then(() =>
        endNow(new JobError(`interrupted by ${String(controller.signal.reason)}`)),
      );
    });
  }
  return ended;
}

/** The real world, loaded only once the arguments are parsed (--help and usage errors do not pay for it). */
async function systemContext(signal: AbortSignal, atExit: Set<() => Promise<void>>): Promise<ToolContext> {
  const [{ resolvePaths }, { systemClock }] = await Promise.all([import("./paths.ts"), import("./clock.ts")]);
  return {
    paths: resolvePaths(),
    env: process.env,
    clock: systemClock,
    stdout: process.stdout,
    stderr: process.stderr,
    // A getter: touching process.stdin opens it, and only a command that reads it (dashboard passwd) should.
    get stdin() {
      return process.stdin;
    },
    // zx is loaded by the first command that runs a program, not by every tool.
    runner: { run: async (...args) => (await import("./runner.ts")).zxRunner.run(...args) },
    signal,
    atExit,
  };
}
