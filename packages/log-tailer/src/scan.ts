import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { escapeHidden, type Writer } from "@mcops/core/log";
import { kindOf } from "@mcops/core/volume";
import { type GameEvent, GameLogParser } from "@mcops/game-log/game-log";
import { LineFilter } from "@mcops/game-log/line-filter";
import { MAX_LINE_BYTES } from "@mcops/game-log/log-follower";

/** docs/contract.md's `log-tailer scan` line: type, player (join, leave, death), message, time, line. */
export function scanLine(event: GameEvent): string {
  // JSON.stringify escapes only C0: DEL, C1 codes, the Unicode line separators and the bidirectional and zero-width
  // controls from players' text are escaped too, so a line read on a terminal or by a line-splitting tool is one line
  // of plain text that reads as it is.
  return escapeHidden(scanJson(event));
}

/**
 * scanLine before escapeHidden: JSON.stringify of `{ type, player?, message, time, line }`, written field by field
 * (each value through JSON.stringify, the keys in that order), which is the same text at half the cost.
 */
function scanJson(event: GameEvent): string {
  const player = event.player === undefined ? "" : `,"player":${JSON.stringify(event.player)}`;
  return `{"type":${JSON.stringify(event.type)}${player},"message":${JSON.stringify(event.message)},"time":${JSON.stringify(event.time)},"line":${JSON.stringify(event.line)}}`;
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * Opens a file the operator named: without blocking (a FIFO opened for reading would wait for a writer forever) and
 * then only if it is a regular file (a FIFO, a device or a socket is refused, and never read).
 */
function openLog(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new JobError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code})`, {
      hint: "give the path of a game log",
    });
  }
  const stat = fstatSync(fd);
  if (stat.isDirectory()) {
    closeSync(fd);
    throw new JobError(`${file} is a directory`, { hint: "give the path of a game log, e.g. logs/latest.log" });
  }
  if (!stat.isFile()) {
    closeSync(fd);
    throw new JobError(`${file} is ${kindOf(stat)}, not a regular file`, { hint: "give the path of a game log" });
  }
  return fd;
}

/**
 * `log-tailer scan FILE...`: the events of whole files, one JSON object per line on stdout, in log order; posts nothing.
 * Files are read in order through one parser, so players online at the end of one file are online in the next
 * (a midnight rotation starts a file with no startup lines). Reads in large chunks: it is meant for big logs. Lines are
 * tested on their bytes first (LineFilter): only those the parser could act on are decoded and pushed, the others only
 * counted; `everyLine` pushes every line instead (the same output, slower: what the tests compare the fast path to).
 */
export function runScan(files: string[], stdout: Writer, chunkBytes = CHUNK_BYTES, everyLine = false): number {
  let out: string[] = [];
  const parser = new GameLogParser((event) => {
    out.push(scanJson(event));
    if (out.length >= 4096) {
      stdout.write(escapedLines(out));
      out = [];
    }
  });
  // Every file is opened before any is read: a wrong path is said at once, with nothing printed before it.
  const fds: number[] = [];
  try {
    for (const file of files) fds.push(openLog(file));
    for (const fd of fds) {
      parser.resetLines(0);
      if (everyLine) readLines(fd, chunkBytes, (line) => parser.push(line));
      else readChunks(fd, chunkBytes, MAX_LINE_BYTES, filteredLines(parser));
    }
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  parser.flush();
  if (out.length) stdout.write(escapedLines(out));
  return 0;
}

/** Printable ASCII and newlines: what escapeHidden leaves as it is (JSON.stringify has escaped every other C0 code). */
const PLAIN = /^[\x20-\x7e\n]*$/;

/**
 * scanJson's lines as scanLine's, one per line: escapeHidden leaves newlines alone and never reads across one, so
 * escaping the joined lines escapes each line; and lines of printable ASCII only, most of them, it is not run on.
 */
function escapedLines(lines: string[]): string {
  const text = lines.join("\n");
  return `${PLAIN.test(text) ? text : escapeHidden(text)}\n`;
}

/** What readChunks hands on: the complete lines of each read, a line cut at the cap, and a last line without newline. */
interface LineSink {
  /** `buffer[begin, cut)`: whole lines, each ending in a newline byte but the last, which ends at `cut` (a newline). */
  lines(buffer: Buffer, begin: number, cut: number): void;
  /** A line over the cap: its first `maxLine` bytes, decoded. */
  cutLine(text: string): void;
  /** The last line, without a newline, decoded. */
  lastLine(text: string): void;
}

/**
 * A line as decoded whole, cut to `maxLine` bytes: only a line of more than a third of the cap in UTF-16 units can be
 * over it in UTF-8 bytes (invalid bytes become three-byte U+FFFD), so only those are measured.
 */
function capped(text: string, maxLine: number): string {
  if (text.length * 3 > maxLine && Buffer.byteLength(text) > maxLine)
    return Buffer.from(text).toString("utf8", 0, maxLine);
  return text;
}

/**
 * Every line of a file, without its newline (a last line without one included). Each read is cut after its last
 * newline byte and decoded as one string: a newline byte is never part of a UTF-8 sequence, so no character is split,
 * and nothing is decoded twice. The bytes after the cut start the next read; a line longer than the buffer grows it,
 * up to the line cap (as the follower: a longer line is its first `maxLine` bytes, the rest up to its newline is
 * skipped), so a file of any size, with or without newlines, is read in linear time and bounded memory.
 */
export function readLines(
  fd: number,
  chunkBytes: number,
  onLine: (line: string) => void,
  maxLine = MAX_LINE_BYTES,
): void {
  readChunks(fd, chunkBytes, maxLine, {
    lines(buffer, begin, cut) {
      const text = buffer.toString("utf8", begin, cut);
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        onLine(capped(text.slice(start, nl), maxLine));
        start = nl + 1;
      }
      onLine(capped(text.slice(start), maxLine));
    },
    cutLine: onLine,
    lastLine: (text) => onLine(capped(text, maxLine)),
  });
}

const LBRACKET = 0x5b;

/**
 * The lines of each read as the parser would have them from readLines, but decoded and pushed only when LineFilter
 * says they may matter, when the parser needs every entry line (an open entry, a login's window), or when a line is long
 * enough for the cap to cut it (its cut end could read otherwise); the others are counted with `skip()`. Line numbers
 * stay exact: a skipped line is one newline byte.
 */
function filteredLines(parser: GameLogParser, maxLine = MAX_LINE_BYTES): LineSink {
  const filter = new LineFilter(parser.online);
  const push = (text: string) => parser.push(text);
  return {
    lines(buffer, begin, cut) {
      filter.region(buffer, cut + 1);
      let skipped = 0;
      for (let start = begin; start <= cut; ) {
        const nl = buffer.indexOf(10, start);
        // A line that does not start with `[` has no entry header (one with ESC or § may, once they are stripped:
        // mayMatter takes those): the parser only adds it to an open entry's stack, exception or report, none of
        // which a scan line prints, so it is counted even while the parser needs every line.
        const entry = buffer[start] === LBRACKET;
        if (filter.mayMatter(buffer, start, nl) || (parser.needsEveryLine && entry) || (nl - start) * 3 > maxLine) {
          if (skipped) parser.skip(skipped);
          skipped = 0;
          parser.push(capped(buffer.toString("utf8", start, nl), maxLine));
        } else skipped++;
        start = nl + 1;
      }
      if (skipped) parser.skip(skipped);
    },
    cutLine: push,
    lastLine: (text) => parser.push(capped(text, maxLine)),
  };
}

/** readLines' reads: the buffer, what is carried from one read to the next, and the lines cut at the cap. */
function readChunks(fd: number, chunkBytes: number, maxLine: number, sink: LineSink): void {
  let buffer = Buffer.allocUnsafe(chunkBytes);
  let carried = 0;
  /** In the rest of a cut line: bytes are dropped up to the next newline. */
  let skipping = false;
  for (;;) {
    if (carried === buffer.length) {
      if (carried > maxLine) {
        sink.cutLine(buffer.toString("utf8", 0, maxLine));
        skipping = true;
        carried = 0;
      } else {
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxLine + 1));
        buffer.copy(bigger, 0, 0, carried);
        buffer = bigger;
      }
    }
    const read = readSync(fd, buffer, carried, buffer.length - carried, null);
    if (read === 0) break;
    const end = carried + read;
    let begin = 0;
    if (skipping) {
      const nl = buffer.indexOf(10, carried);
      if (nl < 0 || nl >= end) {
        carried = 0;
        continue;
      }
      skipping = false;
      begin = nl + 1;
    }
    const cut = buffer.lastIndexOf(10, end - 1);
    if (cut < begin) {
      buffer.copy(buffer, 0, begin, end);
      carried = end - begin;
      continue;
    }
    sink.lines(buffer, begin, cut);
    buffer.copy(buffer, 0, cut + 1, end);
    carried = end - cut - 1;
  }
  if (carried > 0 && !skipping) sink.lastLine(buffer.toString("utf8", 0, carried));
}
