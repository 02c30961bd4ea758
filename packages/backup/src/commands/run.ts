import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, relative } from "node:path";
import { describeSpace, diskLevel, diskSpace } from "@mcops/core/disk";
import { describeError, JobError, McopsError } from "@mcops/core/errors";
import { record } from "@mcops/core/events";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { writeFileAtomic } from "@mcops/core/fs";
import { COLOURS, escapeGameText, type Notifier, toolNotifier } from "@mcops/core/http";
import { isHolderAlive, processStartTime } from "@mcops/core/lock";
import type { Logger } from "@mcops/core/log";
import { toolLogPath } from "@mcops/core/log-events";
import { backupFactList, type RecordOf } from "@mcops/core/records";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import { resticFor, unlockedOnce } from "@mcops/world/clients";
import {
  type BackupSummary,
  PATH_MAX,
  type Progress,
  RESTORE_TARGET_BYTES,
  type Restic,
  restoredPathBytes,
  type SnapshotNode,
} from "@mcops/world/restic";
import { loadSettings, type Settings } from "@mcops/world/settings";
import { checkIsolation, type Taken, takeSnapshot } from "@mcops/world/snapshot";
import { backupPaths } from "@mcops/world/world";
import { backupLogger, notifierFor, takeBackupLock } from "../job.ts";
import { ping, writeTextfile } from "../reporting.ts";

type RunContext = Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "runner" | "signal" | "atExit">;

export interface BackupOptions {
  /** Wait for a running backup (or restore) to finish instead of exiting with ExitCode.busy. */
  wait?: boolean | undefined;
}

/** What a backup runs with: its settings (backup.env, the flags), the channel webhook.env names, and the log both write. */
export interface Configured {
  settings: Settings;
  notifier: Notifier;
  logger: Logger;
}

/** One backup run, as its steps share it. */
interface Run {
  ctx: RunContext;
  settings: Settings;
  logger: Logger;
  notifier: Notifier;
  started: number;
  volume?: VolumeDir | undefined;
}

/** One backup (docs/system.md 1.3, 6; issue 3): lock, save-off/flush, restic backup, save-on, retention, report. */
export async function runBackup(
  ctx: RunContext,
  options: BackupOptions,
  { settings, notifier, logger }: Configured,
): Promise<number> {
  const lock = await takeBackupLock(ctx, "backup", options.wait ?? false);
  const run: Run = { ctx, settings, logger, notifier, started: ctx.clock.now() };
  try {
    refuseFullDisk(settings);
    const world = await begin(run);
    const restic = resticFor(ctx, settings, logger, (pid) => {
      // Whole or not at all: the next run (and anyone watching) may read it while restic is starting.
      writeFileAtomic(childFile(ctx), JSON.stringify({ pid, start: processStartTime(pid) }), 0o644);
    });
    const taken = await snapshotWorld(run, restic, world);
    const warnings = [...unreadableNotes(run, taken.summary), ...(await longPathNotes(run, restic, taken, world))];
    const notes = [taken.note, ...warnings, ...(await applyRetention(run, restic))];
    await reportDone(run, restic, taken, notes, warnings.length > 0);
    return 0;
  } catch (error) {
    throw await reportFailed(run, error);
  } finally {
    run.volume?.close();
    lock.release();
  }
}

/**
 * The backup's settings loader (cli.ts): the settings (`args`, the parsed command line: --extra-path and --exclude win
 * over backup.env) and the notifier. When backup.env, the password file or webhook.env is broken, nobody reads stderr
 * under cron: the backup log (its place does not depend on backup.env) and the channel say why no backup ran, and the
 * run still ends with the error.
 */
export async function loadOrReport(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stderr">,
  args: Record<string, unknown>,
): Promise<Configured> {
  const logger = backupLogger(ctx);
  try {
    const settings = loadSettings(ctx, args);
    // docs/contract.md: a webhook.env others can read is refused (78) like backup.env, before anything is done.
    const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
    return { settings, notifier, logger };
  } catch (error) {
    const reason = describeError(error);
    record(logger, failedRecord(ctx, reason, error), { echo: false });
    await notifierFor(ctx, logger).send({
      title: "Backup failed",
      description: `${reason}\nSee ${toolLogPath(ctx.paths, "backup")} on the server.`,
      colour: COLOURS.error,
      category: "backup",
    });
    throw error;
  }
}

/**
 * No backup begins on a volume whose disk is below DISK_CRITICAL: save-all would write the whole world to a disk that
 * may fill up halfway, and a world saved halfway is corrupt. Nothing is sent to the game; the failure is reported
 * (red "Backup failed") and the run exits 1.
 */
