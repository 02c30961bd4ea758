import type { ChildProcess, SpawnOptions, spawn } from "node:child_process";
import { $ } from "zx/core";

/**
 * Runs external programs (restic, rclone) for the tools, through zx. Secrets go in `env`, never in `args`: a process's
 * arguments are readable by every user in /proc/<pid>/cmdline. Output is streamed line by line as it comes (restic's
 * --json progress) and also kept whole for error messages.
 */
interface RunOptions {
  /** Added to (or, with undefined, removed from) this process's environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /** Aborting sends the program SIGTERM (restic then cleans up its lock) and resolves with its result. */
  signal?: AbortSignal;
  /** Told the child's pid once it runs. */
  onSpawn?: (pid: number) => void;
}

export interface RunResult {
  /** Exit code; null when ended by a signal. */
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface Runner {
  run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult>;
}

/** zx hands `spawn` an empty argument list together with shell: true, which Node 24 deprecates (DEP0190). */
function spawnCommandLine(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  // Taken when a program runs, not imported: an ES import of a builtin loads it (and what it pulls in) at the start of
  // every tool, and the daemons that rarely run a program would carry it (issue 35).
  const { spawn } = process.getBuiltinModule("node:child_process");
  return args.length ? spawn(command, args, options) : spawn(command, options);
}

function mergedEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export const zxRunner: Runner = {
  async run(command, args, options = {}) {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) controller.abort();
    const child = $({
      env: mergedEnv(options.env),
      cwd: options.cwd,
      nothrow: true,
      quiet: true,
      verbose: false,
      ac: controller,
      killSignal: "SIGTERM",
      spawn: spawnCommandLine as typeof spawn,
    })`${command} ${args}`;
    const { createInterface } = process.getBuiltinModule("node:readline");
    if (options.onStdoutLine) createInterface({ input: child.stdout }).on("line", options.onStdoutLine);
    if (options.onStderrLine) createInterface({ input: child.stderr }).on("line", options.onStderrLine);
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    try {
      const output = await child;
      return { code: output.exitCode, signal: output.signal, stdout: output.stdout, stderr: output.stderr };
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  },
};
