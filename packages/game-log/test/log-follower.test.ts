import { execFileSync, spawn } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { JobError } from "@mcops/core/errors";
import { VolumeDir } from "@mcops/core/volume";
import { fifoWitness } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GameLogParser } from "../src/game-log.ts";
import {
  type FollowerOptions,
  type FollowPosition,
  LogFollower,
  MAX_LINE_BYTES,
  positionAtEnd,
} from "../src/log-follower.ts";

let dir: string;
let volume: VolumeDir;
let follower: LogFollower | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcops-follow-"));
  volume = VolumeDir.open(dir);
});

afterEach(() => {
  follower?.stop();
  follower = undefined;
  volume.close();
  rmSync(dir, { recursive: true, force: true });
});

const joinLine = (n: number) => `[12:00:00] [Server thread/INFO]: P${n} joined the game\n`;

/** How long a wait for something the follower does in milliseconds may take before it fails, on a busy machine too. */
const WAIT = 20_000;

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function follow(path: string, resumeFrom?: FollowPosition) {
  const players: string[] = [];
  let position: FollowPosition | undefined;
  const parser = new GameLogParser((e) => players.push(e.player as string));
  follower = new LogFollower({
    dir: volume,
    file: relative(dir, path),
    resumeFrom,
    pollMs: 200,
    onLine: (line) => parser.push(line),
    onFile: (_reason, line) => parser.resetLines(line),
    onCaughtUp: (p) => {
      position = p;
    },
  });
  follower.start();
  return { players, position: () => position };
}

describe("LogFollower", () => {
  it("reads a file that appears later, waits for a partial line's newline, and follows appends", async () => {
    const path = join(dir, "logs", "latest.log");
    const seen = follow(path);
    follower?.drain(); // it looked (start looks too), and there was no file yet
    (await import("node:fs")).mkdirSync(join(dir, "logs"));
    writeFileSync(path, joinLine(0));
    await until(() => seen.players.length === 1, WAIT, "the first join");
    appendFileSync(path, "[12:00:00] [Server thread/INFO]: P1 joined");
    follower?.drain(); // it has read the partial line now
    expect(seen.players).toEqual(["P0"]);
    appendFileSync(path, " the game\n");
    await until(() => seen.players.length === 2, WAIT, "the completed line");
    expect(seen.players).toEqual(["P0", "P1"]);
  });

  it("reads a deleted-and-recreated file from its beginning, after the end of the old one", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0));
    const seen = follow(path);
    await until(() => seen.players.length === 1, WAIT, "P0");
    appendFileSync(path, joinLine(1));
    unlinkSync(path);
    writeFileSync(path, joinLine(2));
    await until(() => seen.players.length === 3, WAIT, "P1 and P2");
    expect(seen.players).toEqual(["P0", "P1", "P2"]);
  });

  it("reads a file truncated and then renamed away, before it looked again, from its beginning", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0) + joinLine(1) + joinLine(2));
    const seen = follow(path);
    await until(() => seen.players.length === 3, WAIT, "three joins");
    // All at once, synchronously, so no watch event or poll can run in between: truncated, rewritten shorter,
    // renamed away, a new file started.
    truncateSync(path, 0);
    appendFileSync(path, joinLine(3));
    renameSync(path, join(dir, "latest.log.1"));
    writeFileSync(path, joinLine(4));
    follower?.drain();
    expect(seen.players).toEqual(["P0", "P1", "P2", "P3", "P4"]);
  });

  it("resumes where it stopped in the same file, and from the beginning of a file rotated meanwhile", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0) + joinLine(1));
    const first = follow(path);
    await until(() => first.players.length === 2, WAIT, "two joins");
    follower?.stop();
    const position = first.position() as FollowPosition;
    expect(position.line).toBe(2);
    appendFileSync(path, joinLine(2));
    const second = follow(path, position);
    await until(() => second.players.length === 1, WAIT, "the new join");
    follower?.drain(); // one more look: nothing older comes again
    expect(second.players).toEqual(["P2"]);
    follower?.stop();
    const later = second.position() as FollowPosition;
    renameSync(path, join(dir, "2026-11-21-1.log"));
    writeFileSync(path, joinLine(3));
    const third = follow(path, later);
    await until(() => third.players.length === 1, WAIT, "the rotated file's join");
    expect(third.players).toEqual(["P3"]);
  });

  it("loses and repeats nothing while a writer appends 5,000 lines/s, rotating 200 times and truncating 200 times", async () => {
    const path = join(dir, "latest.log");
    const total = 40_000;
    const seen = follow(path);
    // The writer is another process, as the game is. It rotates the way log4j does (rename, then a new file) without
    // waiting for anyone; it truncates only once everything written so far has been read, because truncating
    // unread lines destroys them whoever reads the file.
    const writer = `
      const fs = require("node:fs");
      const path = ${JSON.stringify(path)};
      const line = (n) => "[12:00:00] [Server thread/INFO]: P" + n + " joined the game\\n";
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const ask = (written) => new Promise((resolve) => { process.once("message", resolve); process.send({ written }); });
      (async () => {
        let n = 0, ops = 0;
        const started = Date.now();
        while (n < ${total}) {
          let batch = "";
          for (let i = 0; i < 50; i++) batch += line(n++);
          fs.appendFileSync(path, batch);
          if (n % 100 === 0) {
            ops++;
            if (ops % 2) {
              // The first rotation waits until the follower has the file open: a file rotated away before anything
              // looked at it cannot be found by anyone (under load the follower's first look came after it).
              if (ops === 1) await ask(n);
              fs.renameSync(path, path + "." + ops);
            }
            else { await ask(n); fs.truncateSync(path, 0); }
          }
          const ahead = n / 5 - (Date.now() - started); // 5 lines per ms
          if (ahead > 0) await sleep(ahead);
        }
        process.send({ done: n, ops, seconds: (Date.now() - started) / 1000 });
      })();`;
    const child = spawn(process.execPath, ["-e", writer], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    let finished: { done: number; ops: number; seconds: number } | undefined;
    let stalled = "";
    child.on("message", async (message: { written?: number; done?: number; ops: number; seconds: number }) => {
      if (message.done !== undefined) {
        finished = message as { done: number; ops: number; seconds: number };
        return;
      }
      try {
        await until(() => seen.players.length >= (message.written as number), 60_000, `line ${message.written}`);
      } catch (error) {
        const bad = seen.players.findIndex((p, i) => p !== `P${i}`);
        stalled = `${(error as Error).message}: read ${seen.players.length}, first out of order at ${bad} ${JSON.stringify(seen.players.slice(Math.max(0, bad - 1), bad + 2))}, last ${seen.players.at(-1)}, position ${JSON.stringify(follower?.position)}`;
        return;
      }
      child.send("go");
    });
    await until(() => finished !== undefined || stalled !== "", 240_000, "the writer");
    expect(stalled).toBe("");
    await until(() => seen.players.length >= total, 60_000, "every line");
    follower?.drain(); // one more look: nothing comes twice
    expect(finished).toMatchObject({ done: total, ops: 400 });
    expect(seen.players).toHaveLength(total);
    expect(seen.players.every((p, i) => p === `P${i}`)).toBe(true);
    child.kill();
  }, 300_000);
});

