import { isoSeconds } from "@mcops/core/clock";
import { formatDuration } from "@mcops/core/format";
import { escapeGameText } from "@mcops/core/http";
import type { IdleState } from "./decide.ts";

/**
 * The staleness alarm (issue 16), as a pure function like decide(): past BACKUP_MAX_AGE without a successful backup,
 * one red post, again only after another BACKUP_MAX_AGE while still stale, and one green post once a backup succeeds.
 */
export interface AgeCheck {
  state: IdleState;
  /** Since the newest successful backup, or since the monitor first looked when there never was one. */
  ageMs: number;
  stale: boolean;
  post?: { kind: "stale" | "recovered"; title: string; description: string } | undefined;
}

/** The newest backup run's end in mc-backup.log: when, and why it failed if it did. */
export interface BackupEnd {
  time: number;
  failed: string | undefined;
}

export function checkBackupAge(previous: IdleState, now: number, maxAgeMs: number, lastEnd?: BackupEnd): AgeCheck {
  const state: IdleState = { ...previous };
  state.watchingSince ??= now;
  const ageMs = now - (state.lastBackupOk ?? state.watchingSince);
  const stale = ageMs > maxAgeMs;
  if (!stale) {
    if (state.staleAlarm === undefined) return { state, ageMs, stale };
    state.staleAlarm = undefined;
    const when = state.lastBackupOk === undefined ? "" : ` (${isoSeconds(state.lastBackupOk)})`;
    return {
      state,
      ageMs,
      stale,
      post: { kind: "recovered", title: "Backups are running again", description: `A backup succeeded${when}.` },
    };
  }
  if (state.staleAlarm !== undefined && now - state.staleAlarm < maxAgeMs) return { state, ageMs, stale };
  state.staleAlarm = now;
  const hours = Math.floor(ageMs / 3_600_000);
  const title = state.lastBackupOk === undefined ? `No backup in ${hours} h of watching` : `No backup for ${hours} h`;
  return { state, ageMs, stale, post: { kind: "stale", title, description: why(lastEnd, maxAgeMs) } };
}

/** What the log says of the newest run: its failure, or when it ended, or nothing at all. */
function why(lastEnd: BackupEnd | undefined, maxAgeMs: number): string {
  const limit = `BACKUP_MAX_AGE is ${formatDuration(maxAgeMs)}.`;
  if (!lastEnd) return `mc-backup.log records no backup: is the cron line (06:00) there? ${limit}`;
  // The reason can hold names from the server volume: shown literally, never as Markdown.
  if (lastEnd.failed !== undefined) return `The last one failed: ${escapeGameText(lastEnd.failed)}\n${limit}`;
  return `The last one ended ${isoSeconds(lastEnd.time)}. ${limit}`;
}
