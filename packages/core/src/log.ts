import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { type Clock, isoSeconds, systemClock } from "./clock.ts";
import { journalStream, withPriority } from "./journal.ts";
import type { LogLevel } from "./log-level.ts";
import type { EventJournal } from "./records.ts";
import { redact } from "./secrets.ts";

/**
 * Log lines as docs/contract.md fixes them: `2026-11-21T06:00:00Z LEVEL message`, one line per entry, secrets redacted.
 * Writing a log never fails the job: a log file that cannot be written is reported once on the echo stream.
 */
export type { LogLevel } from "./log-level.ts";

const RANK: Record<LogLevel, number> = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3 };

interface LogOptions {
  /** false: write to the log file only (the caller reports it on stderr itself). */
  echo?: boolean;
}

export interface Logger {
  /** Where the tool's records go along with their lines (events.ts, `record`); none: the lines only. */
  events?: EventJournal | undefined;
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
  /** The tool's records (events.ts): `record` appends there what it logs. */
  events?: EventJournal | undefined;
}

/**
 * The characters that must never reach a reader as they are, in players' names and the game's text: C0 controls but tab
 * and line feed (ESC, BEL, a lone CR), DEL, C1 codes, the Unicode line separators (U+2028, U+2029), every invisible
 * format character (Unicode's Cf: the bidirectional controls U+061C, U+200E, U+200F, U+202A to U+202E and U+2066 to
 * U+2069; the zero-width U+180E, U+200B to U+200D, U+2060 to U+2064 and U+FEFF; the deprecated format controls U+206A
 * to U+206F, the interlinear annotations U+FFF9 to U+FFFB, the soft hyphen, the tag characters U+E0001 and U+E0020 to
 * U+E007F, which are invisible copies of ASCII), and a lone surrogate (half a character). A U+202E in a world's name
 * shows `dlrow` for `world` and the rest of the line backwards; tag characters carry a text nobody sees: the operator
 * would read something else than is there. So are the characters Unicode says a renderer shows nothing of
 * (Default_Ignorable_Code_Point) outside Cf: the combining grapheme joiner U+034F, the Hangul fillers U+115F, U+1160,
 * U+3164 and U+FFA0 (a "name" of fillers looks empty), the Khmer inherent vowels U+17B4 and U+17B5, and the variation
 * selectors U+180B to U+180F, U+FE00 to U+FE0F and U+E0100 to U+E01EF (a run of them carries a hidden text, as tag
 * characters do); and the braille blank U+2800, which is not ignorable but shows as a space. Log lines, error lines and
 * `log-tailer scan`'s JSON write them visibly (oneLine, escapeHidden); Discord messages leave them out (stripHidden,
 * through the notifier).
 */
const HIDDEN_CHARACTERS = /(?![\t\n])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/gu;

/** `\uNNNN` for each UTF-16 unit (two for a tag character), as JSON and JavaScript write a character. */
function unicodeEscape(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * Every HIDDEN_CHARACTERS character written as `\uNNNN`, nothing else changed: for JSON already made by JSON.stringify
 * (which escapes C0 only), so that it stays the same JSON and shows as plain text on a terminal.
 */
export function escapeHidden(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, unicodeEscape);
}

/** Text without the HIDDEN_CHARACTERS (line breaks and tabs stay): what Discord shows of the game's text. */
export function stripHidden(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, "");
}

/**
 * A message as one line of plain text: line breaks become ` | `, and every other HIDDEN_CHARACTERS character (ESC,
 * BEL, a lone CR, C1 codes, the Unicode line separators, bidirectional and zero-width controls) is written as `\xNN` /
 * `\uNNNN`. Messages carry players' names and the game's text: raw, they could draw a false line on the terminal that
 * shows the log, set its clipboard, or turn what it shows around.
 */
export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, " | ").replace(HIDDEN_CHARACTERS, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : unicodeEscape(c);
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
    events: options.events,
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
  /** The tool's records (events.ts, eventJournal). */
  events?: EventJournal | undefined;
}): Logger {
  return createLogger({
    events: options.events,
    file: join(options.logDir, options.file),
    echo: options.stderr,
    echoLevel: options.stderr.isTTY ? "INFO" : "WARN",
    journal: options.stderr.fd !== undefined && journalStream(options.env, options.stderr.fd),
    debug: options.env.MCOPS_DEBUG === "1",
    clock: options.clock,
  });
}
