import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Clock } from "../src/clock.ts";
import { createLogger, escapeHidden, oneLine, stripHidden, toolLogger } from "../src/log.ts";
import { clearSecrets, registerSecret } from "../src/secrets.ts";

const clock: Clock = { now: () => Date.UTC(2026, 10, 21, 6, 0, 0, 123), sleep: async () => {} };

describe("createLogger", () => {
  it("writes one line per entry: time in UTC, level, message; secrets redacted; newlines folded", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mcops-log-")), "sub", "mc-backup.log");
    registerSecret("hunter2-password");
    const log = createLogger({ file, clock });
    log.info("=== Backup started ===");
    log.error("restic said: wrong password hunter2-password\nsecond line");
    log.debug("not written without debug");
    expect(readFileSync(file, "utf8")).toBe(
      "2026-11-21T06:00:00Z INFO === Backup started ===\n" +
        "2026-11-21T06:00:00Z ERROR restic said: wrong password *** | second line\n",
    );
    clearSecrets();
  });

  it("writes a player's control characters visibly: no escape sequence, no lone CR, no false line", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mcops-log-")), "mc-idle-monitor.log");
    const log = createLogger({ file, clock });
    log.info(
      "1 player online (\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2JAlex\r2026-01-01T00:00:00Z INFO === Backup done ===\u2028x\u009b)",
    );
    expect(readFileSync(file, "utf8")).toBe(
      "2026-11-21T06:00:00Z INFO 1 player online (\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2JAlex\\x0d2026-01-01T00:00:00Z INFO === Backup done ===\\u2028x\\x9b)\n",
    );
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(2);
  });

  it("writes bidirectional and zero-width controls visibly, so nothing turns the line around or hides in it", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mcops-log-")), "mc-backup.log");
    const log = createLogger({ file, clock });
    const hidden =
      "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u061c";
    log.error(`world "\u202edlrow${hidden}" is missing\u2029`);
    expect(readFileSync(file, "utf8")).toBe(
      '2026-11-21T06:00:00Z ERROR world "\\u202edlrow\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069' +
        '\\u200b\\u200c\\u200d\\u200e\\u200f\\u2060\\ufeff\\u061c" is missing\\u2029\n',
    );
  });

  it("writes every other invisible format character visibly too: deprecated format controls, interlinear annotations, tag characters, soft hyphens, a lone surrogate", () => {
    // Tag characters (U+E0001, U+E0020 to U+E007F) are invisible copies of ASCII: `\u{e0041}\u{e0042}` shows nothing
    // and says "AB". Written as JSON writes them, one \uNNNN per UTF-16 unit.
    const hidden =
      "\u206a\u206b\u206c\u206d\u206e\u206f\ufff9\ufffa\ufffb\u00ad\u0600\u{e0001}\u{e0041}\u{e007f}\ud800";
    expect(oneLine(`Steve${hidden} left`)).toBe(
      "Steve\\u206a\\u206b\\u206c\\u206d\\u206e\\u206f\\ufff9\\ufffa\\ufffb\\xad\\u0600" +
        "\\udb40\\udc01\\udb40\\udc41\\udb40\\udc7f\\ud800 left",
    );
    const json = escapeHidden(JSON.stringify({ message: `Steve${hidden}` }));
    expect(json).not.toMatch(/[^\x20-\x7e]/);
    expect(JSON.parse(json).message).toBe(`Steve${hidden}`);
    expect(stripHidden(`Steve${hidden} left`)).toBe("Steve left");
  });

  it("writes the invisible fillers and joiners outside Cf visibly too, and leaves them out of Discord's text (issue 45)", () => {
    // Not format characters, yet nothing shows: a name of Hangul fillers looks empty, a run of variation selectors
    // (an emoji's U+FE0F among them) carries a hidden text, the braille blank is a space.
    const hidden = "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180f\u3164\ufe00\ufe0f\uffa0\u2800\u{e0100}\u{e01ef}";
    expect(oneLine(`Steve${hidden} left`)).toBe(
      "Steve\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180b\\u180f\\u3164\\ufe00\\ufe0f\\uffa0\\u2800" +
        "\\udb40\\udd00\\udb40\\uddef left",
    );
    expect(JSON.parse(escapeHidden(JSON.stringify({ message: hidden }))).message).toBe(hidden);
    expect(stripHidden(`\u3164\u3164 joined the game; Steve${hidden} left`)).toBe(" joined the game; Steve left");
    // Letters and signs that show stay: Hangul syllables, a CJK space, a braille dot.
    expect(stripHidden("한글\u3000\u2801")).toBe("한글\u3000\u2801");
  });

  it("keeps tabs, and letters of every script (Arabic, Hebrew, accents, emoji) as they are", () => {
    expect(oneLine("Ünïcødé\tשלום مرحبا 😀 é")).toBe("Ünïcødé\tשלום مرحبا 😀 é");
  });

  it("echoes lines at or above the echo level", () => {
    const seen: string[] = [];
    const log = createLogger({ echo: { write: (t: string) => seen.push(t) }, echoLevel: "WARN", clock });
    log.info("quiet");
    log.warn("loud");
    log.error("file only", { echo: false });
    expect(seen).toEqual(["2026-11-21T06:00:00Z WARN loud\n"]);
  });

  it("never throws when the log file cannot be written, and says so once", () => {
    const seen: string[] = [];
    const log = createLogger({
      file: "/proc/version/cannot.log",
      echo: { write: (t: string) => seen.push(t) },
      echoLevel: "ERROR",
      clock,
    });
    expect(() => {
      log.info("one");
      log.info("two");
    }).not.toThrow();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/WARN cannot write \/proc\/version\/cannot\.log \(\w+\); going on/);
  });
});

