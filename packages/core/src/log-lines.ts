import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { isErrno } from "./fs.ts";
import type { LogLevel } from "./log.ts";

/** One line of a tool's log, as docs/contract.md writes them: `2026-11-21T06:00:00Z LEVEL message`. */
export interface LogLine {
  /** Epoch ms. */
  time: number;
  level: LogLevel;
  text: string;
}

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (DEBUG|INFO|WARN|ERROR) (.*)$/;

export function parseLogLine(line: string): LogLine | undefined {
  const match = LINE.exec(line);
  if (!match) return undefined;
  return { time: Date.parse(match[1] as string), level: match[2] as LogLevel, text: match[3] as string };
}

/**
 * The log lines in the last `maxBytes` of a file (a partial first line dropped), oldest first; [] when the file does
 * not exist or cannot be read. Bounded, so a log of any size costs the page the same.
 */
export function readLogTail(file: string, maxBytes = 256 * 1024): LogLine[] {
  return tailLines(file, maxBytes).flatMap((line) => parseLogLine(line) ?? []);
}

/**
 * The whole lines in the last `maxBytes` of a file (a partial first line dropped), oldest first; [] when it does not
 * exist or cannot be read. Opened without blocking and read only when it is a regular file (a FIFO never holds a
 * reader), never more than `maxBytes`.
 */
export function tailLines(file: string, maxBytes: number): string[] {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    // Not there, not ours to read, or a path through something that is not a directory: nothing to read.
    if (["ENOENT", "EACCES", "ENOTDIR", "ELOOP", "ENXIO"].some((code) => isErrno(error, code))) return [];
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return [];
    const size = stat.size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    let text = buffer.subarray(0, read).toString("utf8");
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    return text.split("\n");
  } finally {
    closeSync(fd);
  }
}
