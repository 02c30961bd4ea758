import { describe, expect, it } from "vitest";
import {
  backupEventIn,
  backupLine,
  drillLine,
  lastBackupDone,
  lastBackupEnd,
  lastDrill,
  notificationIn,
  notificationLine,
  summariseBackups,
} from "../src/log-events.ts";
import { type LogLine, parseLogLine } from "../src/log-lines.ts";

const at = (time: number, level: LogLine["level"], text: string): LogLine => ({ time, level, text });

describe("a backup's lines, as backup writes them and the dashboard and idle monitor read them", () => {
  it("reads back every fact a done line was written with", () => {
    const facts = { took: "42 s", added: "12.3 MiB", repository: "1.2 GiB", snapshot: "1a2b3c4d" };
    const text = backupLine.done(facts, 3100);
    expect(text).toBe(
      "=== Backup done === took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d; autosave off for 3.1 s",
    );
    expect(backupEventIn({ text })).toEqual({ kind: "done", facts: { ...facts, autosaveOff: "3.1 s" } });
  });

  it("reads the save's stall and the autosave-off window, and older lines without the stall", () => {
    const facts = { took: "42 s", added: "12.3 MiB", repository: "1.2 GiB", snapshot: "1a2b3c4d" };
    const text = backupLine.done(facts, 3100, 1200);
    expect(text).toBe(
      "=== Backup done === took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d; save took 1.2 s, autosave off for 3.1 s",
    );
    expect(backupEventIn({ text })).toEqual({
      kind: "done",
      facts: { ...facts, saveTook: "1.2 s", autosaveOff: "3.1 s" },
    });
    const older = backupEventIn({ text: backupLine.done(facts, 3100) });
    expect(older).toEqual({ kind: "done", facts: { ...facts, autosaveOff: "3.1 s" } });
    if (older?.kind === "done") expect(older.facts.saveTook).toBeUndefined();
  });

  it("reads a done line without the repository size or the autosave note", () => {
    const text = backupLine.done({ took: "1 s", added: "0 B", snapshot: "ffff0000" });
    expect(text).toBe("=== Backup done === took 1 s, added 0 B, snapshot ffff0000");
    expect(backupEventIn({ text })).toEqual({
      kind: "done",
      facts: { took: "1 s", added: "0 B", repository: undefined, snapshot: "ffff0000" },
    });
  });

  it("reads the start and a failure with its reason, and nothing from other lines", () => {
    expect(backupEventIn({ text: backupLine.started() })).toEqual({ kind: "started" });
    expect(backupEventIn({ text: backupLine.failed("restic: repository is locked") })).toEqual({
      kind: "failed",
      reason: "restic: repository is locked",
    });
    expect(backupEventIn({ text: "retention applied: keep last 3, daily 7, weekly 4, pruned" })).toBeUndefined();
    expect(backupEventIn({ text: "=== Restore done === snapshot 1a2b3c4d in 9 s" })).toBeUndefined();
  });

  it("finds the newest successful backup, and summarises a run that is still going", () => {
    const lines = [
      at(1000, "INFO", backupLine.started()),
      at(2000, "INFO", backupLine.done({ took: "1 s", added: "1 B", snapshot: "aaaa0000" })),
      at(3000, "INFO", backupLine.started()),
      at(4000, "ERROR", backupLine.failed("no space left on device")),
      at(5000, "INFO", backupLine.started()),
    ];
    expect(lastBackupDone(lines)).toBe(2000);
    expect(lastBackupDone(lines.slice(0, 1))).toBeUndefined();
    const summary = summariseBackups(lines, true);
    expect(summary.current).toMatchObject({ result: "running", startedAt: 5000 });
    expect(summary.last).toMatchObject({ result: "failed", reason: "no space left on device", took: "1.0 s" });
    expect(summariseBackups(lines, false).last).toMatchObject({ result: "unfinished", startedAt: 5000 });
  });
});

