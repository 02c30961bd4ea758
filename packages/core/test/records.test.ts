import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventJournal, eventsFile, READ_BYTES, ROTATE_BYTES, readRecords, record } from "../src/events.ts";
import { readIdleState } from "../src/health.ts";
import { createLogger } from "../src/log.ts";
import { type LogLine, parseLogLine } from "../src/log-lines.ts";
import {
  Heartbeat,
  lastBackupDone,
  lastBackupEnd,
  lastDrill,
  type RecordOf,
  recordLine,
  summariseBackups,
  type ToolRecord,
} from "../src/records.ts";
import { legacyRecords } from "../src/records-legacy.ts";
import { clearSecrets, registerSecret } from "../src/secrets.ts";

const done = (over: Partial<RecordOf<"backup.done">> = {}): RecordOf<"backup.done"> => ({
  type: "backup.done",
  at: 2000,
  tookMs: 42_000,
  addedBytes: Math.round(12.3 * 1024 ** 2),
  repositoryBytes: Math.round(1.2 * 1024 ** 3),
  snapshot: "1a2b3c4d",
  ...over,
});

describe("a record's log line (docs/system.md's, unchanged)", () => {
  it("puts a backup's figures into the operator's words, with the save's stall and the autosave-off window", () => {
    expect(recordLine(done({ saveMs: 1200, autosaveOffMs: 3100 }))).toEqual({
      level: "INFO",
      text: "=== Backup done === took 42 s, added 12.3 MiB, repository 1.20 GiB, snapshot 1a2b3c4d; save took 1.2 s, autosave off for 3.1 s",
    });
    expect(recordLine(done({ autosaveOffMs: 3100 })).text).toBe(
      "=== Backup done === took 42 s, added 12.3 MiB, repository 1.20 GiB, snapshot 1a2b3c4d; autosave off for 3.1 s",
    );
    expect(
      recordLine(done({ tookMs: 1000, addedBytes: 0, repositoryBytes: undefined, snapshot: "ffff0000" })).text,
    ).toBe("=== Backup done === took 1.0 s, added 0 B, snapshot ffff0000");
    expect(recordLine({ type: "backup.started", at: 1 })).toEqual({ level: "INFO", text: "=== Backup started ===" });
    expect(recordLine({ type: "backup.failed", at: 1, reason: "restic: repository is locked" })).toEqual({
      level: "ERROR",
      text: "=== Backup failed === restic: repository is locked",
    });
  });

  it("writes a drill's and a notification's lines", () => {
    const drill: RecordOf<"drill.done"> = {
      type: "drill.done",
      at: 1,
      snapshot: "1a2b3c4d",
      files: 412,
      chunks: 5000,
      tookMs: 72_000,
      sampled: { checked: 5000, present: 9321 },
    };
    expect(recordLine(drill).text).toBe(
      "=== Drill done === snapshot 1a2b3c4d, files 412, chunks 5000, took 1 min 12 s, sampled 5000 of 9321 chunks",
    );
    expect(recordLine({ type: "drill.failed", at: 1, reason: "no snapshot to drill" })).toEqual({
      level: "ERROR",
      text: "=== Drill failed === no snapshot to drill",
    });
    expect(
      recordLine({ type: "notification", at: 1, title: "Steve joined", outcome: "off", category: "join" }),
    ).toEqual({
      level: "INFO",
      text: 'notification "Steve joined" not sent: the join category is off',
    });
    const failure = {
      kind: "gone" as const,
      status: 404,
      reason: "the webhook does not exist (404 x)",
      hint: "make one",
    };
    expect(recordLine({ type: "notification", at: 1, title: "T", outcome: "failed", failure })).toEqual({
      level: "ERROR",
      text: 'notification "T" not sent: the webhook does not exist (404 x) — make one',
    });
  });
});

