import { join } from "node:path";
import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, type PanelClient, PanelError, toolNotifier } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { VolumeDir } from "@mcops/core/volume";
import { resticFor, takeBackupLock } from "./backup.ts";
import type { Snapshot } from "./restic.ts";
import { type BackupContext, backupLogger, loadSettings, panelFor, type SettingFlags } from "./settings.ts";
import { levelName } from "./world.ts";

export interface RestoreOptions extends SettingFlags {
  /** A snapshot id (short or full) or "latest". */
  snapshot: string;
  dryRun?: boolean | undefined;
  /** Leave the server stopped afterwards. */
  noStart?: boolean | undefined;
  wait?: boolean | undefined;
  /** How long the server may take to stop or start. */
  serverTimeoutMs?: number | undefined;
}

/** `2026-11-21T06-00-00Z`: a timestamp that is safe in a directory name. */
function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}

/** `2026-11-21 06:00:01 UTC` from restic's nanosecond ISO time. */
export function snapshotTime(snapshot: Snapshot): string {
  return `${snapshot.time
    .replace(/\.\d+/, "")
    .replace("T", " ")
    .replace(/(Z|[+-]\d\d:\d\d)$/, "")} UTC`;
}

function pickSnapshot(snapshots: Snapshot[], wanted: string, tags: string[]): Snapshot {
  if (wanted === "latest") {
    const ours = snapshots.filter((s) => tags.every((t) => s.tags?.includes(t)));
    const latest = ours.sort((a, b) => Date.parse(b.time) - Date.parse(a.time))[0];
    if (!latest)
      throw new JobError("the repository has no snapshot of this server yet", { hint: "run a backup first" });
    return latest;
  }
  const matches = snapshots.filter((s) => s.id.startsWith(wanted) || s.short_id === wanted);
  if (matches.length === 0)
    throw new JobError(`there is no snapshot ${wanted}`, { hint: "list them with: backup snapshots" });
  if (matches.length > 1)
    throw new JobError(`"${wanted}" names ${matches.length} snapshots`, { hint: "give more of the id" });
  return matches[0] as Snapshot;
}

/**
 * Restores a snapshot over the world (docs/system.md 4.5's procedure, made safe): stop the server and wait for it; restore into a
 * private staging directory inside WORLD_DIR (same filesystem, so every later move is an atomic rename); check the
 * restored world has its level.dat; chown it there; move the current world directories aside into a private
 * .mcops-pre-restore-<time>-<random>/ (nothing is deleted); move the restored ones in; start the server. A failure at
 * any step puts the original world back.
 *
 * The volume is the game's: every step goes through descriptors (core's volume.ts). The staging and aside directories
 * are made by an exclusive mkdir under unpredictable names, mode 700, so the game's user can neither enter them nor
 * redirect them; restic writes into the staging directory through this process's descriptor of it; the restored tree is
 * chowned while still inside it, before the game's user can touch it; level-name must be one folder name.
 */
export async function runRestore(ctx: BackupContext, options: RestoreOptions): Promise<number> {
  const settings = loadSettings(ctx, options);
  const logger = backupLogger(ctx);
  const worldDir = settings.WORLD_DIR;
  const volume = VolumeDir.open(worldDir);
  try {
    return await restoreInto(ctx, options, settings, logger, volume);
  } finally {
    volume.close();
  }
}

