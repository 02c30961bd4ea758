import { isoSeconds } from "@mcops/core/clock";
import { JobError } from "@mcops/core/errors";
import { readRecords } from "@mcops/core/events";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { lastDrill, type RecordOf, sampledWords, type ToolRecord } from "@mcops/core/records";
import type { ToolContext } from "@mcops/core/tool";
import { isSafetySnapshot, SAFETY_TAGS, type Snapshot } from "@mcops/world/restic";
import { sameSnapshot } from "@mcops/world/restic-version";
import type { Settings } from "@mcops/world/settings";
import { repositoryJob, snapshotTime } from "../job.ts";

/** `backup status --json`: what a monitor or a script reads. Times are ISO 8601 in UTC. */
export interface BackupStatus {
  server: string;
  /** The newest backup: the newest snapshot that is not a safety snapshot (what restore latest and the drill take). */
  newest: {
    id: string;
    time: string;
    ageSeconds: number;
    /** What the backup that made it added, in words ("12.3 MiB") and in bytes (its record's figure). */
    added: string | undefined;
    addedBytes: number | undefined;
  } | null;
  /** The newest safety snapshot of each kind (pre-restore, pre-upgrade), shown apart. */
  safety: Array<{ tag: string; id: string; time: string }>;
  lastDrill:
    | {
        ok: true;
        time: string;
        snapshot: string;
        files: number;
        chunks: number;
        took: string;
        tookMs: number;
        sampled?: string;
      }
    | { ok: false; time: string; snapshot: string | undefined; reason: string }
    | null;
  repository: { bytes: number | undefined; snapshots: number };
  retention: { keepLast: number; keepDaily: number; keepWeekly: number; prune: boolean };
  maxAgeSeconds: number;
  /** The newest backup is older than BACKUP_MAX_AGE, or there is none: `backup status` exits 1. */
  stale: boolean;
}

/**
 * `backup status`: the newest snapshot of this server (its time, age and what it added), the last restore drill, the
 * repository's size and the retention; exit 1 when the newest backup is older than BACKUP_MAX_AGE, so any monitor can
 * run it. It only reads: no lock, nothing changed.
 */
export async function runStatus(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  options: { json?: boolean | undefined },
  settings: Settings,
): Promise<number> {
  const { logger, restic } = repositoryJob(ctx, settings);
  const snapshots = (await restic.snapshots(settings.tags)).sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  const bytes = await restic.repositorySize().catch((error: Error) => {
    logger.warn(`could not read the repository size: ${error.message}`);
    return undefined;
  });
  const status = statusOf(settings, snapshots, bytes, readRecords(ctx.paths, "backup"), ctx.clock.now());
  const newest = snapshots.find((s) => !isSafetySnapshot(s));
  ctx.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status, newest));
  if (status.stale) {
    const age = status.newest ? `is ${formatDuration(status.newest.ageSeconds * 1000)} old` : "does not exist yet";
    throw new JobError(
      `the newest backup ${age}: older than BACKUP_MAX_AGE (${formatDuration(settings.BACKUP_MAX_AGE)})`,
      {
        hint: `see ${settings.logFile}`,
      },
    );
  }
  return 0;
}

export function statusOf(
  settings: Settings,
  snapshots: readonly Snapshot[],
  bytes: number | undefined,
  records: readonly ToolRecord[],
  now: number,
): BackupStatus {
  const newest = snapshots.find((s) => !isSafetySnapshot(s));
  const newestAt = newest ? Date.parse(newest.time) : undefined;
  const addedBytes = newest ? (addedBy(records, newest.id) ?? newest.summary?.data_added) : undefined;
  const added = addedBytes === undefined ? undefined : formatBytes(addedBytes);
  return {
    server: settings.SERVER_ID,
    newest:
      newest && newestAt !== undefined
        ? {
            id: newest.short_id,
            time: isoSeconds(newestAt),
            ageSeconds: Math.round((now - newestAt) / 1000),
            added,
            addedBytes,
          }
        : null,
    safety: SAFETY_TAGS.flatMap((tag) => {
      const found = snapshots.find((s) => s.tags?.includes(tag));
      return found ? [{ tag, id: found.short_id, time: isoSeconds(Date.parse(found.time)) }] : [];
    }),
    lastDrill: drillStatus(lastDrill(records)),
    repository: { bytes, snapshots: snapshots.length },
    retention: { ...settings.retention, prune: settings.BACKUP_PRUNE },
    maxAgeSeconds: settings.BACKUP_MAX_AGE / 1000,
    stale: newestAt === undefined || now - newestAt > settings.BACKUP_MAX_AGE,
  };
}

