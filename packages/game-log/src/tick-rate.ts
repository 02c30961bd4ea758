import { closeSync } from "node:fs";
import { readRange, type VolumeDir } from "@mcops/core/volume";
import { LATEST_LOG, parseHeader } from "./game-log.ts";

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

/** The size of the game log now: where the answer to a command sent next begins; undefined when there is no log. */
export function gameLogSize(volume: VolumeDir): number | undefined {
  const file = volume.tryOpenFile(LATEST_LOG);
  if (!file) return undefined;
  closeSync(file.fd);
  return file.stat.size;
}

/**
 * The game log's text from `offset` on (from its beginning when it is shorter now: it was rotated), at most
 * `maxBytes`; undefined when there is no log.
 */
export function gameLogSince(volume: VolumeDir, offset: number, maxBytes = 64 * 1024): string | undefined {
  const file = volume.tryOpenFile(LATEST_LOG);
  if (!file) return undefined;
  try {
    const start = file.stat.size < offset ? 0 : offset;
    return readRange(file.fd, start, Math.min(file.stat.size - start, maxBytes)).toString("utf8");
  } finally {
    closeSync(file.fd);
  }
}
