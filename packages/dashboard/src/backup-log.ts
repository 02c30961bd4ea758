import { formatDuration } from "@mcops/core/format";
import type { LogLine } from "@mcops/core/log-lines";

/**
 * The last backup, read from /var/log/mc-backup.log as the backup tool writes it (packages/backup/src/backup.ts):
 * `INFO === Backup started ===`, `INFO === Backup done === took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot
 * 1a2b3c4d; autosave off for 3.1 s`, `ERROR === Backup failed === <reason>`.
 */
export interface BackupRun {
  /** running: started, no end yet, and a live backup holds the lock; unfinished: started and never ended (killed). */
  result: "done" | "failed" | "running" | "unfinished";
  startedAt: number | undefined;
  endedAt: number | undefined;
  /** "42 s": the log's own words for a finished backup, else measured from the lines' times. */
  took: string | undefined;
  added: string | undefined;
  repository: string | undefined;
  snapshot: string | undefined;
  reason: string | undefined;
}

export interface BackupSummary {
  /** A backup in progress. */
  current: BackupRun | undefined;
  /** The newest backup that is not in progress. */
  last: BackupRun | undefined;
}

const STARTED = /^=== Backup started ===/;
const DONE = /^=== Backup done ===\s*(.*)$/;
const FAILED = /^=== Backup failed ===\s*(.*)$/;

function fact(facts: string, name: string): string | undefined {
  return new RegExp(`(?:^|[,;] )${name} ([^,;]+)`).exec(facts)?.[1]?.trim();
}

const blank = (): BackupRun => ({
  result: "unfinished",
  startedAt: undefined,
  endedAt: undefined,
  took: undefined,
  added: undefined,
  repository: undefined,
  snapshot: undefined,
  reason: undefined,
});

/** `lines` oldest first (the rotated file's, then the current file's); `running`: a live backup holds the lock. */
export function summariseBackups(lines: readonly LogLine[], running: boolean): BackupSummary {
  const runs: BackupRun[] = [];
  let open: BackupRun | undefined;
  for (const { time, text } of lines) {
    if (STARTED.test(text)) {
      open = { ...blank(), startedAt: time };
      runs.push(open);
      continue;
    }
    const done = DONE.exec(text);
    const failed = done ? undefined : FAILED.exec(text);
    if (!done && !failed) continue;
    const run = open ?? blank();
    if (!open) runs.push(run);
    open = undefined;
    run.endedAt = time;
    if (done) {
      const facts = done[1] ?? "";
      run.result = "done";
      run.took = fact(facts, "took");
      run.added = fact(facts, "added");
      run.repository = fact(facts, "repository");
      run.snapshot = fact(facts, "snapshot");
    } else {
      run.result = "failed";
      run.reason = failed?.[1] || undefined;
    }
    if (!run.took && run.startedAt !== undefined) run.took = formatDuration(time - run.startedAt);
  }
  const newest = runs.at(-1);
  if (newest && newest.result === "unfinished" && running) {
    newest.result = "running";
    return { current: newest, last: runs.at(-2) };
  }
  return { current: undefined, last: newest };
}