/** Follows `rel` in the volume, keeping every line, every problem and every caught-up position. */
function followLines(rel: string, more: Partial<FollowerOptions> = {}, sample?: () => void) {
  const seen = {
    lines: [] as string[],
    cut: [] as number[],
    problems: [] as JobError[],
    again: 0,
    position: undefined as FollowPosition | undefined,
  };
  follower = new LogFollower({
    dir: volume,
    file: rel,
    pollMs: 50,
    onLine: (line, info) => {
      sample?.();
      seen.lines.push(line);
      if (info.cut) seen.cut.push(seen.lines.length - 1);
    },
    onCaughtUp: (position) => {
      sample?.();
      seen.position = position;
    },
    onProblem: (error) => seen.problems.push(error),
    onFollowedAgain: () => seen.again++,
    ...more,
  });
  follower.start();
  return seen;
}

let witnesses: Array<{ end(): Promise<boolean> }> = [];
afterEach(async () => {
  await Promise.all(witnesses.map((w) => w.end()));
  witnesses = [];
});

/** Bytes held outside the JS heap (Buffers) plus the heap: what a growing line would show in. */
const memory = () => {
  const usage = process.memoryUsage();
  return usage.arrayBuffers + usage.heapUsed;
};

describe("LogFollower in a hostile volume", () => {
  it("never blocks on a FIFO as the file, says so once however often it looks, and follows a regular file written there again", async () => {
    mkdirSync(join(dir, "logs"));
    const path = join(dir, "logs", "latest.log");
    execFileSync("mkfifo", [path]);
    // Nobody writes to it: a follower that opened it blocking would only go on once the witness freed it, 60 s later.
    const witness = fifoWitness(path);
    const seen = followLines("logs/latest.log");
    for (let i = 0; i < 20; i++) follower?.drain();
    // Stopped before the FIFO is replaced by a file (which it could open, and call that freeing a reader).
    expect(await witness.end()).toBe(false);
    expect(seen.problems.map((p) => p.message)).toEqual([`${path} is a FIFO, not a regular file`]);
    expect(seen.problems[0]?.hint).toMatch(/remove it/);
    expect(seen.lines).toEqual([]);

    unlinkSync(path);
    writeFileSync(path, joinLine(0));
    await until(() => seen.lines.length === 1, WAIT, "the regular file's line");
    expect(seen.lines).toEqual([joinLine(0).trimEnd()]);
    expect(seen.again).toBe(1);
    expect(seen.problems).toHaveLength(1);
  }, 120_000);

  it("never reads through a link as the file, nor through a linked logs directory: the canary's lines never come", async () => {
    const outside = mkdtempSync(join(tmpdir(), "mcops-canary-"));
    try {
      const canary = join(outside, "latest.log");
      writeFileSync(canary, joinLine(99), { mode: 0o600 });
      mkdirSync(join(dir, "logs"));
      symlinkSync(canary, join(dir, "logs", "latest.log"));
      const seen = followLines("logs/latest.log");
      await until(() => seen.problems.length === 1, WAIT, "the problem");
      expect(seen.problems[0]?.message).toBe(
        `${join(dir, "logs", "latest.log")} is a symbolic link, not a regular file`,
      );
      expect(seen.problems[0]?.hint).toBe("links inside the server volume are never followed; remove it");
      appendFileSync(canary, joinLine(98));
      for (let i = 0; i < 5; i++) follower?.drain();

      // The whole logs directory a link to the canary's.
      rmSync(join(dir, "logs"), { recursive: true });
      symlinkSync(outside, join(dir, "logs"));
      await until(() => seen.problems.length === 2, WAIT, "the second problem");
      expect(seen.problems[1]?.message).toBe(`${join(dir, "logs")} is a symbolic link, not a directory`);
      appendFileSync(canary, joinLine(97));
      for (let i = 0; i < 5; i++) follower?.drain();
      expect(seen.lines).toEqual([]);
      expect(seen.problems).toHaveLength(2);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("takes a directory where the file should be as no file, and follows the regular file made there later", async () => {
    const path = join(dir, "latest.log");
    mkdirSync(path);
    const seen = followLines("latest.log");
    for (let i = 0; i < 5; i++) follower?.drain();
    expect(seen.problems.map((p) => p.message)).toEqual([`${path} is a directory, not a regular file`]);
    rmdirSync(path);
    writeFileSync(path, joinLine(2));
    await until(() => seen.lines.length === 1, WAIT, "the new file");
    expect(seen.lines).toEqual([joinLine(2).trimEnd()]);
    expect(seen.again).toBe(1);
  });

  it("reads the old file to its end when a directory replaces it under a running follower, and does not crash", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0));
    const seen = followLines("latest.log");
    await until(() => seen.lines.length === 1, WAIT, "P0");
    appendFileSync(path, joinLine(1));
    renameSync(path, join(dir, "old.log"));
    mkdirSync(path);
    await until(() => seen.problems.length === 1, WAIT, "the problem");
    expect(seen.problems[0]?.message).toBe(`${path} is a directory, not a regular file`);
    expect(seen.lines).toEqual([joinLine(0).trimEnd(), joinLine(1).trimEnd()]);
    rmdirSync(path);
    writeFileSync(path, joinLine(2));
    await until(() => seen.lines.length === 3, WAIT, "the new file");
    expect(seen.again).toBe(1);
  });

  it("cuts only lines longer than the cap, across reads and partial writes", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, "0123456789\n0123456789A\nshort\n01234");
    const seen = followLines("latest.log", { maxLineBytes: 10 });
    await until(() => seen.lines.length === 3, WAIT, "three lines");
    appendFileSync(path, "56789");
    follower?.drain();
    expect(seen.lines).toHaveLength(3);
    appendFileSync(path, "\n01234");
    await until(() => seen.lines.length === 4, WAIT, "the completed line");
    appendFileSync(path, "56789XYZ");
    await until(() => seen.lines.length === 5, WAIT, "the cut line");
    appendFileSync(path, "still the same line\nnext\n");
    await until(() => seen.lines.length === 6, WAIT, "the next line");
    expect(seen.lines).toEqual(["0123456789", "0123456789", "short", "0123456789", "0123456789", "next"]);
    expect(seen.cut).toEqual([1, 4]);
    expect(seen.position?.offset).toBe(
      Buffer.byteLength("0123456789\n0123456789A\nshort\n0123456789\n0123456789XYZstill the same line\nnext\n"),
    );
  });

  it("cuts a 50 MB line at 64 KiB, skips the rest in linear time with bounded memory, and delivers the next line", async () => {
    const path = join(dir, "latest.log");
    const mib = Buffer.alloc(1024 * 1024, "x");
    writeFileSync(path, "[12:00:00] [Server thread/INFO]: <Steve> ");
    for (let i = 0; i < 50; i++) appendFileSync(path, mib);
    appendFileSync(path, `\n${joinLine(1)}`);
    const before = memory();
    let peak = before;
    const started = process.cpuUsage();
    const seen = followLines("latest.log", {}, () => {
      peak = Math.max(peak, memory());
    });
    await until(() => seen.lines.length === 2, 60_000, "both lines");
    const cpu = process.cpuUsage(started);
    expect(seen.cut).toEqual([0]);
    expect(Buffer.byteLength(seen.lines[0] as string)).toBe(MAX_LINE_BYTES);
    expect(seen.lines[1]).toBe(joinLine(1).trimEnd());
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
    // Reading 50 MB once is a fraction of a second; the old quadratic joins took half a minute.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(5000);
  });

  it("saves a position inside a cut line and resumes after it, skipping the rest of that line", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, "x".repeat(MAX_LINE_BYTES + 1000));
    const seen = followLines("latest.log");
    await until(() => seen.position !== undefined, WAIT, "the end of the file");
    expect(seen.cut).toEqual([0]);
    expect(seen.position).toMatchObject({ offset: MAX_LINE_BYTES + 1000, line: 1, cut: true });
    follower?.stop();

    appendFileSync(path, `the rest of it\n${joinLine(1)}`);
    const resumed = followLines("latest.log", { resumeFrom: seen.position });
    await until(() => resumed.lines.length === 1, WAIT, "the line after the cut one");
    expect(resumed.lines).toEqual([joinLine(1).trimEnd()]);
    expect(resumed.position).toMatchObject({ line: 2, cut: false });
  });

  it("reads a 2 GiB hole (no newline) in bounded memory as no line, says it once, and resumes after it", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, "");
    truncateSync(path, 2 ** 31); // sparse: 2 GiB of NULs and no newline, on no disk space
    const before = memory();
    let peak = before;
    const skipped: number[] = [];
    const seen = followLines("latest.log", { onSkipped: (bytes) => skipped.push(bytes) }, () => {
      peak = Math.max(peak, memory());
    });
    await until(() => seen.position !== undefined, 60_000, "the end of the file");
    expect(seen.lines).toEqual([]);
    expect(seen.position).toMatchObject({ offset: 2 ** 31, line: 0, cut: false });
    expect(skipped).toEqual([2 ** 31]);
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
    follower?.stop();

    appendFileSync(path, `the rest of it\n${joinLine(1)}`);
    const resumed = followLines("latest.log", { resumeFrom: seen.position });
    await until(() => resumed.lines.length === 2, 60_000, "the lines after the hole");
    expect(resumed.lines).toEqual(["the rest of it", joinLine(1).trimEnd()]);
    expect(resumed.position).toMatchObject({ line: 2, cut: false });
  });

  it("skips a 20 GiB hole made under it: the line cut before it is a line of its own, the join after it is read whole", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, `${joinLine(0)}[12:00:01] [Server thread/INFO]: <Steve> cut here`);
    const skipped: number[] = [];
    const seen = followLines("latest.log", { onSkipped: (bytes) => skipped.push(bytes) });
    await until(() => seen.lines.length === 1 && seen.position !== undefined, WAIT, "the first line");
    const size = 20 * 2 ** 30;
    truncateSync(path, size); // `truncate -s 20G latest.log` while it follows
    appendFileSync(path, joinLine(1));
    // Read through, the 20 GiB of zeros take minutes at a full core; skipped, a few reads.
    await until(() => seen.lines.length === 3, WAIT, "the join after the hole");
    expect(seen.lines).toEqual([
      joinLine(0).trimEnd(),
      "[12:00:01] [Server thread/INFO]: <Steve> cut here",
      joinLine(1).trimEnd(),
    ]);
    expect(seen.cut).toEqual([]);
    await until(() => skipped.length === 1, WAIT, "the hole said");
    const before = Buffer.byteLength(`${joinLine(0)}[12:00:01] [Server thread/INFO]: <Steve> cut here`);
    expect(skipped).toEqual([size - before]);
    await until(() => seen.position?.offset === size + joinLine(1).length, WAIT, "the end");
    expect(seen.position).toMatchObject({ line: 3, cut: false });
  });

  it("a 20 GiB hole made under the game, which writes at its own offset (log4j's RandomAccessFile, no O_APPEND): its lines at the hole's start are read, the hole said once", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0));
    // The game's file as log4j's RollingRandomAccessFile holds it: opened once, seeked to its end, then written at its
    // own position. `truncate -s 20G` does not move that position: what the game writes next lands at the hole's start.
    const game = openSync(path, "r+");
    let at = fstatSync(game).size;
    const write = (text: string) => {
      at += writeSync(game, text, at);
    };
    try {
      const skipped: number[] = [];
      const seen = followLines("latest.log", { onSkipped: (bytes) => skipped.push(bytes) });
      await until(() => seen.lines.length === 1 && seen.position !== undefined, WAIT, "the first line");
      const size = 20 * 2 ** 30;
      truncateSync(path, size);
      await until(() => skipped.length === 1, WAIT, "the hole read to its end");
      expect(seen.position?.offset).toBe(size);
      write(joinLine(1));
      await until(() => seen.lines.length === 2, WAIT, "the join written at the hole's start");
      for (let i = 2; i <= 20; i++) write(joinLine(i));
      await until(() => seen.lines.length === 21, WAIT, "the joins after it");
      expect(seen.lines).toEqual(Array.from({ length: 21 }, (_, i) => joinLine(i).trimEnd()));
      await until(() => seen.position?.line === 21, WAIT, "caught up");
      // The same hole, read again after each line, is not said again.
      expect(skipped).toEqual([size - joinLine(0).length]);
      expect(seen.position).toMatchObject({ offset: size, line: 21, cut: false, hole: at });

      // Stopped and started again (the tailer restarted): it carries on at the hole's start, not past the lines to come.
      const position = seen.position as FollowPosition;
      follower?.stop();
      write(joinLine(21));
      const resumed = followLines("latest.log", { resumeFrom: position });
      await until(() => resumed.lines.length === 1, WAIT, "the join written while it was stopped");
      expect(resumed.lines).toEqual([joinLine(21).trimEnd()]);
    } finally {
      closeSync(game);
    }
  });

  it("jumping over a hole into what was written after it, starts at a whole line (never the end of one)", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0));
    truncateSync(path, 200 * 2 ** 20);
    // 10 MiB of joins after the hole: more than the end it jumps to, so it lands inside them.
    const lines = Array.from({ length: 200_000 }, (_, i) => joinLine(i + 1)).join("");
    appendFileSync(path, lines);
    const skipped: number[] = [];
    const seen = followLines("latest.log", { onSkipped: (bytes) => skipped.push(bytes) });
    await until(() => seen.position !== undefined, WAIT, "the end of the file");
    expect(seen.lines[0]).toBe(joinLine(0).trimEnd());
    const after = seen.lines.slice(1);
    expect(after.length).toBeGreaterThan(1000);
    expect(after.every((l) => /^\[12:00:00\] \[Server thread\/INFO\]: P\d+ joined the game$/.test(l))).toBe(true);
    expect(after.at(-1)).toBe(joinLine(200_000).trimEnd());
    expect(skipped).toHaveLength(1);
  });

  it("takes a few KiB of zeros (what a crash leaves) as the end of the line before them, and reads the next line whole", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, Buffer.concat([Buffer.from("half a line"), Buffer.alloc(5000), Buffer.from(joinLine(1))]));
    appendFileSync(path, Buffer.concat([Buffer.from("a\0b\n"), Buffer.from(joinLine(2))]));
    const skipped: number[] = [];
    const seen = followLines("latest.log", { onSkipped: (bytes) => skipped.push(bytes) });
    await until(() => seen.lines.length === 5, WAIT, "five lines");
    expect(seen.lines).toEqual(["half a line", joinLine(1).trimEnd(), "a", "b", joinLine(2).trimEnd()]);
    expect(skipped).toEqual([5000]);
  });
});

