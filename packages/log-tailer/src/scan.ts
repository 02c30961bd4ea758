import { closeSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
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

/**
 * `log-tailer scan FILE...`: the events of whole files, one JSON object per line on stdout, in log order; posts nothing.
 * Files are read in order through one parser, so players online at the end of one file are online in the next
 * (a midnight rotation starts a file with no startup lines). Reads in large chunks: it is meant for big logs.
 */
export function runScan(files: string[], stdout: Writer): number {
  let out: string[] = [];
  const parser = new GameLogParser((event) => {
    out.push(scanLine(event));
    if (out.length >= 4096) {
      stdout.write(`${out.join("\n")}\n`);
      out = [];
    }
  });
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  for (const file of files) {
    let fd: number;
    try {
      fd = openSync(file, "r");
    } catch (error) {
      throw new JobError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code})`, {
        hint: "give the path of a game log",
      });
    }
    parser.resetLines(0);
    let rest = "";
    const decoder = new StringDecoder("utf8"); // a character split between two reads stays whole
    try {
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, null);
        if (read === 0) break;
        const text = rest + decoder.write(buffer.subarray(0, read));
        let start = 0;
        for (;;) {
          const end = text.indexOf("\n", start);
          if (end < 0) break;
          parser.push(text.slice(start, end));
          start = end + 1;
        }
        rest = text.slice(start);
      }
      rest += decoder.end();
      if (rest) parser.push(rest);
    } finally {
      closeSync(fd);
    }
  }
  parser.flush();
  if (out.length) stdout.write(`${out.join("\n")}\n`);
  return 0;
}