async function restoreInto(
  ctx: BackupContext,
  options: RestoreOptions,
  settings: ReturnType<typeof loadSettings>,
  logger: Logger,
  volume: VolumeDir,
): Promise<number> {
  const worldDir = settings.WORLD_DIR;
  const level = levelName(volume);
  const names = [level, `${level}_nether`, `${level}_the_end`];
  const restic = resticFor(ctx, settings, logger);
  const serverTimeoutMs = options.serverTimeoutMs ?? 5 * 60_000;

  const snapshot = pickSnapshot(await restic.snapshots(), options.snapshot, settings.tags);
  const inSnapshot = names.filter((name) => snapshot.paths.includes(join(worldDir, name)));
  if (!inSnapshot.includes(level)) {
    throw new JobError(`snapshot ${snapshot.short_id} does not hold the world "${level}" of ${worldDir}`, {
      hint: `it holds ${snapshot.paths.join(", ")}; pick another with: backup snapshots`,
    });
  }
  const now = ctx.clock.now();
  const stagingPrefix = `.mcops-restore-${stamp(now)}-`;
  const asidePrefix = `.mcops-pre-restore-${stamp(now)}-`;
  const { uid, gid } = settings.owner;
  const present = names.filter((n) => volume.lstat(n) !== undefined);
  const plan = [
    "stop the server through the panel and wait until it is offline",
    `restore snapshot ${snapshot.short_id} (${snapshotTime(snapshot)}, ${snapshot.hostname}) into a new private ${join(worldDir, `${stagingPrefix}XXXXXX`)}`,
    `check that ${level}/level.dat came back, and chown it to ${uid}:${gid} there`,
    `move the current ${present.join(", ") || "(nothing)"} into a new private ${join(worldDir, `${asidePrefix}XXXXXX`)}`,
    `move the restored ${inSnapshot.join(", ")} into ${worldDir}`,
    options.noStart ? "leave the server stopped (--no-start)" : "start the server",
  ];
  if (options.dryRun) {
    ctx.stdout.write(
      `Restore plan (nothing done, --dry-run):\n${plan.map((step, i) => `  ${i + 1}. ${step}\n`).join("")}`,
    );
    return 0;
  }

  // docs/contract.md: a webhook.env others can read is refused (78) before anything is done.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await takeBackupLock(ctx, "backup restore", options.wait ?? false);
  const panel: PanelClient = panelFor(settings, ctx);
  const work: RestoreWork = { volume, moved: [], placed: [] };
  let stoppedByUs = false;
  logger.info(`=== Restore started === snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}`);
  try {
    await notifier.send({
      title: "Restore started",
      description: `Restoring snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}; the server stops for it.`,
      colour: COLOURS.warning,
      category: "backup",
    });
    const state = (await panel.resources()).state;
    if (state !== "offline") {
      logger.info(`stopping the server (it is ${state})`);
      if (state !== "stopping") await panel.power("stop");
      stoppedByUs = true;
      await panel.waitForState("offline", { timeoutMs: serverTimeoutMs, pollMs: 2000, signal: ctx.signal });
      logger.info("the server is offline");
    }

    const staging = volume.makePrivateDir(stagingPrefix);
    work.staging = staging;
    // restic writes through this process's descriptor of the staging directory: renaming it, or putting a link in its
    // place, changes nothing for restic.
    await restic.restore(
      snapshot.id,
      staging.forChild,
      inSnapshot.map((name) => join(worldDir, name)),
    );
    const restored = staging.dir(worldDir.replace(/^\/+/, ""));
    work.restored = restored;
    if (!restored.lstat(`${level}/level.dat`)?.isFile()) {
      throw new JobError(`the restored world has no ${level}/level.dat`, {
        hint: "the snapshot may be incomplete; try an older one",
      });
    }
    logger.info(`snapshot ${snapshot.short_id} restored into ${staging.path}; level.dat is there`);
    // Chowned while only root can reach it: once in the volume, the game's user could put links in the tree.
    for (const name of inSnapshot) restored.chownTree(name, uid, gid);

    const aside = volume.makePrivateDir(asidePrefix);
    work.aside = aside;
    for (const name of names) {
      if (!volume.lstat(name)) continue;
      volume.rename(name, aside);
      work.moved.push(name);
    }
    for (const name of inSnapshot) {
      restored.rename(name, volume);
      work.placed.push(name);
    }
    volume.sync();
    volume.removePrivateDir(staging);
    logger.info(`world restored; the previous one is kept in ${aside.path}`);

    const started = options.noStart
      ? "left stopped (--no-start)"
      : await startAfterRestore(panel, logger, serverTimeoutMs, ctx.signal);
    const took = formatDuration(ctx.clock.now() - now);
    logger.info(`=== Restore done === snapshot ${snapshot.short_id} in ${took}; ${started}`);
    await notifier.send({
      title: "Restore completed",
      description: `Snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)} is back (${took}); ${started}.\nThe previous world is kept in ${aside.path}.`,
      colour: COLOURS.success,
      category: "backup",
    });
    return 0;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const undo = rollBack(work);
    logger.error(`=== Restore failed === ${reason}; ${undo}`, { echo: false });
    let restart = "";
    if (stoppedByUs && !options.noStart) {
      try {
        await panel.power("start");
        restart = " The server was started again.";
      } catch (startError) {
        restart = ` The server could not be started again (${startError instanceof PanelError ? startError.message : startError}).`;
      }
    }
    await notifier.send({
      title: "Restore failed",
      description: `${reason}\n${undo}.${restart}`,
      colour: COLOURS.error,
      category: "backup",
      // The reason can hold names from the server volume: shown literally, never as Markdown.
      fromGame: true,
    });
    throw new JobError(`restore failed: ${reason}; ${undo}`, { hint: `see ${settings.logFile}`, cause: error });
  } finally {
    work.restored?.close();
    work.staging?.close();
    work.aside?.close();
    lock.release();
  }
}

/** What a restore has done so far, for putting it back. */
interface RestoreWork {
  volume: VolumeDir;
  staging?: VolumeDir;
  /** The restored copy of WORLD_DIR inside the staging directory. */
  restored?: VolumeDir;
  aside?: VolumeDir;
  moved: string[];
  placed: string[];
}

/** Puts the original world back after a failure; says what it did. */
function rollBack(work: RestoreWork): string {
  const { volume, staging, aside, moved, placed } = work;
  try {
    for (const name of placed) volume.rename(name, work.restored as VolumeDir);
    for (const name of moved) (aside as VolumeDir).rename(name, volume);
    if (staging) volume.removePrivateDir(staging);
    if (aside && aside.list().length === 0) volume.removePrivateDir(aside);
    return moved.length ? "the original world was put back" : "the original world was not touched";
  } catch (error) {
    return `putting the original world back failed (${(error as Error).message}): it is in ${aside?.path}`;
  }
}

/**
 * The restore is done when this runs: a server that will not start (the panel refuses, or it does not come up in
 * time) is said in the log and the message, never a reason to undo the restore.
 */
async function startAfterRestore(
  panel: PanelClient,
  logger: Logger,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  const warn = (text: string): string => {
    logger.warn(text);
    return text;
  };
  try {
    await panel.power("start");
  } catch (error) {
    return warn(`the server could not be started (${(error as Error).message}); start it from the panel`);
  }
  try {
    await panel.waitForState("running", { timeoutMs, pollMs: 2000, signal });
    return "server running again";
  } catch (error) {
    return warn(`server start requested, not running yet (${(error as Error).message})`);
  }
}