function refuseFullDisk(settings: Settings): void {
  const space = diskSpace(settings.WORLD_DIR);
  if (!space || diskLevel(space, settings.disk) !== "critical") return;
  throw new JobError(
    `the server volume's disk is almost full: ${describeSpace(space)}, below DISK_CRITICAL (${Math.round(settings.disk.critical * 1000) / 10} %); no save was asked of the game, since a save on a full disk corrupts the world`,
    { hint: "free space on that disk (old crash reports, logs, restic's cache), then run the backup again" },
  );
}

/** What a backup reads: the server volume, and in it the world's directories and the extra paths. */
interface World {
  volume: VolumeDir;
  paths: string[];
}

/** Says the backup started, and finds what it reads (no link in the volume followed). */
async function begin(run: Run): Promise<World> {
  const { ctx, settings, logger } = run;
  await stopOrphanedRestic(ctx, logger);
  record(logger, { type: "backup.started", at: ctx.clock.now() });
  await ping(settings.BACKUP_PING_URL, "start", logger);
  const volume = VolumeDir.open(settings.WORLD_DIR);
  run.volume = volume;
  const paths = backupPaths(volume, settings.BACKUP_EXTRA_PATHS);
  await checkIsolation(ctx, settings, logger);
  logger.info(`backing up ${paths.join(", ")} to ${settings.RESTIC_REPOSITORY}`);
  await run.notifier.send({
    title: "Backup started",
    description: `${paths.length} folder${paths.length === 1 ? "" : "s"} of server ${settings.SERVER_ID}`,
    colour: COLOURS.info,
    category: "backup",
  });
  return { volume, paths };
}

/** The snapshot, with restic's progress on a terminal and its pid kept for the next run (stopOrphanedRestic). */
async function snapshotWorld(run: Run, restic: Restic, { volume, paths }: World): Promise<Taken> {
  const { ctx, settings, logger } = run;
  try {
    return await takeSnapshot(ctx, { settings, logger, volume, restic, paths, onProgress: progressPrinter(ctx) });
  } finally {
    if (ctx.stderr.isTTY) ctx.stderr.write("\r\x1b[K");
    rmSync(childFile(ctx), { force: true });
  }
}

/** The files restic could not read: the snapshot is made without them, and the log and the message say so. */
function unreadableNotes({ logger }: Run, summary: BackupSummary): string[] {
  if (!summary.unreadable.length) return [];
  logger.warn(`snapshot ${summary.snapshotId} is missing unreadable files: ${summary.unreadable.join(", ")}`);
  // File names are the game's: shown literally, never as Markdown or a mention.
  return [
    `${summary.unreadable.length} file(s) could not be read and are missing: ${escapeGameText(summary.unreadable.slice(0, 5).join(", "))}`,
  ];
}

/** How many of the paths too long to restore the message names (each shortened), and the log. */
const LONG_PATHS_NAMED = 3;

/**
 * The paths of the snapshot's part of the volume that no restore can write (issue 45): restic writes each file by
 * the restore's target followed by the file's path (restic.ts, restoredPathBytes), and a path longer than PATH_MAX
 * fails, so that `restore latest` and every drill of this snapshot would fail. The game's user can make such a path
 * (a file 4,093 bytes long, a tree nested past PATH_MAX); restic backs it up without a word. Read from the snapshot
 * itself (restic ls), so that what is named is what the snapshot holds, not what the volume held a moment later.
 */
