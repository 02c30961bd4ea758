import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realLogNames, realLogPath } from "@mcops/game-log/fixtures";
import { parseGameLog } from "@mcops/game-log/game-log";
import { fifoWitness } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { readLines, runScan, scanLine } from "../src/scan.ts";

const dir = mkdtempSync(join(tmpdir(), "mcops-scan-"));

function scan(files: string[], chunkBytes?: number): string[] {
  let out = "";
  expect(runScan(files, { write: (text: string) => (out += text) } as never, chunkBytes)).toBe(0);
  return out.split("\n").filter(Boolean);
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const expected = (text: string) => parseGameLog(text).map(scanLine);

describe("scanLine", () => {
  it("escapes DEL, C1 codes and line separators from players' text, and stays the same JSON", () => {
    const message = "<Steve> hi\u009b31m\u007f\u2028x";
    const line = scanLine({ type: "chat", player: "Steve", message, time: "12:00:00", line: 1 } as never);
    expect(line).toBe(
      '{"type":"chat","player":"Steve","message":"<Steve> hi\\u009b31m\\u007f\\u2028x","time":"12:00:00","line":1}',
    );
    expect(JSON.parse(line).message).toBe(message);
  });
});

describe("scanLine, bidirectional and zero-width controls", () => {
  it("writes them as \\uNNNN, and stays the same JSON", () => {
    const message = "\u202eSteve\u2066 was slain by \u200bZombie\ufeff\u061c\u2069";
    const line = scanLine({ type: "death", player: "Steve", message, time: "12:00:00", line: 1 });
    expect(line).toBe(
      '{"type":"death","player":"Steve","message":"\\u202eSteve\\u2066 was slain by \\u200bZombie\\ufeff\\u061c\\u2069","time":"12:00:00","line":1}',
    );
    expect(JSON.parse(line).message).toBe(message);
  });
});

describe("scanLine, tag characters and other invisible format characters", () => {
  it("writes them as \\uNNNN (a tag character as its two UTF-16 units), and stays the same JSON", () => {
    const message = "Steve\u{e0001}\u{e0041}\u{e007f} was slain by \u206eZombie\ufff9x\ufffb\u00ad";
    const line = scanLine({ type: "death", player: "Steve", message, time: "12:00:00", line: 1 });
    expect(line).toBe(
      '{"type":"death","player":"Steve","message":"Steve\\udb40\\udc01\\udb40\\udc41\\udb40\\udc7f was slain by \\u206eZombie\\ufff9x\\ufffb\\u00ad","time":"12:00:00","line":1}',
    );
    expect(JSON.parse(line).message).toBe(message);
  });
});

describe("log-tailer scan, reading in chunks", () => {
  // Names and deaths in other scripts, two- to four-byte characters, CRLF, an empty line, a stack trace, a line
  // longer than any small chunk, and no newline at the end.
  const text = [
    '[10:00:00] [Server thread/INFO]: Done (1.5s)! For help, type "help"',
    "[10:00:01] [Server thread/INFO]: Steve joined the game\r",
    "[10:00:02] [Server thread/INFO]: <Steve> héllo wörld ✓ 日本語 🎉",
    "",
    "[10:00:03] [Server thread/INFO]: Steve was slain by Zombie named «Ünïcødé» 🧟",
    `[10:00:04] [Server thread/INFO]: Steve was shot by ${"Skeleton".repeat(40)}`,
    "[10:00:05] [Server thread/ERROR]: Encountered an unexpected exception",
    "java.lang.IllegalStateException: ✗ broken",
    "\tat net.minecraft.server.Main.run(Main.java:1)",
    "[10:00:06] [Server thread/INFO]: Alex joined the game",
    "[10:00:07] [Server thread/INFO]: Alex left the game",
  ].join("\n");

  it.each([1, 2, 3, 5, 17, 64, 1000, 1 << 20])(
    "finds the same events as a whole-text parse with %i-byte reads",
    (size) => {
      const path = file(`mixed-${size}.log`, text);
      const want = expected(text);
      expect(want.length).toBeGreaterThanOrEqual(5);
      expect(scan([path], size)).toEqual(want);
    },
  );

  it("reads a line that ends exactly at a read's end, and a file that ends with a newline", () => {
    const body = "[10:00:01] [Server thread/INFO]: Steve joined the game\n";
    const path = file("exact.log", body + body.replace("joined", "left"));
    expect(scan([path], body.length)).toEqual(expected(body + body.replace("joined", "left")));
  });

  it("turns bytes that are not UTF-8 into U+FFFD, as a whole-file decode does", () => {
    const bytes = Buffer.concat([
      Buffer.from("[10:00:01] [Server thread/INFO]: Steve was slain by Zo"),
      Buffer.from([0xff, 0xc3]),
      Buffer.from("mbie\n[10:00:02] [Server thread/INFO]: Steve left the game\n"),
    ]);
    const path = file("invalid.log", bytes);
    expect(scan([path], 4)).toEqual(expected(bytes.toString("utf8")));
  });

  it("gives every real fixture's events alike at any read size", () => {
    for (const log of realLogNames()) {
      const path = realLogPath(log);
      const whole = expected(readFileSync(path, "utf8"));
      expect(scan([path], 4093), log).toEqual(whole);
    }
  });

  it("reads files in order through one parser, counting lines per file", () => {
    const a = file("a.log", "[10:00:01] [Server thread/INFO]: Steve joined the game\n");
    const b = file("b.log", "[00:00:01] [Server thread/INFO]: Steve fell from a high place\n");
    expect(scan([a, b], 8).map((l) => JSON.parse(l))).toEqual([
      { type: "join", player: "Steve", message: "Steve joined the game", time: "10:00:01", line: 1 },
      { type: "death", player: "Steve", message: "Steve fell from a high place", time: "00:00:01", line: 1 },
    ]);
  });

  it("opens every file before reading any: a wrong path or a directory is said at once, nothing printed", () => {
    const good = file("good.log", "[10:00:01] [Server thread/INFO]: Steve joined the game\n");
    let out = "";
    const writer = { write: (text: string) => (out += text) } as never;
    expect(() => runScan([good, join(dir, "missing.log")], writer)).toThrow(/^cannot read .*missing\.log \(ENOENT\)$/);
    expect(() => runScan([good, dir], writer)).toThrow(/ is a directory$/);
    expect(out).toBe("");
  });
});

describe("log-tailer scan, on files that are not logs", () => {
  let witness: ReturnType<typeof fifoWitness> | undefined;
  afterEach(async () => {
    await witness?.end();
    witness = undefined;
  });

  it("refuses a FIFO without waiting for a writer, and a device, before reading anything", async () => {
    const fifo = join(dir, "fifo.log");
    execFileSync("mkfifo", [fifo]);
    // Nobody writes to it: a scan that opened it blocking would only go on once the witness freed it, 60 s later.
    witness = fifoWitness(fifo);
    const good = file("before-fifo.log", "[10:00:01] [Server thread/INFO]: Steve joined the game\n");
    let out = "";
    const writer = { write: (text: string) => (out += text) } as never;
    expect(() => runScan([good, fifo], writer)).toThrow(`${fifo} is a FIFO, not a regular file`);
    expect(await witness.end()).toBe(false);
    // /dev/zero never ends: a scan that read it would not come back at all.
    expect(() => runScan(["/dev/zero"], writer)).toThrow("/dev/zero is a device, not a regular file");
    expect(out).toBe("");
    unlinkSync(fifo);
  }, 120_000);

  it.each([1, 3, 7, 11, 64])("cuts lines longer than the cap alike with %i-byte reads", (size) => {
    const path = file(`cut-${size}.log`, "0123456789\n0123456789A\nshort\n0123456789ABCDEFGHIJKLMNOP\nlast");
    const fd = openSync(path, "r");
    const lines: string[] = [];
    try {
      readLines(fd, size, (line) => lines.push(line), 10);
    } finally {
      closeSync(fd);
    }
    expect(lines).toEqual(["0123456789", "0123456789", "short", "0123456789", "last"]);
  });

  it("reads a 2 GiB file without a newline in bounded memory, then the line after it", () => {
    const path = file("endless.log", "");
    truncateSync(path, 2 ** 31); // sparse: 2 GiB of NULs, no disk space
    appendFileSync(path, "\n[10:00:01] [Server thread/INFO]: Steve joined the game\n");
    const memory = () => process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
    const before = memory();
    let peak = before;
    const lengths: number[] = [];
    const fd = openSync(path, "r");
    try {
      readLines(fd, 1024 * 1024, (line) => {
        peak = Math.max(peak, memory());
        lengths.push(Buffer.byteLength(line));
      });
    } finally {
      closeSync(fd);
      unlinkSync(path);
    }
    expect(lengths).toEqual([64 * 1024, 54]);
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
  });
});
