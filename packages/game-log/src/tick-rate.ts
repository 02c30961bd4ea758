import type { JobError } from "@mcops/core/errors";
import type { VolumeDir } from "@mcops/core/volume";
import { LATEST_LOG, parseHeader } from "./game-log.ts";
import { type FollowPosition, LogFollower, positionAtEnd } from "./log-follower.ts";

/**
 * The server's tick rate, asked on the console and read back from the game log (issue 18): Paper's, Purpur's and
 * Folia's `tps` ("TPS from last 1m, 5m, 15m: 19.8, 20.0, 20.0", with § colour codes, a * before a figure above 21),
 * vanilla's `tick query` (1.20.3 and later: "Target tick rate: 20.0 per second." and, on the next line of the same
 * entry, "Average time per tick: 12.3ms (Target: 50.0ms)"). Only the console's own entries count, never a chat line.
 */
export type TickAnswer = { tps: number } | { unknown: true };

// biome-ignore lint/suspicious/noControlCharactersInRegex: it strips ANSI escape sequences, which begin with ESC.
const COLOURS = /\x1b\[[0-9;?]*[A-Za-z]|§[0-9a-fk-orx]/gi;
const PAPER = /^TPS from last 1m, 5m, 15m: \*?(\d+(?:\.\d+)?), /;
const RATE = /^Target tick rate: (\d+(?:\.\d+)?) per second\.?$/;
const AVERAGE = /^Average time per tick: (\d+(?:\.\d+)?)ms\b/;
/** Vanilla's command.unknown.command; Bukkit's console "Unknown command" (Spigot's default message). */
const UNKNOWN = /^(?:Unknown or incomplete command, see below for error|Unknown command\. Type "\/help" for help\.)$/;

/** The answer in the game log's text written after the command; undefined while there is none yet. */
export function parseTickAnswer(text: string): TickAnswer | undefined {
  let target: number | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "").replace(COLOURS, "");
    const header = parseHeader(line);
    if (!header) {
      // The line after "Target tick rate:" is the same entry's second line.
      const average = target === undefined ? undefined : AVERAGE.exec(line);
      if (average) return { tps: Math.min(target as number, 1000 / Math.max(Number(average[1]), 0.001)) };
      continue;
    }
    target = undefined;
    if (header.level !== "INFO") continue;
    const message = header.message.trim();
    const paper = PAPER.exec(message);
    if (paper) return { tps: Number(paper[1]) };
    const rate = RATE.exec(message);
    if (rate) target = Number(rate[1]);
    else if (UNKNOWN.test(message)) return { unknown: true };
  }
  return undefined;
}

/** Where the answer to a command sent next begins: the game log's end now; undefined when there is no log. */
export function gameLogEnd(volume: VolumeDir): FollowPosition | undefined {
  return positionAtEnd(volume, LATEST_LOG);
}

/**
 * The game log's whole lines written after `from` (from its beginning when it was rotated or truncated since), read
 * through the log follower, at most `maxBytes` of it; undefined when there is no log. What is there instead of a
 * regular file (a link, a FIFO) is thrown, never opened.
 */
export function gameLogSince(volume: VolumeDir, from: FollowPosition, maxBytes = 64 * 1024): string | undefined {
  const read = { text: "", found: false, problem: undefined as JobError | undefined };
  const follower = new LogFollower({
    dir: volume,
    file: LATEST_LOG,
    resumeFrom: from,
    turnBytes: maxBytes,
    onFile: () => {
      read.found = true;
    },
    onLine: (line) => {
      read.text += `${line}\n`;
    },
    onProblem: (error) => {
      read.problem ??= error;
    },
  });
  try {
    follower.poll();
  } finally {
    follower.stop();
  }
  if (read.problem) throw read.problem;
  return read.found ? read.text : undefined;
}