describe("what readers make of a tool's records", () => {
  it("finds the newest successful backup, the newest end, and summarises a run that is still going", () => {
    const records: ToolRecord[] = [
      { type: "backup.started", at: 1000 },
      done({ at: 2000, snapshot: "aaaa0000" }),
      { type: "backup.started", at: 3000 },
      { type: "backup.failed", at: 4000, reason: "no space left on device" },
      { type: "backup.started", at: 5000 },
    ];
    expect(lastBackupDone(records)?.at).toBe(2000);
    expect(lastBackupEnd(records)).toEqual({ time: 4000, failed: "no space left on device" });
    expect(lastBackupEnd(records.slice(0, 2))).toEqual({ time: 2000, failed: undefined });
    const summary = summariseBackups(records, true);
    expect(summary.current).toMatchObject({ result: "running", startedAt: 5000 });
    expect(summary.last).toMatchObject({ result: "failed", reason: "no space left on device", tookMs: 1000 });
    expect(summariseBackups(records, false).last).toMatchObject({ result: "unfinished", startedAt: 5000 });
    expect(summariseBackups(records.slice(0, 2), false).last).toMatchObject({
      result: "done",
      tookMs: 42_000,
      addedBytes: done().addedBytes,
      repositoryBytes: done().repositoryBytes,
    });
  });

  it("finds the newest drill's end", () => {
    const records: ToolRecord[] = [
      { type: "drill.started", at: 1, snapshot: "a" },
      { type: "drill.done", at: 2, snapshot: "a", files: 1, chunks: 2, tookMs: 3 },
      { type: "drill.failed", at: 3, snapshot: "b", reason: "r.0.0.mca: truncated" },
    ];
    expect(lastDrill(records)).toMatchObject({ type: "drill.failed", snapshot: "b" });
    expect(lastDrill(records.slice(0, 2))).toMatchObject({ type: "drill.done", chunks: 2 });
    expect(lastDrill(records.slice(0, 1))).toBeUndefined();
  });
});

const logLines = (text: string): LogLine[] =>
  text
    .trim()
    .split("\n")
    .flatMap((l) => parseLogLine(l.trim()) ?? []);

describe("a log written before the records (an upgraded dashboard shows the last backup)", () => {
  it("reads each old line back into its record, the figures as numbers", () => {
    const records = legacyRecords(
      logLines(`
        2026-11-21T06:00:00Z INFO === Backup started ===
        2026-11-21T06:00:01Z INFO backing up /srv/w/world to rclone:gdrive:mc
        2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d; save took 1.2 s, autosave off for 3.1 s
        2026-11-21T06:00:43Z INFO notification "Backup completed" sent
        2026-11-21T07:00:00Z ERROR === Backup failed === restic: wrong password or no key found
        2026-11-21T07:01:10Z INFO === Drill done === snapshot 1a2b3c4d, files 9, chunks 1200, took 1 min 12 s, sampled 1200 of 4000 chunks
        2026-11-21T07:02:00Z ERROR notification "X" not sent: the webhook token is not accepted (401 Invalid REMOTE) — copy it again
        2026-11-21T07:03:00Z INFO notification "Y" not sent: the nope category is off
        2026-11-21T07:04:00Z DEBUG notification "Z" not sent: the webhook is gone (said above)
        2026-11-21T07:05:00Z ERROR notification "W" not sent: instance-id i-0REMOTE — x
      `),
    );
    const at = (iso: string) => Date.parse(iso);
    expect(records).toEqual([
      { type: "backup.started", at: at("2026-11-21T06:00:00Z") },
      {
        type: "backup.done",
        at: at("2026-11-21T06:00:42Z"),
        tookMs: 42_000,
        addedBytes: Math.round(12.3 * 1024 ** 2),
        repositoryBytes: Math.round(1.2 * 1024 ** 3),
        snapshot: "1a2b3c4d",
        saveMs: 1200,
        autosaveOffMs: 3100,
      },
      { type: "notification", at: at("2026-11-21T06:00:43Z"), title: "Backup completed", outcome: "sent" },
      { type: "backup.failed", at: at("2026-11-21T07:00:00Z"), reason: "restic: wrong password or no key found" },
      {
        type: "drill.done",
        at: at("2026-11-21T07:01:10Z"),
        snapshot: "1a2b3c4d",
        files: 9,
        chunks: 1200,
        tookMs: 72_000,
        sampled: { checked: 1200, present: 4000 },
      },
      {
        type: "notification",
        at: at("2026-11-21T07:02:00Z"),
        title: "X",
        outcome: "failed",
        failure: {
          kind: "token",
          status: 401,
          reason: "the webhook token is not accepted (401 Invalid REMOTE)",
          hint: "copy it again",
        },
      },
      {
        type: "notification",
        at: at("2026-11-21T07:05:00Z"),
        title: "W",
        outcome: "failed",
        failure: { kind: "legacy", reason: "instance-id i-0REMOTE", hint: "x" },
      },
    ]);
    // The same figures written again give the same line.
    expect(recordLine(records[1] as ToolRecord).text).toBe(
      "=== Backup done === took 42 s, added 12.3 MiB, repository 1.20 GiB, snapshot 1a2b3c4d; save took 1.2 s, autosave off for 3.1 s",
    );
  });
});