describe("createLogger with the journal as echo", () => {
  it("starts each echoed line with its level's priority and writes the file as always", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mcops-log-")), "mc-log-tailer.log");
    const seen: string[] = [];
    const log = createLogger({
      file,
      echo: { write: (t: string) => seen.push(t) },
      echoLevel: "DEBUG",
      journal: true,
      debug: true,
      clock,
    });
    log.error("idle backup failed");
    log.warn("<6>backup is 27 h old");
    log.info("server empty");
    log.debug("poll");
    expect(seen).toEqual([
      "<3>2026-11-21T06:00:00Z ERROR idle backup failed\n",
      "<4>2026-11-21T06:00:00Z WARN <6>backup is 27 h old\n",
      "<6>2026-11-21T06:00:00Z INFO server empty\n",
      "<7>2026-11-21T06:00:00Z DEBUG poll\n",
    ]);
    expect(readFileSync(file, "utf8")).toBe(
      "2026-11-21T06:00:00Z ERROR idle backup failed\n" +
        "2026-11-21T06:00:00Z WARN <6>backup is 27 h old\n" +
        "2026-11-21T06:00:00Z INFO server empty\n" +
        "2026-11-21T06:00:00Z DEBUG poll\n",
    );
  });

  it("says a log file it cannot write as a warning", () => {
    const seen: string[] = [];
    const log = createLogger({
      file: "/proc/version/cannot.log",
      echo: { write: (t: string) => seen.push(t) },
      journal: true,
      clock,
    });
    log.info("one");
    expect(seen).toEqual([
      "<6>2026-11-21T06:00:00Z INFO one\n",
      expect.stringMatching(
        /^<4>2026-11-21T06:00:00Z WARN cannot write \/proc\/version\/cannot\.log \(\w+\); going on\n$/,
      ),
    ]);
  });
});

describe("toolLogger", () => {
  const logDir = mkdtempSync(join(tmpdir(), "mcops-log-"));

  /** A stderr on a file, as process.stderr is one: it has a descriptor. */
  function stderrOnFile(name: string) {
    const path = join(logDir, name);
    const fd = openSync(path, "w");
    const stat = fstatSync(fd, { bigint: true });
    return {
      stream: { fd, write: (t: string) => writeSync(fd, t) },
      devIno: `${stat.dev}:${stat.ino}`,
      /** Closes it and returns what was written on it. */
      done: () => {
        closeSync(fd);
        return readFileSync(path, "utf8");
      },
    };
  }

  it("prefixes its echo when JOURNAL_STREAM names its stderr", () => {
    const stderr = stderrOnFile("journal");
    const log = toolLogger({
      logDir,
      file: "a.log",
      stderr: stderr.stream,
      env: { JOURNAL_STREAM: stderr.devIno },
      clock,
    });
    log.info("file only: not a terminal");
    log.warn("slow");
    expect(stderr.done()).toBe("<4>2026-11-21T06:00:00Z WARN slow\n");
  });

  it("writes its echo as before when JOURNAL_STREAM names another file, or stderr has no descriptor", () => {
    const stderr = stderrOnFile("cron-mail");
    const journal = stderrOnFile("the-journal");
    const log = toolLogger({
      logDir,
      file: "b.log",
      stderr: stderr.stream,
      env: { JOURNAL_STREAM: journal.devIno },
      clock,
    });
    log.warn("slow");
    expect(stderr.done()).toBe("2026-11-21T06:00:00Z WARN slow\n");
    const seen: string[] = [];
    const standIn = toolLogger({
      logDir,
      file: "c.log",
      stderr: { write: (t: string) => seen.push(t) },
      env: { JOURNAL_STREAM: journal.devIno },
      clock,
    });
    standIn.warn("slow");
    expect(seen).toEqual(["2026-11-21T06:00:00Z WARN slow\n"]);
    journal.done();
  });
});
