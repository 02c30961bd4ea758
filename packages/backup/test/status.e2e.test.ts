import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventJournal, eventsFile } from "@mcops/core/events";
import { formatBytes } from "@mcops/core/format";
import { type RecordOf, ToolRecord } from "@mcops/core/records";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BackupStatus } from "../src/commands/status.ts";
import { lastBackupDone, resticBackup, type Server, startServer } from "./harness.ts";

let server: Server;

beforeEach(async () => {
  server = await startServer({ state: "offline" });
  expect((await server.run(["init"])).code).toBe(0);
});

afterEach(async () => {
  await server.close();
});

/** A snapshot made by restic itself (not through backup), of `tags`, with `extra` arguments such as --time. */
function resticSnapshot(tags: string[], extra: string[] = []): void {
  const dir = mkdtempSync(join(server.root, "other-"));
  mkdirSync(join(dir, "world"));
  writeFileSync(join(dir, "world", "level.dat"), "old");
  resticBackup(server, [join(dir, "world")], tags, extra);
}

/** A snapshot of this server taken at `time` (restic backup --time), as an old backup would be. */
const oldSnapshot = (time: string) =>
  resticSnapshot(["mcops", `server-${server.panel.server.identifier}`], ["--time", time]);

describe("backup status", () => {
  it("with no backup yet: says so and exits 1 in one line", async () => {
    const result = await server.run(["status"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Newest backup: +none yet$/m);
    expect(result.stdout).toMatch(/^Last drill: +never run \(backup drill\)$/m);
    expect(result.stderr).toBe(
      `backup: the newest backup does not exist yet: older than BACKUP_MAX_AGE (26 h 0 min) — see ${join(server.logDir, "mc-backup.log")}\n`,
    );
  });

  it("after a backup and a drill: the snapshot, what it added, the drill, the repository and the retention; exit 0", async () => {
    expect((await server.run()).code).toBe(0);
    const { added, id } = lastBackupDone(server);
    // The run's record: its sizes are numbers, and the log's words are those numbers put into words.
    const state = { stateDir: join(server.root, "state") };
    const records = readFileSync(eventsFile(state, "backup"), "utf8")
      .trim()
      .split("\n")
      .map((line) => ToolRecord.parse(JSON.parse(line)));
    // The run's and its notifications' (the notifier records what became of each post).
    expect(records.map((r) => (r.type === "notification" ? `${r.title}: ${r.outcome}` : r.type))).toEqual([
      "backup.started",
      "Backup started: sent",
      "backup.done",
      "Backup completed: sent",
    ]);
    const record = records[2] as RecordOf<"backup.done">;
    expect(record).toMatchObject({ snapshot: id, addedBytes: expect.any(Number), repositoryBytes: expect.any(Number) });
    expect(formatBytes(record.addedBytes)).toBe(added);
    // A drill as `backup drill` records it.
    eventJournal(state, "backup").append({
      type: "drill.done",
      at: Date.parse("2026-11-22T07:01:10Z"),
      snapshot: id as string,
      files: 9,
      chunks: 1200,
      tookMs: 12_000,
    });
    const result = await server.run(["status", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as BackupStatus;
    expect(status.newest).toMatchObject({ id, added, addedBytes: record.addedBytes });
    expect(status.newest?.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(status.newest?.ageSeconds).toBeLessThan(600);
    expect(status.lastDrill).toEqual({
      ok: true,
      time: "2026-11-22T07:01:10Z",
      snapshot: id,
      files: 9,
      chunks: 1200,
      took: "12 s",
      tookMs: 12_000,
    });
    expect(status.repository.snapshots).toBe(1);
    expect(status.repository.bytes).toBeGreaterThan(0);
    expect(status.retention).toEqual({ keepLast: 1, keepDaily: 30, keepWeekly: 12, prune: true });
    expect(status.maxAgeSeconds).toBe(26 * 3600);
    expect(status.stale).toBe(false);

    const text = await server.run(["status"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^Newest backup: +${id} of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(.* ago, added ${added}\\)$`,
        "m",
      ),
    );
    expect(text.stdout).toMatch(
      new RegExp(`^Last drill: +verified 2026-11-22 07:01:10 UTC: snapshot ${id}, 9 files, 1200 chunks in 12 s$`, "m"),
    );
    expect(text.stdout).toMatch(/^Retention: +keep last 1, daily 30, weekly 12, applied after each backup$/m);
    expect(text.stdout).toMatch(/^Max age: +26 h 0 min: ok$/m);
  });

  it("exits 1 when the newest backup is older than BACKUP_MAX_AGE, and shows a failed drill", async () => {
    oldSnapshot("2026-01-01 00:00:00");
    server.backupEnv({ BACKUP_MAX_AGE: "2h" });
    // Written by a version before the records: backup status still reads it (no record kept yet).
    appendFileSync(
      join(server.logDir, "mc-backup.log"),
      "2026-11-22T07:01:10Z ERROR === Drill failed === snapshot 1a2b3c4d: world/region/r.0.0.mca: truncated\n",
    );
    const result = await server.run(["status", "--json"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: the newest backup is \d+ h \d+ min old: older than BACKUP_MAX_AGE \(2 h 0 min\)/,
    );
    const status = JSON.parse(result.stdout) as BackupStatus;
    expect(status.stale).toBe(true);
    expect(status.newest?.ageSeconds).toBeGreaterThan(2 * 3600);
    expect(status.lastDrill).toEqual({
      ok: false,
      time: "2026-11-22T07:01:10Z",
      snapshot: "1a2b3c4d",
      reason: "world/region/r.0.0.mca: truncated",
    });
    const text = await server.run(["status"]);
    expect(text.stdout).toMatch(
      /^Last drill: +FAILED 2026-11-22 07:01:10 UTC on snapshot 1a2b3c4d: world\/region\/r\.0\.0\.mca: truncated$/m,
    );
    expect(text.stdout).toMatch(/^Max age: +2 h 0 min: STALE$/m);
  });

  it("counts only this server's snapshots", async () => {
    // Another server's snapshot in the same repository is not this one's newest backup.
    resticSnapshot(["mcops", "server-0ther000"]);
    const result = await server.run(["status", "--json"]);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as BackupStatus).newest).toBeNull();
  });

  it("calls the newest regular snapshot the newest backup, and shows safety snapshots apart, as restore latest does", async () => {
    const own = ["mcops", `server-${server.panel.server.identifier}`];
    resticSnapshot(own, ["--time", "2026-11-20 06:00:00"]);
    resticSnapshot([...own, "pre-restore"], ["--time", "2026-11-21 06:00:00"]);
    resticSnapshot([...own, "pre-upgrade"], ["--time", "2026-11-21 07:00:00"]);
    const status = JSON.parse((await server.run(["status", "--json"])).stdout) as BackupStatus;
    expect(status.newest?.time).toBe("2026-11-20T06:00:00Z");
    expect(status.safety.map((s) => [s.tag, s.time])).toEqual([
      ["pre-restore", "2026-11-21T06:00:00Z"],
      ["pre-upgrade", "2026-11-21T07:00:00Z"],
    ]);
    const text = (await server.run(["status"])).stdout;
    expect(text).toMatch(/^Newest backup: +\w+ of 2026-11-20 06:00/m);
    expect(text).toMatch(/^Newest pre-restore: +\w+ of 2026-11-21 06:00:00 UTC \(a safety snapshot\)$/m);
    // restore latest takes the same one: its dry run names it.
    const dry = await server.run(["restore", "latest", "--dry-run", "--no-backup"]);
    expect(dry.stdout + dry.stderr).toContain(status.newest?.id as string);
  });
});
