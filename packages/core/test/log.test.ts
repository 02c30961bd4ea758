import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Clock } from "../src/clock.ts";
import { createLogger } from "../src/log.ts";
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
