import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VolumeDir } from "@mcops/core/volume";
import { fifoWitness } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gameLogEnd, gameLogSince, parseTickAnswer } from "../src/tick-rate.ts";

const at = (message: string, thread = "Server thread", level = "INFO") => `[12:00:00] [${thread}/${level}]: ${message}`;

describe("parseTickAnswer", () => {
  it("reads Paper's tps answer, colour codes and all, in both of its log styles", () => {
    expect(parseTickAnswer(at("§6TPS from last 1m, 5m, 15m: §c11.2§6, §e17.5§6, §a19.96"))).toEqual({ tps: 11.2 });
    expect(
      parseTickAnswer("[12:00:00 INFO]: \x1b[33mTPS from last 1m, 5m, 15m: \x1b[32m*20.0, *20.0, *20.0\x1b[m"),
    ).toEqual({
      tps: 20,
    });
  });

  it("reads vanilla's tick query: the target rate, and the average tick on the entry's next line", () => {
    const answer = [
      at("The game is running, but can't keep up with the target tick rate"),
      at("Target tick rate: 20.0 per second."),
      "Average time per tick: 80.0ms (Target: 50.0ms)",
      at("Percentiles: P50: 80.0ms P95: 96.0ms P99: 120.0ms, sample: 100"),
    ].join("\n");
    expect(parseTickAnswer(answer)).toEqual({ tps: 12.5 });
    // A quick server runs at its target rate, not faster.
    expect(
      parseTickAnswer(
        [at("Target tick rate: 20.0 per second."), "Average time per tick: 3.1ms (Target: 50.0ms)"].join("\n"),
      ),
    ).toEqual({ tps: 20 });
  });

  it("says when the server does not know the command (vanilla before 1.20.3, Bukkit)", () => {
    expect(parseTickAnswer(at("Unknown or incomplete command, see below for error"))).toEqual({ unknown: true });
    expect(parseTickAnswer(at('Unknown command. Type "/help" for help.'))).toEqual({ unknown: true });
  });

  it("takes nothing from chat or other threads, and nothing before the answer is there", () => {
    expect(parseTickAnswer(at("<Steve> TPS from last 1m, 5m, 15m: 1.0, 1.0, 1.0"))).toBeUndefined();
    expect(parseTickAnswer(at("[Not Secure] <Steve> Target tick rate: 20.0 per second."))).toBeUndefined();
    expect(parseTickAnswer(at("TPS from last 1m, 5m, 15m: 1.0, 1.0, 1.0", "Server thread", "WARN"))).toBeUndefined();
    expect(parseTickAnswer(at("Target tick rate: 20.0 per second."))).toBeUndefined();
    expect(parseTickAnswer("")).toBeUndefined();
  });
});

describe("the answer's text in the game log (gameLogEnd, gameLogSince)", () => {
  let dir: string;
  let volume: VolumeDir;
  let log: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mcops-tick-"));
    mkdirSync(join(dir, "logs"));
    log = join(dir, "logs", "latest.log");
    volume = VolumeDir.open(dir);
  });
  afterEach(() => {
    volume.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is the whole lines written after the command, each time from there, at most maxBytes", () => {
    expect(gameLogEnd(volume)).toBeUndefined();
    writeFileSync(log, `${at("TPS from last 1m, 5m, 15m: 1.0, 1.0, 1.0")}\n`);
    const from = gameLogEnd(volume);
    if (!from) throw new Error("no log");
    expect(gameLogSince(volume, from)).toBe("");
    appendFileSync(log, `${at("Target tick rate: 20.0 per second.")}\nAverage time per tick: 8`);
    expect(gameLogSince(volume, from)).toBe(`${at("Target tick rate: 20.0 per second.")}\n`);
    appendFileSync(log, "0.0ms (Target: 50.0ms)\n");
    const text = gameLogSince(volume, from) as string;
    expect(parseTickAnswer(text)).toEqual({ tps: 12.5 });
    expect(gameLogSince(volume, from, 40)).toBe("");
    expect(gameLogSince(volume, from, 100)).toBe(`${at("Target tick rate: 20.0 per second.")}\n`);
  });

  it("starts over in a log rotated since; undefined when the log is gone; a FIFO is thrown, never opened", async () => {
    writeFileSync(log, `${at("TPS from last 1m, 5m, 15m: 1.0, 1.0, 1.0")}\n`.repeat(5));
    const from = gameLogEnd(volume);
    if (!from) throw new Error("no log");
    renameSync(log, join(dir, "logs", "old.log"));
    expect(gameLogSince(volume, from)).toBeUndefined();
    writeFileSync(log, `${at("TPS from last 1m, 5m, 15m: 19.5, 20.0, 20.0")}\n`);
    expect(parseTickAnswer(gameLogSince(volume, from) as string)).toEqual({ tps: 19.5 });
    rmSync(log);
    execFileSync("mkfifo", [log]);
    const witness = fifoWitness(log);
    expect(() => gameLogEnd(volume)).toThrow(`${log} is a FIFO, not a regular file`);
    expect(() => gameLogSince(volume, from)).toThrow(`${log} is a FIFO, not a regular file`);
    expect(await witness.end()).toBe(false);
  });
});
