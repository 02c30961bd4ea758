import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeHidden } from "@mcops/core/log";
import { realLogNames, realLogPath } from "@mcops/game-log/fixtures";
import { parseGameLog } from "@mcops/game-log/game-log";
import { MAX_LINE_BYTES } from "@mcops/game-log/log-follower";
import { describe, expect, it } from "vitest";
import { runScan, scanLine } from "../src/scan.ts";

// The fast path (lines tested on bytes, only those that may matter pushed) against the parser on every line: the same
// stdout for every input, real or made to look almost like a line the parser acts on.

const dir = mkdtempSync(join(tmpdir(), "mcops-scan-fast-"));

function output(files: string[], chunkBytes: number | undefined, everyLine: boolean): string {
  let out = "";
  expect(runScan(files, { write: (text: string) => (out += text) } as never, chunkBytes, everyLine)).toBe(0);
  return out;
}

/** Both paths' output, asserted equal; the output, to check that it holds events at all. */
function same(files: string[], chunkBytes?: number): string {
  const fast = output(files, chunkBytes, false);
  expect(fast).toBe(output(files, chunkBytes, true));
  return fast;
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A small deterministic generator (mulberry32): the same adversarial input every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(next: () => number, list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;

const PREFIXES = [
  "[12:00:00] [Server thread/INFO]: ",
  "[12:00:00] [Server thread/INFO]:",
  "[12:00:00.123] [Server thread/INFO]: ",
  "[11May2025 13:57:36.740] [Server thread/INFO] [minecraft/MinecraftServer]: ",
  "[11May2025 13:57:36.740] [Server thread/INFO] [minecraft/MinecraftServer] ",
  "[12:00:00 INFO]: ",
  "[12:00:00 WARN]: ",
  "[12:00:00 ERROR]: ",
  "[12:00:00] [Server thread/ERROR]: ",
  "[12:00:00] [Server thread/FATAL]: ",
  "[12:00:00] [Server thread/WARN]: ",
  "[12:00:00] [Worker-Main-1/INFO]: ",
  "[12:00:00] [Worker-Main-1/ERROR]: ",
  "[12:00:00] [Region Scheduler Thread #1/INFO]: ",
  "[12:00:00] [Server thread/INFO]x/INFO]: ",
  "[12:00:00] [Server thread/INFO] [a/b]x/ERROR]: ",
  "[12:00:00] [Server thread/INFO]: x/ERROR] [\r]: ",
  "[12:00:00] [Server thread/INFO] [\u2028]: ",
  "[12:00:00] [Server\x1b[0m thread/INFO]: ",
  "[12:00:00] [Server thread/IN§aFO]: ",
  "[12:00:00] [Server thread/INFO]: §e",
  "\x1b[32m[12:00:00] [Server thread/INFO]: ",
  "[12:00:00] [Server thread/INFO]: \x1b[1m",
  "[12:00:00]  [Server thread/INFO]: ",
  "[12:00] [Server thread/INFO]: ",
  "[12:00:00] [/INFO]: ",
  "[12:00:00] [Server thread/Server thread/INFO]: ",
  " [12:00:00] [Server thread/INFO]: ",
  "\tat net.minecraft.server.Main.run(Main.java:1) ",
  "",
];

const MESSAGES = [
  "Steve joined the game",
  "Steve left the game",
  "Alex joined the game",
  "Alex left the game",
  ".Bedrock joined the game",
  "*Star left the game",
  "Steve (formerly known as Old) joined the game",
  "ABCDEFGHIJKLMNOPQ joined the game",
  "Steve joined the game ",
  "Steve joined the gam",
  "Steve[/203.0.113.7:51234] logged in with entity id 42 at ([world]1.0, 2.0, 3.0)",
  "Bob[/203.0.113.7:51234] logged in with entity id 43 at ([world]1.0, 2.0, 3.0)",
  "Steve lost connection: Disconnected",
  "Bob lost connection: Timed out",
  "Steve was slain by Zombie",
  "Steve drowned",
  "Steve died",
  "Steve didn't want to live in the same world as Alex",
  "Steve fell from a high place",
  "Steve was blown up by Creeper using [Bow]",
  "Steve experienced kinetic energy",
  "Steve was squished too much",
  "Steve has made the advancement [Stone Age]",
  "Steve issued server command: /help",
  "Steve turned into a frog",
  "Steve  was slain by Zombie",
  "Automatic saving is now disabled",
  "Saving players",
  'Done (1.5s)! For help, type "help"',
  'Done (2,5s)! For help, type "help"',
  "Stopping server",
  "Stopping the server",
  "Starting minecraft server version 1.21",
  "Starting Minecraft server version 1.20.1",
  "Encountered an unexpected exception",
  "This crash report has been saved to: ./crash-reports/crash.txt",
  "Considering it to be crashed, server will forcibly shutdown.",
  "A single server tick took 60.00 seconds (should be max 0.05)",
  "The server has stopped responding! This is (probably) not a Paper bug.",
  "Failed to start the minecraft server",
  "java.lang.IllegalStateException: broken",
  "Caused by: java.lang.NullPointerException",
  "<Steve> Alex joined the game",
  '<Steve> Done (1.5s)! For help, type "help"',
  "[Server] Steve was slain by Zombie",
  "* Steve drowned",
  "*Steve drowned",
  "Steve\u2028joined the game",
  "Steve joined the game\r",
  "Ste§ave joined the game",
  "Steve joined the g\x1b[0mame",
  "Alex ERROR was slain",
  "",
  " ",
  "Preparing spawn area: 0%",
];

const ODD_BYTES = [
  [0xff],
  [0xc3],
  [0xe2, 0x80],
  [0xe2, 0x80, 0xa8],
  [0xc2, 0xa7],
  [0xc2],
  [0x1b],
  [13],
  [0xf0, 0x9f],
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
];

/** One generated line: a prefix, a message, sometimes odd bytes somewhere in it, sometimes a CR at the end. */
function generatedLine(next: () => number, messages: readonly string[]): Buffer {
  let line = Buffer.from(pick(next, PREFIXES) + pick(next, messages));
  if (next() < 0.3) {
    const at = Math.floor(next() * (line.length + 1));
    line = Buffer.concat([line.subarray(0, at), Buffer.from(pick(next, ODD_BYTES)), line.subarray(at)]);
  }
  if (next() < 0.2) line = Buffer.concat([line, Buffer.from("\r")]);
  return line;
}

/** A real line with one byte changed, inserted or removed: lines that almost match. */
function mutated(next: () => number, line: Buffer): Buffer {
  const at = Math.floor(next() * (line.length + 1));
  const byte = Buffer.from(pick(next, [...ODD_BYTES, [91], [93], [58], [32], [47], [69], [10], [42], [46], [60]]));
  const roll = next();
  if (roll < 0.4) return Buffer.concat([line.subarray(0, at), byte, line.subarray(at)]);
  if (roll < 0.7) return Buffer.concat([line.subarray(0, at), byte, line.subarray(at + 1)]);
  return Buffer.concat([line.subarray(0, at), line.subarray(at + 1)]);
}

/** Bukkit's way: logins and lost connections, never `joined the game`, so that logins are held for their window. */
const BUKKIT = [
  ...MESSAGES.filter((m) => !m.includes("joined")),
  "Steve fainted",
  "Bob fainted",
  ...Array(40).fill("Preparing spawn area: 5%"),
];

function generated(seed: number, count: number, messages: readonly string[] = MESSAGES): Buffer {
  const next = random(seed);
  const lines: Buffer[] = [];
  for (let i = 0; i < count; i++) lines.push(generatedLine(next, messages));
  return Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")]));
}

function realLines(): Buffer[] {
  const text = realLogNames()
    .map((name) => readFileSync(realLogPath(name)))
    .reduce((a, b) => Buffer.concat([a, b]));
  const lines: Buffer[] = [];
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf(10, start);
    lines.push(text.subarray(start, nl < 0 ? text.length : nl));
    start = nl < 0 ? text.length : nl + 1;
  }
  return lines;
}

describe("log-tailer scan's fast path", () => {
  it("prints what the parser on every line prints, for every real log, alone and one after the other", () => {
    const paths = realLogNames().map(realLogPath);
    for (const path of paths) {
      for (const size of [1 << 20, 4093, 61]) expect(same([path], size).length, path).toBeGreaterThan(0);
    }
    expect(same(paths).split("\n").length).toBeGreaterThan(100);
  });

  it("prints the same for generated lines that almost match, odd bytes, CR and LF, chat, crashes and stack traces", () => {
    for (let seed = 1; seed <= 6; seed++) {
      const path = file(`generated-${seed}.log`, generated(seed, 4000));
      const events = same([path]);
      expect(events).toMatch(/"type":"death"/);
      expect(events).toMatch(/"type":"crash"/);
      same([path], 997);
    }
    for (let seed = 7; seed <= 10; seed++) {
      const path = file(`bukkit-${seed}.log`, generated(seed, 4000, BUKKIT));
      expect(same([path])).toMatch(/"message":"(Steve|Bob) fainted"/);
    }
  });

  it("prints the same for real lines with a byte changed, inserted or removed", () => {
    const next = random(35);
    const lines = realLines();
    for (let round = 0; round < 4; round++) {
      const body = lines.map((line) => (next() < 0.5 ? mutated(next, line) : line));
      const path = file(`mutated-${round}.log`, Buffer.concat(body.flatMap((line) => [line, Buffer.from("\n")])));
      same([path]);
    }
  });

  it("prints the same when a Bukkit login's window ends on lines that act on nothing (the player is online then)", () => {
    const at = (message: string) => `[12:00:00] [Server thread/INFO]: ${message}`;
    const noise = (n: number) => Array.from({ length: n }, (_, i) => at(`Preparing spawn area: ${i}%`));
    const lines = [
      at("Bob[/203.0.113.7:51234] logged in with entity id 42 at ([world]1.0, 2.0, 3.0)"),
      ...noise(25),
      // A modded death: only a player online makes it one, and Bob is online from the 21st line after his login.
      at("Bob fainted"),
      at("Bob lost connection: Disconnected"),
      ...noise(25),
      at("Bob fainted"),
    ];
    const path = file("bukkit-window.log", `${lines.join("\n")}\n`);
    const events = same([path]);
    expect(events).toContain('"message":"Bob fainted"');
  });

  it("prints the same whatever the reads' size, with lines split across reads at every offset", () => {
    const path = file("offsets.log", generated(77, 60));
    const want = output([path], undefined, true);
    expect(want).toMatch(/"type"/);
    for (let size = 1; size <= 80; size++) expect(output([path], size, false), `${size}-byte reads`).toBe(want);
  });

  it("prints the same for very long lines, below, at and over the cap, with invalid UTF-8 near the cut", () => {
    const join = "[12:00:00] [Server thread/INFO]: Steve joined the game";
    const long = (length: number, tail: string) =>
      Buffer.concat([
        Buffer.from("[12:00:00] [Server thread/INFO]: Steve "),
        Buffer.alloc(length, "a"),
        Buffer.from(tail),
      ]);
    /** `[...] [Server thread/INFO] [<logger>]: Zed joined the game` and more, the cap falling right after "game". */
    const cutInto = (logger: Buffer) => {
      const head = Buffer.concat([
        Buffer.from("[12:00:00] [Server thread/INFO] ["),
        logger,
        Buffer.from("]: Zed joined the game"),
      ]);
      const decoded = Buffer.byteLength(head.toString("utf8"));
      const pad = Buffer.alloc(MAX_LINE_BYTES - decoded, "y");
      return Buffer.concat([
        head.subarray(0, head.length - 24),
        pad,
        head.subarray(head.length - 24),
        Buffer.from("zz"),
      ]);
    };
    const lines = [
      // The cap's cut makes a join of a line that was none (of a player not online yet): its logger is long, and the
      // cut falls right after "game".
      cutInto(Buffer.alloc(MAX_LINE_BYTES - 90, "x")),
      // The same cut, on a line under the cap whose invalid bytes grow it over the cap when decoded (U+FFFD).
      cutInto(Buffer.concat([Buffer.alloc(21_000, 0xff), Buffer.alloc(MAX_LINE_BYTES - 63_090, "x")])),
      Buffer.from(join.replace("Steve joined", "Zed left")),
      Buffer.from(join),
      long(MAX_LINE_BYTES / 3, " died"),
      long(MAX_LINE_BYTES - 48, " the game"),
      long(MAX_LINE_BYTES - 44, " the game"),
      Buffer.concat([long(MAX_LINE_BYTES - 50, ""), Buffer.from([0xff, 0xff, 0xe2, 0x82]), Buffer.from(" the game")]),
      Buffer.concat([Buffer.from("[12:00:00] [Server thread/INFO]: Steve died"), Buffer.alloc(MAX_LINE_BYTES, 0xff)]),
      Buffer.concat([Buffer.from("[12:00:00] [Server thread/INFO]: Steve died"), Buffer.alloc(30_000, 0xff)]),
      long(3 * MAX_LINE_BYTES, " the game"),
      Buffer.from(join.replace("joined", "left")),
    ];
    const path = file("long.log", Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")])));
    for (const size of [1 << 20, 65_537, 4096, 1000])
      expect(same([path], size)).toMatch(/"player":"Zed".*\n.*"player":"Zed"/);
  });

  it("writes each event's line as JSON.stringify of its fields would", () => {
    const text = [generated(5, 3000), ...realLogNames().map((name) => readFileSync(realLogPath(name)))];
    const events = parseGameLog(Buffer.concat(text).toString("utf8"));
    expect(events.length).toBeGreaterThan(500);
    for (const event of [
      ...events,
      { type: "join", player: '"\\\u2028\ud800', message: "\u0000\u009b", time: "", line: 0 } as const,
    ]) {
      const { type, player, message, time, line } = event;
      const fields = player === undefined ? { type, message, time, line } : { type, player, message, time, line };
      expect(scanLine(event)).toBe(escapeHidden(JSON.stringify(fields)));
    }
  });
});
