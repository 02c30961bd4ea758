import { parseLogLine } from "@mcops/core/log-lines";
import { describe, expect, it } from "vitest";
import { summariseBackups } from "../src/backup-log.ts";

const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .flatMap((l) => parseLogLine(l.trim()) ?? []);

describe("the last backup, from mc-backup.log", () => {
  it("is the newest finished one, with the time, duration and sizes the backup tool logged", () => {
    const log = lines(`
      2026-11-20T06:00:00Z INFO === Backup started ===
      2026-11-20T06:00:40Z INFO === Backup done === took 40 s, added 1.00 MiB, repository 800 MiB, snapshot aaaa1111
      2026-11-21T06:00:00Z INFO === Backup started ===
      2026-11-21T06:00:01Z INFO backing up /srv/w/world to rclone:gdrive:mc
      2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d; autosave off for 3.1 s
      2026-11-21T06:00:43Z WARN something after it
    `);
    expect(summariseBackups(log, false)).toEqual({
      current: undefined,
      last: {
        result: "done",
        startedAt: Date.parse("2026-11-21T06:00:00Z"),
        endedAt: Date.parse("2026-11-21T06:00:42Z"),
        took: "42 s",
        added: "12.3 MiB",
        repository: "1.2 GiB",
        snapshot: "1a2b3c4d",
        reason: undefined,
      },
    });
  });

  it("is failed with the reason of the ERROR line and the time it took", () => {
    const { last } = summariseBackups(
      lines(`
        2026-11-21T06:00:00Z INFO === Backup started ===
        2026-11-21T06:01:05Z ERROR === Backup failed === restic: wrong password or no key found
      `),
      false,
    );
    expect(last).toMatchObject({
      result: "failed",
      reason: "restic: wrong password or no key found",
      took: "1 min 5 s",
    });
  });

  it("is running while a live backup holds the lock, and the one before stays the last", () => {
    const log = lines(`
      2026-11-20T06:00:00Z INFO === Backup started ===
      2026-11-20T06:00:40Z INFO === Backup done === took 40 s, added 1.00 MiB, snapshot aaaa1111
      2026-11-21T06:00:00Z INFO === Backup started ===
    `);
    const running = summariseBackups(log, true);
    expect(running.current).toMatchObject({ result: "running", startedAt: Date.parse("2026-11-21T06:00:00Z") });
    expect(running.last).toMatchObject({ result: "done", snapshot: "aaaa1111" });
    expect(summariseBackups(log, false)).toMatchObject({ current: undefined, last: { result: "unfinished" } });
  });

  it("is none when the log has no backup", () => {
    expect(summariseBackups(lines("2026-11-21T06:00:00Z INFO hello"), false)).toEqual({
      current: undefined,
      last: undefined,
    });
  });

  it("counts a failure logged before any start line", () => {
    const { last } = summariseBackups(
      lines("2026-11-21T06:00:00Z ERROR === Backup failed === cannot stop restic"),
      false,
    );
    expect(last).toMatchObject({ result: "failed", startedAt: undefined, reason: "cannot stop restic" });
  });
});
