import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GameLogParser } from "./game-log.ts";
import { type FollowPosition, LogFollower } from "./log-follower.ts";

let dir: string;
let follower: LogFollower | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcops-follow-"));
});

afterEach(() => {
  follower?.stop();
  follower = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const joinLine = (n: number) => `[12:00:00] [Server thread/INFO]: P${n} joined the game\n`;

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
    path,
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
    await new Promise((r) => setTimeout(r, 50));
    (await import("node:fs")).mkdirSync(join(dir, "logs"));
    writeFileSync(path, joinLine(0));
    await until(() => seen.players.length === 1, 3000, "the first join");
    appendFileSync(path, "[12:00:00] [Server thread/INFO]: P1 joined");
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.players).toEqual(["P0"]);
    appendFileSync(path, " the game\n");
    await until(() => seen.players.length === 2, 3000, "the completed line");
    expect(seen.players).toEqual(["P0", "P1"]);
  });

  it("reads a deleted-and-recreated file from its beginning, after the end of the old one", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0));
    const seen = follow(path);
    await until(() => seen.players.length === 1, 3000, "P0");
    appendFileSync(path, joinLine(1));
    unlinkSync(path);
    writeFileSync(path, joinLine(2));
    await until(() => seen.players.length === 3, 3000, "P1 and P2");
    expect(seen.players).toEqual(["P0", "P1", "P2"]);
  });

  it("reads a file truncated and then renamed away, before it looked again, from its beginning", async () => {
    const path = join(dir, "latest.log");
    writeFileSync(path, joinLine(0) + joinLine(1) + joinLine(2));
    const seen = follow(path);
    await until(() => seen.players.length === 3, 3000, "three joins");
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
    await until(() => first.players.length === 2, 3000, "two joins");
    follower?.stop();
    const position = first.position() as FollowPosition;
    expect(position.line).toBe(2);
    appendFileSync(path, joinLine(2));
    const second = follow(path, position);
    await until(() => second.players.length === 1, 3000, "the new join");
    await new Promise((r) => setTimeout(r, 50));
    expect(second.players).toEqual(["P2"]);
    follower?.stop();
    const later = second.position() as FollowPosition;
    renameSync(path, join(dir, "2026-11-21-1.log"));
    writeFileSync(path, joinLine(3));
    const third = follow(path, later);
    await until(() => third.players.length === 1, 3000, "the rotated file's join");
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
            if (ops % 2) fs.renameSync(path, path + "." + ops);
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
        await until(() => seen.players.length >= (message.written as number), 5000, `line ${message.written}`);
      } catch (error) {
        const bad = seen.players.findIndex((p, i) => p !== `P${i}`);
        stalled = `${(error as Error).message}: read ${seen.players.length}, first out of order at ${bad} ${JSON.stringify(seen.players.slice(Math.max(0, bad - 1), bad + 2))}, last ${seen.players.at(-1)}, position ${JSON.stringify(follower?.position)}`;
        return;
      }
      child.send("go");
    });
    await until(() => finished !== undefined || stalled !== "", 60_000, "the writer");
    expect(stalled).toBe("");
    await until(() => seen.players.length >= total, 10_000, "every line");
    await new Promise((r) => setTimeout(r, 100));
    expect(finished).toMatchObject({ done: total, ops: 400 });
    expect(seen.players).toHaveLength(total);
    expect(seen.players.every((p, i) => p === `P${i}`)).toBe(true);
    child.kill();
  }, 90_000);
});