/**
 * What the backup that made the snapshot added, from its record (restic keeps it in the snapshot only from 0.17). The
 * record names the snapshot short, or whole as restic 0.18 reported it before the tools shortened it.
 */
function addedBy(records: readonly ToolRecord[], id: string): number | undefined {
  return records.findLast((r): r is RecordOf<"backup.done"> => r.type === "backup.done" && sameSnapshot(r.snapshot, id))
    ?.addedBytes;
}

function drillStatus(drill: RecordOf<"drill.done" | "drill.failed"> | undefined): BackupStatus["lastDrill"] {
  if (!drill) return null;
  const time = isoSeconds(drill.at);
  if (drill.type === "drill.failed") return { ok: false, time, snapshot: drill.snapshot, reason: drill.reason };
  const { snapshot, files, chunks, tookMs, sampled } = drill;
  const took = formatDuration(tookMs);
  return {
    ok: true,
    time,
    snapshot,
    files,
    chunks,
    took,
    tookMs,
    ...(sampled ? { sampled: sampledWords(sampled) } : {}),
  };
}

function formatStatus(status: BackupStatus, newest: Snapshot | undefined): string {
  const rows: Array<[string, string]> = [["Server", status.server]];
  if (status.newest && newest) {
    const added = status.newest.added ? `, added ${status.newest.added}` : "";
    rows.push([
      "Newest backup",
      `${status.newest.id} of ${snapshotTime(newest)} (${formatDuration(status.newest.ageSeconds * 1000)} ago${added})`,
    ]);
  } else rows.push(["Newest backup", "none yet"]);
  for (const safety of status.safety) {
    rows.push([
      `Newest ${safety.tag}`,
      `${safety.id} of ${safety.time.replace("T", " ").replace("Z", " UTC")} (a safety snapshot)`,
    ]);
  }
  rows.push(["Last drill", formatDrill(status.lastDrill)]);
  const { bytes, snapshots } = status.repository;
  rows.push([
    "Repository",
    `${bytes === undefined ? "size unknown" : formatBytes(bytes)}, ${snapshots} snapshot(s) of this server`,
  ]);
  const r = status.retention;
  rows.push([
    "Retention",
    `keep last ${r.keepLast}, daily ${r.keepDaily}, weekly ${r.keepWeekly}${r.prune ? ", applied after each backup" : " (BACKUP_PRUNE=no: not applied)"}`,
  ]);
  const limit = formatDuration(status.maxAgeSeconds * 1000);
  rows.push(["Max age", status.stale ? `${limit}: STALE` : `${limit}: ok`]);
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${`${name}:`.padEnd(width + 2)}${value}\n`).join("");
}

function formatDrill(drill: BackupStatus["lastDrill"]): string {
  if (!drill) return "never run (backup drill)";
  const when = drill.time.replace("T", " ").replace("Z", " UTC");
  if (!drill.ok) return `FAILED ${when}${drill.snapshot ? ` on snapshot ${drill.snapshot}` : ""}: ${drill.reason}`;
  const sampled = drill.sampled ? `, sampled ${drill.sampled}` : "";
  return `verified ${when}: snapshot ${drill.snapshot}, ${drill.files} files, ${drill.chunks} chunks in ${drill.took}${sampled}`;
}