/** A follower that is never started: read only when the test polls it. */
function polled(rel: string, more: Partial<FollowerOptions> = {}) {
  const seen = { lines: [] as string[], files: [] as string[], problems: [] as JobError[] };
  follower = new LogFollower({
    dir: volume,
    file: rel,
    onLine: (line) => seen.lines.push(line),
    onFile: (reason) => seen.files.push(reason),
    onProblem: (error) => seen.problems.push(error),
    ...more,
  });
  return { seen, poll: () => follower?.poll() };
}

/** Lets the event loop run a few turns: what a follower left scheduled would run meanwhile. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("LogFollower read on the caller's clock (positionAtEnd, poll)", () => {
  it("reads only what is written after positionAtEnd, whole lines, when polled", async () => {
    const path = join(dir, "latest.log");
    const before = `${joinLine(0)}[12:00:00] [Server thread/INFO]: Saved the game\n`;
    writeFileSync(path, before);
    const from = positionAtEnd(volume, "latest.log");
    expect(from).toMatchObject({ offset: Buffer.byteLength(before), line: 0 });
    const { seen, poll } = polled("latest.log", { resumeFrom: from });
    poll();
    expect(seen.files).toEqual(["resumed"]);
    expect(seen.lines).toEqual([]);
    appendFileSync(path, joinLine(1).slice(0, 20));
    poll();
    expect(seen.lines).toEqual([]);
    appendFileSync(path, joinLine(1).slice(20) + joinLine(2));
    poll();
    expect(seen.lines).toEqual([joinLine(1).trimEnd(), joinLine(2).trimEnd()]);
    // Never started: nothing reads between polls.
    appendFileSync(path, joinLine(3));
    await turns();
    expect(seen.lines).toHaveLength(2);
  });

  it("reads at most turnBytes a poll, and leaves nothing to run after it", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, "");
    const from = positionAtEnd(volume, "latest.log");
    const { seen, poll } = polled("latest.log", { resumeFrom: from, turnBytes: 64 * 1024 });
    const lines = Array.from({ length: 4000 }, (_, i) => joinLine(i)).join("");
    appendFileSync(path, lines);
    poll();
    const first = seen.lines.length;
    expect(first).toBeGreaterThan(0);
    expect(seen.lines.join("\n").length).toBeLessThanOrEqual(64 * 1024);
    await turns();
    expect(seen.lines).toHaveLength(first);
    let polls = 1;
    while (seen.lines.length < 4000) {
      poll();
      polls++;
    }
    expect(polls).toBeGreaterThanOrEqual(Math.ceil(Buffer.byteLength(lines) / (64 * 1024)));
    expect(seen.lines.at(-1)).toBe(joinLine(3999).trimEnd());
  });

  it("reads a log rotated or truncated after positionAtEnd from its beginning", () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0).repeat(10));
    const from = positionAtEnd(volume, "latest.log");
    renameSync(path, join(dir, "old.log"));
    writeFileSync(path, joinLine(1));
    const rotated = polled("latest.log", { resumeFrom: from });
    rotated.poll();
    expect(rotated.seen.files).toEqual(["rotated"]);
    expect(rotated.seen.lines).toEqual([joinLine(1).trimEnd()]);
    follower?.stop();

    const again = positionAtEnd(volume, "latest.log");
    truncateSync(path, 0);
    appendFileSync(path, joinLine(2));
    const truncated = polled("latest.log", { resumeFrom: again });
    truncated.poll();
    expect(truncated.seen.lines).toEqual([joinLine(2).trimEnd()]);
  });

  it("positionAtEnd: undefined without a file, a FIFO or a link refused without opening it", async () => {
    expect(positionAtEnd(volume, "logs/latest.log")).toBeUndefined();
    const path = join(dir, "latest.log");
    execFileSync("mkfifo", [path]);
    const witness = fifoWitness(path);
    expect(() => positionAtEnd(volume, "latest.log")).toThrow(`${path} is a FIFO, not a regular file`);
    const { seen, poll } = polled("latest.log");
    poll();
    expect(await witness.end()).toBe(false);
    expect(seen.problems.map((p) => p.message)).toEqual([`${path} is a FIFO, not a regular file`]);
    unlinkSync(path);
    const outside = mkdtempSync(join(tmpdir(), "mcops-canary-"));
    try {
      writeFileSync(join(outside, "latest.log"), joinLine(99));
      symlinkSync(join(outside, "latest.log"), path);
      expect(() => positionAtEnd(volume, "latest.log")).toThrow(`${path} is a symbolic link, not a regular file`);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