let dir: { path: string };
beforeEach(() => {
  dir = { path: mkdtempSync(join(tmpdir(), "mcops-records-")) };
});
afterEach(() => rmSync(dir.path, { recursive: true, force: true }));

describe("a tool's events file", () => {
  const paths = () => ({ stateDir: join(dir.path, "state"), logDir: join(dir.path, "log") });

  it("gets the record its line was rendered from, and is read back whole", () => {
    const logger = createLogger({
      file: join(dir.path, "log", "mc-backup.log"),
      events: eventJournal(paths(), "backup"),
    });
    record(logger, { type: "backup.started", at: 1000 });
    record(logger, done());
    expect(readFileSync(join(dir.path, "log", "mc-backup.log"), "utf8")).toMatch(
      / INFO === Backup started ===\n.* INFO === Backup done === took 42 s, added 12\.3 MiB, repository 1\.20 GiB, snapshot 1a2b3c4d\n$/,
    );
    expect(readRecords(paths(), "backup")).toEqual([{ type: "backup.started", at: 1000 }, done()]);
    expect(statSync(eventsFile(paths(), "backup")).mode & 0o777).toBe(0o640);
  });

  it("is read instead of the log from its first record on: a line of the log after it says nothing", () => {
    mkdirSync(join(dir.path, "log"), { recursive: true });
    const line = "2026-11-21T06:00:42Z INFO === Backup done === took 1 s, added 1 B, snapshot f0f0f0f0\n";
    writeFileSync(join(dir.path, "log", "mc-backup.log"), line);
    expect(lastBackupDone(readRecords(paths(), "backup"))?.snapshot).toBe("f0f0f0f0");
    eventJournal(paths(), "backup").append({ type: "backup.started", at: Date.parse("2026-11-21T06:00:10Z") });
    expect(readRecords(paths(), "backup")).toEqual([
      { type: "backup.started", at: Date.parse("2026-11-21T06:00:10Z") },
    ]);
  });

  it("is rotated once it is full, and read from the end only", () => {
    const journal = eventJournal(paths(), "backup");
    const file = eventsFile(paths(), "backup");
    let at = 0;
    while ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) < ROTATE_BYTES) journal.append(done({ at: at++ }));
    journal.append(done({ at: at++ }));
    expect(statSync(`${file}.1`).size).toBeGreaterThanOrEqual(ROTATE_BYTES);
    expect(statSync(file).size).toBeLessThan(1000);
    const records = readRecords(paths(), "backup");
    // From the end of the rotated file, then the new one: the newest last, far fewer than were written.
    expect(records.at(-1)?.at).toBe(at - 1);
    expect(records.length).toBeLessThan((READ_BYTES / 100) * 2);
    expect(records.length).toBeGreaterThan(100);
  });

  it("never blocks on a FIFO in its place, nor reads one", () => {
    mkdirSync(join(dir.path, "state", "events"), { recursive: true });
    execFileSync("mkfifo", [eventsFile(paths(), "backup")]);
    expect(readRecords(paths(), "backup")).toEqual([]);
  });

  it("costs a record it cannot keep one WARN line, once, and never the run", () => {
    writeFileSync(join(dir.path, "state"), "a file where the state directory should be");
    const lines: string[] = [];
    const logger = createLogger({
      echo: { write: (l: string) => lines.push(l) },
      events: eventJournal(paths(), "backup"),
    });
    record(logger, { type: "backup.started", at: 1 });
    record(logger, done());
    expect(lines.filter((l) => / WARN cannot keep the backup\.\w+ record \(E\w+\)/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /=== Backup/.test(l))).toHaveLength(2);
  });
});