async function longPathNotes(
  { settings, logger }: Run,
  restic: Restic,
  { summary }: Taken,
  world: World,
): Promise<string[]> {
  const root = settings.WORLD_DIR.replace(/\/+$/, "");
  const features = await restic.features();
  // restic read every file by its whole path, shorter than PATH_MAX: from 0.16 a restore writes it by a path no
  // longer than that when WORLD_DIR's is at least the target's (Pterodactyl's is 65 bytes), so there is nothing to list.
  if (features.restoreSubfolder && Buffer.byteLength(root) >= RESTORE_TARGET_BYTES) return [];
  const inside = world.paths.filter((path) => path.startsWith(`${root}/`));
  let nodes: SnapshotNode[];
  try {
    nodes = inside.length ? await restic.ls(summary.snapshotId, inside, true) : [];
  } catch (error) {
    logger.warn(
      `could not list snapshot ${summary.snapshotId} to check that its paths can be restored: ${(error as Error).message}`,
    );
    return [];
  }
  const tooLong = new Set(
    nodes.filter((n) => restoredPathBytes(features, root, n.path) >= PATH_MAX).map((n) => n.path),
  );
  // Below a path too long every path is too long: the first of each such tree is named.
  const tops = [...tooLong].filter((path) => !tooLong.has(dirname(path)));
  if (!tops.length) return [];
  const named = tops.slice(0, LONG_PATHS_NAMED).map((path) => ({
    rel: shorten(relative(root, path)),
    bytes: Buffer.byteLength(path),
  }));
  const more = tops.length > named.length ? ` and ${tops.length - named.length} more` : "";
  logger.warn(
    `snapshot ${summary.snapshotId} holds ${tops.length} path(s) too long to restore: ${named.map((n) => `${JSON.stringify(n.rel)} (${n.bytes} bytes)`).join(", ")}${more}`,
  );
  // restic 0.16 and newer leave WORLD_DIR's own path out of what they write (restoredPathBytes).
  const newer = { ...features, restoreSubfolder: true };
  const fits = !features.restoreSubfolder && tops.every((path) => restoredPathBytes(newer, root, path) < PATH_MAX);
  // File names are the game's: shown literally, never as Markdown or a mention.
  return [
    `${tops.length} path(s) are too long to restore: ${named.map((n) => `${escapeGameText(JSON.stringify(n.rel))} (${n.bytes} bytes)`).join(", ")}${more}. A restore writes each by its restore folder's path (up to ${RESTORE_TARGET_BYTES} bytes) and its own, past PATH_MAX (${PATH_MAX}): restore latest and the drill will fail on them. Remove them from the server volume${fits ? ", or install restic 0.16 or newer, which restores them" : ""}.`,
  ];
}

/** A path of up to 4 KiB, shortened for a message: its start and its end (whole characters). */
function shorten(path: string): string {
  const chars = [...path];
  return chars.length <= 100 ? path : `${chars.slice(0, 48).join("")}…${chars.slice(-48).join("")}`;
}

/** Retention after the backup (BACKUP_PRUNE): a failure keeps the snapshot and becomes a note. */
async function applyRetention({ settings, logger }: Run, restic: Restic): Promise<string[]> {
  if (!settings.BACKUP_PRUNE) return [];
  try {
    await unlockedOnce(restic, logger, () => restic.forget(settings.retention, settings.tags, true));
    const r = settings.retention;
    logger.info(`retention applied: keep last ${r.keepLast}, daily ${r.keepDaily}, weekly ${r.keepWeekly}, pruned`);
    return [];
  } catch (error) {
    logger.warn(`retention failed, the snapshot is kept: ${(error as Error).message}`);
    return [`retention failed: ${(error as Error).message}`];
  }
}

/** The done line, the message, the dead-man's switch and the metrics of a backup that went through. */
async function reportDone(run: Run, restic: Restic, taken: Taken, notes: string[], warned: boolean): Promise<void> {
  const { ctx, settings, logger, notifier } = run;
  const { summary, autosaveOffMs, flushMs } = taken;
  const total = await restic.repositorySize().catch((error: Error) => {
    logger.warn(`could not read the repository size: ${error.message}`);
    return undefined;
  });
  const took = ctx.clock.now() - run.started;
  const done: RecordOf<"backup.done"> = {
    type: "backup.done",
    at: ctx.clock.now(),
    tookMs: took,
    addedBytes: summary.dataAdded,
    repositoryBytes: total,
    snapshot: summary.snapshotId,
    saveMs: flushMs,
    autosaveOffMs,
  };
  record(logger, done);
  await notifier.send({
    title: "Backup completed",
    description: [backupFactList(done).join(" · "), ...stallFacts(taken), ...notes].join("\n"),
    colour: warned ? COLOURS.warning : COLOURS.success,
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
      saveSeconds: flushMs === undefined ? undefined : flushMs / 1000,
    },
    settings.SERVER_ID,
    logger,
  );
  await warnSlowSave(run, flushMs);
}

/** "save took 1.2 s · autosave off for 3.1 s": how long the game stalled, and how long it did not save. */
function stallFacts({ flushMs, autosaveOffMs }: Taken): string[] {
  const parts = [
    ...(flushMs === undefined ? [] : [`save took ${formatDuration(flushMs)}`]),
    ...(autosaveOffMs === undefined ? [] : [`autosave off for ${formatDuration(autosaveOffMs)}`]),
  ];
  return parts.length ? [parts.join(" · ")] : [];
}

