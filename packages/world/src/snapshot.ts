import { JobError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import type { VolumeDir } from "@mcops/core/volume";
import { pauseAutosave } from "./autosave.ts";
import { panelFor, resticFor, unlockedOnce } from "./clients.ts";
import { type BackupSummary, isolationProblem, type Progress, type Restic, type SafetyTag } from "./restic.ts";
import type { Settings } from "./settings.ts";
import { backupPaths, levelName } from "./world.ts";

/**
 * Taking a snapshot of the world: the one way every command does it (the scheduled backup, and the safety snapshots a
 * restore and an upgrade take first). When the server runs, autosave is off and the world flushed while restic reads it
 * (autosave.ts), and it is back on whatever happens; restic reads the volume with no link followed (BACKUP_ISOLATE).
 * The caller holds the backup lock.
 */
export type SnapshotContext = Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "runner" | "signal" | "atExit">;

/** What a snapshot step hands on. */
export interface Taken {
  summary: BackupSummary;
  /** How the world was made consistent (the autosave guard's note). */
  note: string;
  /** How long autosave was off, if it was turned off. */
  autosaveOffMs: number | undefined;
  /** From save-all flush to "Saved the game", when the game confirmed it. */
  flushMs: number | undefined;
}

export interface SnapshotRequest {
  settings: Settings;
  logger: Logger;
  volume: VolumeDir;
  restic: Restic;
  /** What restic reads (the world's directories and the extra paths: backupPaths). */
  paths: string[];
  /** Tags besides this server's own. */
  extraTags?: readonly string[] | undefined;
  onProgress?: ((p: Progress) => void) | undefined;
}

/** Ends a job's step with "interrupted by SIGTERM" once the run's signal has come (its cleanup runs on the way out). */
export function stopIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new JobError(`interrupted by ${String(signal.reason)}`);
}

/** restic must read the volume with no link followed (BACKUP_ISOLATE), or the operator turned that off knowingly. */
export async function checkIsolation(
  ctx: Pick<ToolContext, "runner">,
  settings: Settings,
  logger: Logger,
): Promise<void> {
  if (!settings.BACKUP_ISOLATE) {
    logger.warn("BACKUP_ISOLATE=no: restic follows links the game's user can put in the volume (see SECURITY.md)");
    return;
  }
  const problem = await isolationProblem(ctx.runner, settings.WORLD_DIR);
  if (problem) {
    throw new JobError(`restic cannot be kept from following links in the server volume (${problem})`, {
      hint: "run backup as root where it may make a mount namespace (Linux 5.10 or newer), or set BACKUP_ISOLATE=no in backup.env (unsafe: see SECURITY.md)",
    });
  }
}

/** The snapshot, taken while autosave is off (when the server runs); autosave is back on whatever happens. */
export async function takeSnapshot(ctx: SnapshotContext, request: SnapshotRequest): Promise<Taken> {
  const { settings, logger, restic } = request;
  // restic's version first, outside autosave's pause: one below the floor is refused before the game is asked to do
  // anything (exit 78).
  await restic.version();
  const guard = await pauseAutosave({
    panel: panelFor(settings, ctx),
    volume: request.volume,
    clock: ctx.clock,
    logger,
    saveTimeoutMs: settings.saveTimeoutMs,
    signal: ctx.signal,
    atExit: ctx.atExit,
  });
  let summary: BackupSummary;
  let autosaveOffMs: number | undefined;
  let note = guard.note;
  try {
    stopIfAborted(ctx.signal);
    summary = await unlockedOnce(restic, logger, () =>
      restic.backup(request.paths, {
        tags: [...settings.tags, ...(request.extraTags ?? [])],
        excludes: ["session.lock", ...(settings.BACKUP_EXCLUDE ?? [])],
        maxFileSize: settings.BACKUP_MAX_FILE_SIZE,
        isolate: settings.BACKUP_ISOLATE ? settings.WORLD_DIR : undefined,
        onProgress: request.onProgress,
      }),
    );
    // A server found offline may have started while restic read its files: then they were not at rest.
    const disturbed = guard.disturbed?.();
    if (disturbed) {
      logger.warn(disturbed);
      note = "the server started during the backup: crash-consistent backup";
    }
  } finally {
    await guard.resume();
    if (guard.offSince !== undefined) autosaveOffMs = ctx.clock.now() - guard.offSince;
  }
  stopIfAborted(ctx.signal);
  return { summary, note, autosaveOffMs, flushMs: guard.flushMs };
}

/** A safety snapshot: restic's id and short id, and what it added. */
export interface SafetySnapshot {
  id: string;
  shortId: string;
  added: number;
}

/**
 * A snapshot of the world as it is now, tagged `tag`, before something replaces it (a restore, a new server jar): so
 * that the change can itself be undone from the repository. No retention runs (the next scheduled backup's does; the
 * tag keeps it in a group of its own there). Undefined, said in the log, when the volume holds no world to keep. The
 * caller holds the backup lock.
 */
export async function safetySnapshot(
  ctx: SnapshotContext,
  request: { settings: Settings; logger: Logger; volume: VolumeDir; tag: SafetyTag },
): Promise<SafetySnapshot | undefined> {
  const { settings, logger, volume, tag } = request;
  const level = volume.lstat(levelName(volume));
  if (!level?.isDirectory()) {
    logger.warn(`no ${tag} snapshot: the server volume holds no world to keep`);
    return undefined;
  }
  const paths = backupPaths(volume, settings.BACKUP_EXTRA_PATHS);
  await checkIsolation(ctx, settings, logger);
  const started = ctx.clock.now();
  logger.info(`taking a ${tag} snapshot of ${paths.join(", ")}`);
  const restic = resticFor(ctx, settings, logger);
  const { summary } = await takeSnapshot(ctx, { settings, logger, volume, restic, paths, extraTags: [tag] });
  const shortId = summary.snapshotId; // restic.backup reports it short, whatever restic's version
  logger.info(
    `${tag} snapshot ${shortId} taken in ${formatDuration(ctx.clock.now() - started)} (${formatBytes(summary.dataAdded)} added)`,
  );
  return { id: summary.snapshotId, shortId, added: summary.dataAdded };
}