describe("the idle monitor's state file and the heartbeat, parsed with their schemas", () => {
  it("drops a field of the wrong shape, never the whole state", () => {
    const file = join(dir.path, "idle-monitor.json");
    writeFileSync(
      file,
      JSON.stringify({
        lastActivity: 5,
        idleSince: "yesterday",
        bootId: "not a boot id!",
        lowSamples: [19.5, "x", 18, 17, 16],
        health: { at: 3, tps: 19.9, cacheFree: "<b>" },
        disks: { volume: { warn: "2026-11-25", critical: "soon" } },
        certsCheckedDay: "2026-11-25",
        unknown: 1,
      }),
    );
    expect(readIdleState(file)).toEqual({
      lastActivity: 5,
      lowSamples: [18, 17, 16],
      health: { at: 3, tps: 19.9 },
      disks: { volume: { warn: "2026-11-25" } },
      certsCheckedDay: "2026-11-25",
    });
    writeFileSync(file, "null");
    expect(readIdleState(file)).toEqual({});
    expect(readIdleState(join(dir.path, "none.json"))).toEqual({});
  });

  it("takes from a heartbeat only what is well-formed", () => {
    const beat = Heartbeat.parse({
      serverState: "running-and-a-very-long-state",
      players: ["Steve", "<@everyone>", 7, "Alex"],
      online: 1,
      lastBackup: -5,
      lastDrill: { at: 10, ok: "yes" },
      bootId: "5f0c",
    });
    expect(beat).toEqual({
      serverState: "running-and-a-very-l",
      players: ["Steve", "Alex"],
      online: 2,
      lastBackup: undefined,
      lastDrill: { at: 10, ok: false },
      bootId: "5f0c",
    });
    expect(Heartbeat.safeParse({ players: [] }).success).toBe(false);
  });
});