describe("a notification's outcome, as the notifier writes it and the dashboard reads it", () => {
  it("reads back each outcome", () => {
    expect(notificationIn({ level: "INFO", text: notificationLine.sent('Server "up"') })).toMatchObject({
      title: 'Server "up"',
      outcome: "sent",
    });
    expect(notificationIn({ level: "INFO", text: notificationLine.off("Steve joined", "join") })).toMatchObject({
      title: "Steve joined",
      outcome: "off",
      category: "join",
    });
    expect(
      notificationIn({
        level: "ERROR",
        text: notificationLine.failed("Backup failed", "Discord said 404", "check it"),
      }),
    ).toMatchObject({ title: "Backup failed", outcome: "failed", failure: "Discord said 404 — check it" });
  });

  it("takes no other line for an outcome: a DEBUG repeat, an unknown category, another tool's text", () => {
    expect(notificationIn({ level: "DEBUG", text: notificationLine.gone("x") })).toBeUndefined();
    expect(
      notificationIn({ level: "INFO", text: 'notification "x" not sent: the nope category is off' }),
    ).toBeUndefined();
    expect(notificationIn({ level: "INFO", text: "Steve joined the game" })).toBeUndefined();
  });
});

const logLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .flatMap((l) => parseLogLine(l.trim()) ?? []);

describe("the last backup, from mc-backup.log (the dashboard's page; moved from its backup-log tests)", () => {
  it("is the newest finished one, with the time, duration and sizes the backup tool logged", () => {
    const log = logLines(`
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
        autosaveOff: "3.1 s",
        reason: undefined,
      },
    });
  });

  it("is failed with the reason of the ERROR line and the time it took", () => {
    const { last } = summariseBackups(
      logLines(`
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
    const log = logLines(`
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
    expect(summariseBackups(logLines("2026-11-21T06:00:00Z INFO hello"), false)).toEqual({
      current: undefined,
      last: undefined,
    });
  });

  it("counts a failure logged before any start line", () => {
    const { last } = summariseBackups(
      logLines("2026-11-21T06:00:00Z ERROR === Backup failed === cannot stop restic"),
      false,
    );
    expect(last).toMatchObject({ result: "failed", startedAt: undefined, reason: "cannot stop restic" });
  });
});

describe("a drill's lines, as backup drill writes them and backup status reads them", () => {
  it("reads back the newest drill's facts, or its failure with the file it names", () => {
    const facts = { snapshot: "1a2b3c4d", files: 412, chunks: 9321, took: "1 min 12 s" };
    const sampled = { ...facts, sampled: "5000 of 9321 chunks" };
    const lines = [
      at(1000, "INFO", drillLine.started("1a2b3c4d")),
      at(2000, "INFO", drillLine.done(facts)),
      at(3000, "ERROR", drillLine.failed("ffff0000", "world/region/r.0.0.mca: chunk 3,4 does not decompress")),
    ];
    expect(lastDrill(lines)).toEqual({
      ok: false,
      time: 3000,
      snapshot: "ffff0000",
      reason: "world/region/r.0.0.mca: chunk 3,4 does not decompress",
    });
    expect(lastDrill(lines.slice(0, 2))).toEqual({ ok: true, time: 2000, facts: { ...facts, sampled: undefined } });
    expect(lastDrill([at(5, "INFO", drillLine.done(sampled))])).toEqual({ ok: true, time: 5, facts: sampled });
    expect(lastDrill([at(5, "ERROR", drillLine.failed(undefined, "no snapshot to drill"))])).toMatchObject({
      ok: false,
      snapshot: undefined,
      reason: "no snapshot to drill",
    });
    expect(lastDrill(lines.slice(0, 1))).toBeUndefined();
  });

  it("tells the newest backup's end: done, or failed with its reason", () => {
    const lines = [
      at(1000, "INFO", backupLine.done({ took: "1 s", added: "1 B", snapshot: "aaaa0000" })),
      at(2000, "ERROR", backupLine.failed("restic: repository is locked")),
    ];
    expect(lastBackupEnd(lines)).toEqual({ time: 2000, failed: "restic: repository is locked" });
    expect(lastBackupEnd(lines.slice(0, 1))).toEqual({ time: 1000, failed: undefined });
    expect(lastBackupEnd([])).toBeUndefined();
  });
});
