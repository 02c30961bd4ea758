import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { type Clock, isoSeconds, systemClock } from "./clock.ts";
import { journalStream, withPriority } from "./journal.ts";
import { redact } from "./secrets.ts";

/**
 * Log lines as docs/contract.md fixes them: `2026-11-21T06:00:00Z LEVEL message`, one line per entry, secrets redacted.
 * Writing a log never fails the job: a log file that cannot be written is reported once on the echo stream.
 */
export type LogLevel = "DEBUG" | "INFO" | "WARN" | "ERROR";

const RANK: Record<LogLevel, number> = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3 };

interface LogOptions {
  /** false: write to the log file only (the caller reports it on stderr itself). */
  echo?: boolean;
}

export interface Logger {
  debug(message: string): void;
  info(message: string, options?: LogOptions): void;
  warn(message: string, options?: LogOptions): void;
  error(message: string, options?: LogOptions): void;
}

export interface Writer {
  write(text: string): unknown;
}

interface LoggerOptions {
  /** The log file to append to (e.g. /var/log/mc-backup.log); none: echo only. */
  file?: string | undefined;
  /** Also write lines here (stderr of a command run by hand or by cron). */
  echo?: Writer | undefined;
  /** Lowest level written to echo; default INFO. */
  echoLevel?: LogLevel | undefined;
  /** Echo is the systemd journal: echoed lines start with their level's priority (`<3>` ERROR to `<7>` DEBUG). */
  journal?: boolean | undefined;
  /** Write DEBUG lines to the file too (MCOPS_DEBUG=1). */
  debug?: boolean | undefined;
  clock?: Clock | undefined;
}

/**
 * A message as one line of plain text: line breaks become ` | `, and every other control character (ESC, BEL, a lone
 * CR, C1 codes, the Unicode line separators) is written as `\xNN` / `\uNNNN`. Messages carry players' names and the
 * game's text: raw, they could draw a false line on the terminal that shows the log, or set its clipboard.
 */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: it escapes the control characters in players' names and the game's text
  return text.replace(/\r?\n/g, " | ").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const { file, echo, echoLevel = "INFO", journal = false, debug = false, clock = systemClock } = options;
  let fileBroken = false;
  let dirReady = false;
  const echoed = (level: LogLevel, line: string) => (journal ? withPriority(level, line) : line);

  function write(level: LogLevel, message: string, options: LogOptions = {}): void {
    const text = oneLine(redact(message));
    const line = `${isoSeconds(clock.now())} ${level} ${text}\n`;
    if (echo && options.echo !== false && RANK[level] >= RANK[echoLevel]) echo.write(echoed(level, line));
    if (!file || fileBroken || (level === "DEBUG" && !debug)) return;
    try {
      if (!dirReady) {
        mkdirSync(dirname(file), { recursive: true });
        dirReady = true;
      }
      appendFileSync(file, line, { mode: 0o640 });
    } catch (error) {
      fileBroken = true;
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      const warning = `${isoSeconds(clock.now())} WARN cannot write ${file} (${code}); going on\n`;
      (echo ?? process.stderr).write(echoed("WARN", warning));
    }
  }

  return {
    debug: (m) => write("DEBUG", m),
    info: (m, o) => write("INFO", m, o),
    warn: (m, o) => write("WARN", m, o),
    error: (m, o) => write("ERROR", m, o),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A tool's logger as every tool wants it: its file in the log dir; every line on stderr when run by hand (a
 * terminal), only warnings and errors under cron or systemd (so their logs show what went wrong while the file keeps
 * the whole story), with their priority when stderr is the journal (`journalctl -p warning` finds them); DEBUG lines
 * with MCOPS_DEBUG=1.
 */
export function toolLogger(options: {
  logDir: string;
  file: string;
  /** process.stderr, or a test's stand-in: without an `fd` it is never the journal. */
  stderr: Writer & { isTTY?: boolean; fd?: number };
  env: NodeJS.ProcessEnv;
  clock?: Clock | undefined;
}): Logger {
  return createLogger({
    file: join(options.logDir, options.file),
    echo: options.stderr,
    echoLevel: options.stderr.isTTY ? "INFO" : "WARN",
    journal: options.stderr.fd !== undefined && journalStream(options.env, options.stderr.fd),
    debug: options.env.MCOPS_DEBUG === "1",
    clock: options.clock,
  });
}
