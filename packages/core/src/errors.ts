/**
 * The error classes every tool throws. Only `runMain` (main.ts) turns them into a message and an exit code, following
 * docs/contract.md: 0 done, 1 the job failed, 2 usage error, 75 busy or skipped for a temporary reason, 78 configuration error.
 */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  busy: 75,
  config: 78,
} as const;

export interface McopsErrorOptions {
  /** The file, field or address the problem is about; printed in brackets. Never a secret. */
  where?: string | undefined;
  /** What the operator should do about it; printed after a dash. */
  hint?: string | undefined;
  cause?: unknown;
}

export class McopsError extends Error {
  readonly exitCode: number = ExitCode.failed;
  readonly where: string | undefined;
  readonly hint: string | undefined;

  constructor(message: string, options: McopsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.where = options.where;
    this.hint = options.hint;
  }
}

/** The job was attempted and failed (exit 1). */
export class JobError extends McopsError {}

/** The command line is wrong (exit 2). */
export class UsageError extends McopsError {
  override readonly exitCode: number = ExitCode.usage;
}

/** Busy, or nothing to do for a temporary reason: a lock is held, the server is offline (exit 75). */
export class BusyError extends McopsError {
  override readonly exitCode: number = ExitCode.busy;
}

/** A configuration file or field is missing, invalid, unreadable or insecure (exit 78). */
export class ConfigError extends McopsError {
  override readonly exitCode: number = ExitCode.config;
}

/** `<tool>: <what is wrong> (<file or field>) — <what to do>` */
export function formatErrorLine(tool: string, error: McopsError): string {
  return `${tool}: ${describeError(error)}`;
}

/** An error as the tools say it in a line of their logs: `<what is wrong> (<where>) — <what to do>`, else its message. */
export function describeError(error: unknown): string {
  if (!(error instanceof McopsError)) return error instanceof Error ? error.message : String(error);
  let line = error.message;
  if (error.where) line += ` (${error.where})`;
  if (error.hint) line += ` — ${error.hint}`;
  return line;
}
