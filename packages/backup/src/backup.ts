import { existsSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describeError, JobError, McopsError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { writeFileAtomic } from "@mcops/core/fs";
import { COLOURS, escapeGameText, type Notifier, toolNotifier } from "@mcops/core/http";
import { acquireLock, isHolderAlive, type Lock, processStartTime } from "@mcops/core/lock";
import { type Logger } from "@mcops/core/log";
import { backupLockFile, logFile, resolvePaths as paths } from "@mcops/core/paths";
import { VolumeDir } from "@mcops/core/volume";
import { pauseAutosave } from "./autosave.ts";
import { ping, writeTextfile } from "./reporting.ts";
import { createRestic, isolationProblem, type Progress, type Restic, ResticError } from "./restic.ts";
import {
  type BackupContext,
  backupLogger,
  loadSettings,
  notifierFor,
  panelFor,
  type SettingFlags,
  type Settings,
} from "./settings.ts";
import { backupPaths } from "./world.ts";

/** What cli.ts needs of core, named here so that the bundle keeps only what the tool uses. */
export { systemClock } from "@mcops/core/clock";
export { resolvePaths } from "@mcops/core/paths";
export { zxRunner } from "@mcops/core/runner";

import { systemClock as clock } from "@mcops/core/clock";
import { zxRunner as runner } from "@mcops/core/runner";
export const core = { resolvePaths: paths, systemClock: clock, zxRunner: runner };

export interface BackupOptions extends SettingFlags {
  /** Wait for a running backup (or restore) to finish instead of exiting 75. */
  wait?: boolean | undefined;
}

/** How long `--wait` waits for the lock. */
export const WAIT_MS = 2 * 60 * 60 * 1000;

export function lockPath(ctx: BackupContext): string {
  return backupLockFile(ctx.paths);
}

/**
 * The one lock every repository-changing command takes: backup, restore, check, prune, init never overlap. `wait`
 * undefined: the command has no --wait.
 */
export function takeBackupLock(ctx: BackupContext, tool: string, wait?: boolean): Promise<Lock> {
  return acquireLock(lockPath(ctx), {
    tool,
    what: "a backup or restore",
    ...(wait === undefined ? {} : { waitOption: "--wait" }),
    waitMs: wait ? WAIT_MS : 0,
    pollMs: 1000,
    clock: ctx.clock,
    signal: ctx.signal,
  });
}

/** Where the pid of the running restic is kept, so that a run killed with -9 does not leave restic running unseen. */
function childFile(ctx: BackupContext): string {
  return join(ctx.paths.runDir, "backup.restic.pid");
}

/**
 * restic keeps running when the backup that started it is killed with SIGKILL, holding its repository lock. The next
 * run stops it (SIGTERM, then SIGKILL) before it starts its own; restic unlock then clears the lock it left.
 */
async function stopOrphanedRestic(ctx: BackupContext, logger: Logger): Promise<void> {
  const file = childFile(ctx);
  if (!existsSync(file)) return;
  try {
    const { pid, start } = JSON.parse(readFileSync(file, "utf8")) as { pid: number; start: string };
    const alive = isHolderAlive({ pid, start, tool: "restic", host: hostname(), since: "" });
    const cmdline = alive ? readCmdline(pid) : "";
    if (alive && /(^|\/)restic\0/.test(cmdline)) {
      logger.warn(`stopping restic (pid ${pid}) left running by a backup that was killed`);
      process.kill(pid, "SIGTERM");
      process.kill(pid, "SIGCONT"); // a stopped process acts on SIGTERM only once it runs again
      for (let i = 0; i < 50 && isHolderAlive({ pid, start, tool: "restic", host: hostname(), since: "" }); i++) {
        await ctx.clock.sleep(200);
      }
      if (isHolderAlive({ pid, start, tool: "restic", host: hostname(), since: "" })) process.kill(pid, "SIGKILL");
    }
  } catch {
    // unreadable or already gone: nothing to stop
  }
  rmSync(file, { force: true });
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function progressPrinter(ctx: BackupContext): ((p: Progress) => void) | undefined {
  if (!ctx.stderr.isTTY) return undefined;
  let last = 0;
  return (p) => {
    const now = ctx.clock.now();
    if (now - last < 250 && p.percent < 100) return;
    last = now;
    const eta = p.secondsRemaining === undefined ? "" : `  ETA ${formatDuration(p.secondsRemaining * 1000)}`;
    ctx.stderr.write(
      `\r\x1b[K  ${p.percent.toFixed(1)}%  ${formatBytes(p.bytesDone)} / ${formatBytes(p.totalBytes)}${eta}`,
    );
  };
}

export function resticFor(
  ctx: BackupContext,
  settings: Settings,
  logger: Logger,
  onSpawn?: (pid: number) => void,
): Restic {
  return createRestic({
    runner: ctx.runner,
    env: { RESTIC_REPOSITORY: settings.RESTIC_REPOSITORY, RESTIC_PASSWORD_FILE: settings.RESTIC_PASSWORD_FILE },
    signal: ctx.signal,
    onSpawn,
    onStderr: (line) => {
      if (/^error: /.test(line)) logger.warn(`restic: ${line}`);
      else if (line.trim() && !/NOTICE: Config file .* not found/.test(line)) logger.debug(`restic: ${line}`);
    },
  });
}

/**
 * Runs a restic command; when a lock is in its way, clears the locks whose restic is gone (restic unlock leaves a live
 * one alone) and tries once more. Unlocking only when needed saves opening the repository (~0.7 s) on every run.
 */
async function unlockedOnce<T>(restic: Restic, logger: Logger, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof ResticError) || error.kind !== "locked") throw error;
    logger.warn(`${error.message}; clearing stale locks (restic unlock) and trying again`);
    await restic.unlock();
    return fn();
  }
}