/**
 * `save-all flush` blocks the game's main thread: past BACKUP_FLUSH_WARN, one yellow warning with the figure, at most
 * once a UTC day (the day is kept in the state directory, so the 06:00 backup and the idle backups share it).
 */
async function warnSlowSave({ ctx, settings, logger, notifier }: Run, flushMs: number | undefined): Promise<void> {
  if (flushMs === undefined || flushMs <= settings.BACKUP_FLUSH_WARN) return;
  const file = join(ctx.paths.stateDir, "backup-slow-save.json");
  const day = new Date(ctx.clock.now()).toISOString().slice(0, 10);
  let last: unknown;
  try {
    last = (JSON.parse(readFileSync(file, "utf8")) as { day?: unknown }).day;
  } catch {
    last = undefined; // never warned, or unreadable: warn
  }
  const took = formatDuration(flushMs);
  logger.warn(`saving the world took ${took} (BACKUP_FLUSH_WARN is ${formatDuration(settings.BACKUP_FLUSH_WARN)})`);
  if (last === day) return;
  await notifier.send({
    title: "Saving the world is slow",
    description: `save-all flush took ${took} before the game said "Saved the game". The game's main thread stands still while it saves: players see a freeze, and past the watchdog's max-tick-time (60 s by default) the server is killed. A smaller world (trim unused chunks), fewer loaded chunks (view-distance) or a faster disk shortens it.`,
    colour: COLOURS.warning,
    category: "backup",
  });
  try {
    mkdirSync(ctx.paths.stateDir, { recursive: true });
    writeFileAtomic(file, `${JSON.stringify({ day })}\n`, 0o644);
  } catch (error) {
    logger.warn(`could not remember the slow-save warning in ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** The failed line, the message, the dead-man's switch and the metrics of a failed backup; returns what to throw. */
async function reportFailed(run: Run, error: unknown): Promise<McopsError> {
  const { ctx, settings, logger, notifier } = run;
  const reason = error instanceof Error ? error.message : String(error);
  // The same reason ends the run as its one error line on stderr: the log file gets it, the echo does not.
  record(logger, failedRecord(ctx, reason, error), { echo: false });
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
    { success: false, time: ctx.clock.now(), durationSeconds: (ctx.clock.now() - run.started) / 1000 },
    settings.SERVER_ID,
    logger,
  );
  if (error instanceof McopsError) return error;
  return new JobError(reason, { hint: `see ${settings.logFile}`, cause: error });
}

/** Where the pid of the running restic is kept, so that a run killed with -9 does not leave restic running unseen. */
function childFile(ctx: Pick<ToolContext, "paths">): string {
  return join(ctx.paths.runDir, "backup.restic.pid");
}

/**
 * restic keeps running when the backup that started it is killed with SIGKILL, holding its repository lock. The next
 * run stops it (SIGTERM, then SIGKILL) before it starts its own; restic unlock then clears the lock it left.
 */
async function stopOrphanedRestic(ctx: Pick<ToolContext, "paths" | "clock">, logger: Logger): Promise<void> {
  const file = childFile(ctx);
  if (!existsSync(file)) return;
  try {
    const { pid, start } = JSON.parse(readFileSync(file, "utf8")) as { pid: number; start: string };
    const alive = () => isHolderAlive({ pid, start, tool: "restic", host: hostname(), since: "" });
    if (alive() && /(^|\/)restic\0/.test(readCmdline(pid))) {
      logger.warn(`stopping restic (pid ${pid}) left running by a backup that was killed`);
      process.kill(pid, "SIGTERM");
      process.kill(pid, "SIGCONT"); // a stopped process acts on SIGTERM only once it runs again
      for (let i = 0; i < 50 && alive(); i++) await ctx.clock.sleep(200);
      if (alive()) process.kill(pid, "SIGKILL");
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

function progressPrinter(ctx: Pick<ToolContext, "stderr" | "clock">): ((p: Progress) => void) | undefined {
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

/** A failed backup's record: the reason in the tool's words, the error's class and the exit code the run ends with. */
function failedRecord(ctx: Pick<RunContext, "clock">, reason: string, error: unknown): RecordOf<"backup.failed"> {
  const failed: RecordOf<"backup.failed"> = { type: "backup.failed", at: ctx.clock.now(), reason };
  if (error instanceof McopsError) return { ...failed, kind: error.name, exitCode: error.exitCode };
  return error instanceof Error ? { ...failed, kind: error.name } : failed;
}
