import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { type GameEvent, GameLogParser } from "@mcops/core/game-log";
import { type Writer } from "@mcops/core/log";

/** CONTRACT.md's `log-tailer scan` line: type, player (join, leave, death), message, time, line. */
export function scanLine(event: GameEvent): string {
  const out: Record<string, string | number> = { type: event.type };
  if (event.player !== undefined) out.player = event.player;
  out.message = event.message;
  out.time = event.time;
  out.line = event.line;
  return JSON.stringify(out);
}

const CHUNK_BYTES = 1024 * 1024;

function openLog(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    throw new JobError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code})`, {
      hint: "give the path of a game log",
    });
  }
  if (fstatSync(fd).isDirectory()) {
    closeSync(fd);
    throw new JobError(`${file} is a directory`, { hint: "give the path of a game log, e.g. logs/latest.log" });
  }
  return fd;
}

/**
 * `log-tailer scan FILE...`: the events of whole files, one JSON object per line on stdout, in log order; posts nothing.
 * Files are read in order through one parser, so players online at the end of one file are online in the next
 * (a midnight rotation starts a file with no startup lines). Reads in large chunks: it is meant for big logs.
 */
export function runScan(files: string[], stdout: Writer, chunkBytes = CHUNK_BYTES): number {
  let out: string[] = [];
  const parser = new GameLogParser((event) => {
    out.push(scanLine(event));
    if (out.length >= 4096) {
      stdout.write(`${out.join("\n")}\n`);
      out = [];
    }
  });
  // Every file is opened before any is read: a wrong path is said at once, with nothing printed before it.
  const fds: number[] = [];
  try {
    for (const file of files) fds.push(openLog(file));
    for (const fd of fds) {
      parser.resetLines(0);
      readLines(fd, chunkBytes, (line) => parser.push(line));
    }
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  parser.flush();
  if (out.length) stdout.write(`${out.join("\n")}\n`);
  return 0;
}

/**
 * Every line of a file, without its newline (a last line without one included). Each read is cut after its last
 * newline byte and decoded as one string: a newline byte is never part of a UTF-8 sequence, so no character is split,
 * and nothing is decoded twice. The bytes after the cut start the next read; a line longer than the buffer grows it.
 */
function readLines(fd: number, chunkBytes: number, onLine: (line: string) => void): void {
  let buffer = Buffer.allocUnsafe(chunkBytes);
  let carried = 0;
  for (;;) {
    if (carried === buffer.length) {
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, carried);
      buffer = bigger;
    }
    const read = readSync(fd, buffer, carried, buffer.length - carried, null);
    if (read === 0) break;
    const end = carried + read;
    const cut = buffer.lastIndexOf(10, end - 1);
    if (cut < 0) {
      carried = end;
      continue;
    }
    const text = buffer.toString("utf8", 0, cut);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      onLine(text.slice(start, nl));
      start = nl + 1;
    }
    onLine(text.slice(start));
    buffer.copy(buffer, 0, cut + 1, end);
    carried = end - cut - 1;
  }
  if (carried > 0) onLine(buffer.toString("utf8", 0, carried));
}