describe("a record against what the game and a remote host write (an attack pass on issue 34's records)", () => {
  const paths = () => ({ logDir: join(dir.path, "log"), stateDir: join(dir.path, "state") });
  const logger = () =>
    createLogger({ file: join(paths().logDir, "mc-backup.log"), events: eventJournal(paths(), "backup") });
  afterEach(() => clearSecrets());

  it("keeps no secret: a failure's reason that quotes restic's address is redacted as its log line is", () => {
    registerSecret("hunter2-repository-password");
    const reason = "restic cannot open rest:https://mc:hunter2-repository-password@backup.example/mc";
    record(logger(), { type: "backup.failed", at: 1000, reason });
    expect(readFileSync(join(paths().logDir, "mc-backup.log"), "utf8")).not.toContain("hunter2");
    expect(readFileSync(eventsFile(paths(), "backup"), "utf8")).not.toContain("hunter2");
    // The dashboard, another process, never registered restic's secrets: the record it reads has none.
    clearSecrets();
    expect(lastBackupEnd(readRecords(paths(), "backup"))?.failed).toBe(
      "restic cannot open rest:https://mc:***@backup.example/mc",
    );
  });

  it("keeps a title as its log line shows it: no line break, bidirectional or zero-width character; at most 256", () => {
    const title = `Steve\u202eevetS was slain by \u200b[Sword]\nINFO forged\u2028line${"x".repeat(70_000)}`;
    record(logger(), { type: "notification", at: 1000, title, outcome: "sent" });
    const read = readRecords(paths(), "backup")[0] as RecordOf<"notification">;
    expect(read.title).toMatch(/^Steve\\u202eevetS was slain by \\u200b\[Sword\] \| INFO forged\\u2028linex+…$/);
    expect(read.title).toHaveLength(256);
  });

  it("is a done backup to its readers when the clock stepped back while it ran (its line says took 0 ms)", () => {
    record(logger(), { type: "backup.started", at: 10_000 });
    record(logger(), {
      type: "backup.done",
      at: 8000,
      tookMs: -2000,
      addedBytes: 5,
      snapshot: "1a2b3c4d",
      autosaveOffMs: -1,
    });
    expect(readFileSync(join(paths().logDir, "mc-backup.log"), "utf8")).toContain("=== Backup done === took 0 ms");
    expect(lastBackupDone(readRecords(paths(), "backup"))).toMatchObject({ tookMs: 0, autosaveOffMs: 0 });
  });

  it("never writes to a FIFO or through a link in the events file's place; the run goes on, one WARN line", async () => {
    mkdirSync(join(paths().stateDir, "events"), { recursive: true });
    const file = eventsFile(paths(), "backup");
    execFileSync("mkfifo", [file]);
    const lines: string[] = [];
    const warned = createLogger({
      echo: { write: (l: string) => lines.push(l) },
      events: eventJournal(paths(), "backup"),
    });
    record(warned, { type: "backup.started", at: 1 }); // would hang here if it opened the FIFO for writing
    expect(lines.filter((l) => / WARN cannot keep the backup\.started record \(E\w+\)/.test(l))).toHaveLength(1);
    rmSync(file);
    writeFileSync(join(dir.path, "target"), "root's file\n");
    execFileSync("ln", ["-s", join(dir.path, "target"), file]);
    record(logger(), { type: "backup.started", at: 2 });
    expect(readFileSync(join(dir.path, "target"), "utf8")).toBe("root's file\n");
  });

  it("reads nothing, and does not throw, where `events` is not a directory", () => {
    mkdirSync(paths().stateDir, { recursive: true });
    writeFileSync(join(paths().stateDir, "events"), "");
    expect(readRecords(paths(), "backup")).toEqual([]);
  });

  it("never takes the webhook host's words into a title from an old log line", () => {
    const said = 'PAY ATTENTION: visit evil.example" not sent: cannot reach';
    const line = parseLogLine(
      `2026-11-21T06:00:00Z ERROR notification "Backup completed" not sent: the message was refused (400 ${said}) — this is a bug in mcops if it repeats; run with MCOPS_DEBUG=1 and report it`,
    );
    expect(legacyRecords(line ? [line] : [])[0]).toMatchObject({ title: "Backup completed" });
  });

  it("shows the last backup of an old log until the first record's own time, never the same run twice", () => {
    mkdirSync(paths().logDir, { recursive: true });
    writeFileSync(
      join(paths().logDir, "mc-backup.log"),
      [
        "2026-11-21T06:00:00Z INFO === Backup started ===",
        "2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 1.00 MiB, snapshot aaaa0000",
        "2026-11-22T06:00:00Z INFO === Backup started ===",
        "",
      ].join("\n"),
    );
    // The first new backup is under way: its start is recorded, and logged in the same second.
    eventJournal(paths(), "backup").append({ type: "backup.started", at: Date.parse("2026-11-22T06:00:00.400Z") });
    const summary = summariseBackups(readRecords(paths(), "backup"), true);
    expect(summary.current).toMatchObject({ result: "running", startedAt: Date.parse("2026-11-22T06:00:00.400Z") });
    expect(summary.last).toMatchObject({ result: "done", snapshot: "aaaa0000", addedBytes: 1024 ** 2 });
  });

  it("refuses a time no Date holds, which would fail every reader that shows it", () => {
    mkdirSync(join(paths().stateDir, "events"), { recursive: true });
    writeFileSync(
      eventsFile(paths(), "backup"),
      '{"type":"backup.started","at":9000000000000000}\n{"type":"backup.started","at":5}\n',
    );
    expect(readRecords(paths(), "backup")).toEqual([{ type: "backup.started", at: 5 }]);
  });
});