/**
 * backup.env or the password file is broken. Under cron nobody reads stderr, so the backup log (its place does not
 * depend on backup.env) and the channel (webhook.env) say why no backup ran; the caller still ends with the error.
 */
async function reportUnloadableSettings(ctx: BackupContext, logger: Logger, error: unknown): Promise<void> {
  const reason = describeError(error);
  logger.error(`=== Backup failed === ${reason}`, { echo: false });
  await notifierFor(ctx, logger).send({
    title: "Backup failed",
    description: `${reason}\nSee ${logFile(ctx.paths, "mc-backup.log")} on the server.`,
    colour: COLOURS.error,
    category: "backup",
  });
}

/** One backup (docs/system.md 1.3, 6; issue 3): lock, save-off/flush, restic backup, save-on, retention, report. */
export async function runBackup(ctx: BackupContext, options: BackupOptions = {}): Promise<number> {
  const logger = backupLogger(ctx);
  let settings: Settings;
  let notifier: Notifier;
  try {
    settings = loadSettings(ctx, options);
    // docs/contract.md: a webhook.env others can read is refused (78) like backup.env, before anything is done.
    notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  } catch (error) {
    await reportUnloadableSettings(ctx, logger, error);
    throw error;
  }
  const lock = await takeBackupLock(ctx, "backup", options.wait ?? false);
  const started = ctx.clock.now();
  let autosaveOffMs: number | undefined;
  let volume: VolumeDir | undefined;
  try {
    await stopOrphanedRestic(ctx, logger);
    logger.info("=== Backup started ===");
    await ping(settings.BACKUP_PING_URL, "start", logger);
    volume = VolumeDir.open(settings.WORLD_DIR);
    const paths = backupPaths(volume, settings.BACKUP_EXTRA_PATHS);
    if (!settings.isolate) {
      logger.warn("BACKUP_ISOLATE=no: restic follows links the game's user can put in the volume (see SECURITY.md)");
    } else {
      const problem = await isolationProblem(ctx.runner, settings.WORLD_DIR);
      if (problem) {
        throw new JobError(`restic cannot be kept from following links in the server volume (${problem})`, {
          hint: "run backup as root where it may make a mount namespace (Linux 5.10 or newer), or set BACKUP_ISOLATE=no in backup.env (unsafe: see SECURITY.md)",
        });
      }
    }
    logger.info(`backing up ${paths.join(", ")} to ${settings.RESTIC_REPOSITORY}`);
    await notifier.send({
      title: "Backup started",
      description: `${paths.length} folder${paths.length === 1 ? "" : "s"} of server ${settings.SERVER_ID}`,
      colour: COLOURS.info,
      category: "backup",
    });

    const restic = resticFor(ctx, settings, logger, (pid) => {
      // Whole or not at all: the next run (and anyone watching) may read it while restic is starting.
      writeFileAtomic(childFile(ctx), JSON.stringify({ pid, start: processStartTime(pid) }), 0o644);
    });
    const guard = await pauseAutosave({
      panel: panelFor(settings, ctx),
      volume,
      clock: ctx.clock,
      logger,
      saveTimeoutMs: settings.saveTimeoutMs,
      signal: ctx.signal,
      atExit: ctx.atExit,
    });
    let summary: Awaited<ReturnType<Restic["backup"]>>;
    try {
      if (ctx.signal.aborted) throw new JobError(`interrupted by ${String(ctx.signal.reason)}`);
      summary = await unlockedOnce(restic, logger, () =>
        restic.backup(paths, {
          tags: settings.tags,
          excludes: ["session.lock", ...(settings.BACKUP_EXCLUDE ?? [])],
          maxFileSize: settings.maxFileSize,
          isolate: settings.isolate ? settings.WORLD_DIR : undefined,
          onProgress: progressPrinter(ctx),
        }),
      );
    } finally {
      if (ctx.stderr.isTTY) ctx.stderr.write("\r\x1b[K");
      rmSync(childFile(ctx), { force: true });
      await guard.resume();
      if (guard.offSince !== undefined) autosaveOffMs = ctx.clock.now() - guard.offSince;
    }
    if (ctx.signal.aborted) throw new JobError(`interrupted by ${String(ctx.signal.reason)}`);

    const notes: string[] = [guard.note];
    if (summary.unreadable.length) {
      notes.push(
        // File names are the game's: shown literally, never as Markdown or a mention.
        `${summary.unreadable.length} file(s) could not be read and are missing: ${escapeGameText(summary.unreadable.slice(0, 5).join(", "))}`,
      );
      logger.warn(`snapshot ${summary.snapshotId} is missing unreadable files: ${summary.unreadable.join(", ")}`);
    }
    if (settings.prune) {
      try {
        await unlockedOnce(restic, logger, () => restic.forget(settings.retention, settings.tags, true));
        const r = settings.retention;
        logger.info(`retention applied: keep last ${r.keepLast}, daily ${r.keepDaily}, weekly ${r.keepWeekly}, pruned`);
      } catch (error) {
        notes.push(`retention failed: ${(error as Error).message}`);
        logger.warn(`retention failed, the snapshot is kept: ${(error as Error).message}`);
      }
    }
    const total = await restic.repositorySize().catch((error: Error) => {
      logger.warn(`could not read the repository size: ${error.message}`);
      return undefined;
    });

    const took = ctx.clock.now() - started;
    const facts = [
      `took ${formatDuration(took)}`,
      `added ${formatBytes(summary.dataAdded)}`,
      total === undefined ? undefined : `repository ${formatBytes(total)}`,
      `snapshot ${summary.snapshotId}`,
    ].filter(Boolean);
    logger.info(
      `=== Backup done === ${facts.join(", ")}${autosaveOffMs === undefined ? "" : `; autosave off for ${formatDuration(autosaveOffMs)}`}`,
    );
    await notifier.send({
      title: "Backup completed",
      description: [facts.join(" · "), ...notes].join("\n"),
      colour: summary.unreadable.length ? COLOURS.warning : COLOURS.success,
      category: "backup",
    });
    await ping(settings.BACKUP_PING_URL, "success", logger);
    writeTextfile(
      settings.BACKUP_TEXTFILE_DIR,
      {
        success: true,
        time: ctx.clock.now(),
        durationSeconds: took / 1000,
        addedBytes: summary.dataAdded,
        repositoryBytes: total,
        autosaveOffSeconds: autosaveOffMs === undefined ? undefined : autosaveOffMs / 1000,
      },
      settings.SERVER_ID,
      logger,
    );
    return 0;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // The same reason ends the run as its one error line on stderr: the log file gets it, the echo does not.
    logger.error(`=== Backup failed === ${reason}`, { echo: false });
    await notifier.send({
      title: "Backup failed",
      description: `${reason}\nSee ${settings.logFile} on the server.`,
      colour: COLOURS.error,
      category: "backup",
      // The reason can hold names from the server volume (level-name, file names): shown literally, never as Markdown.
      fromGame: true,
    });
    await ping(settings.BACKUP_PING_URL, "fail", logger, reason);
    writeTextfile(
      settings.BACKUP_TEXTFILE_DIR,
      { success: false, time: ctx.clock.now(), durationSeconds: (ctx.clock.now() - started) / 1000 },
      settings.SERVER_ID,
      logger,
    );
    if (error instanceof McopsError) throw error;
    throw new JobError(reason, { hint: `see ${settings.logFile}`, cause: error });
  } finally {
    volume?.close();
    lock.release();
  }
}
