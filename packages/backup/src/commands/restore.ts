import { join } from "node:path";
import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, type Notifier, type PanelClient, PanelError, toolNotifier } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import { backupLogger, panelFor, pickSnapshot, resticFor, snapshotTime, stamp, takeBackupLock } from "../job.ts";
import type { Restic, Snapshot } from "../restic.ts";
import { loadSettings, type Settings } from "../settings.ts";
import { levelName } from "../world.ts";

type RestoreContext = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">;

export interface RestoreOptions {
  /** A snapshot id (short or full) or "latest". */
  snapshot: string;
  dryRun?: boolean | undefined;
  /** Leave the server stopped afterwards. */
  noStart?: boolean | undefined;
  wait?: boolean | undefined;
  /** How long the server may take to stop or start. */
  serverTimeoutMs?: number | undefined;
  /** The parsed command line: --owner wins over BACKUP_OWNER. */
  args?: Record<string, unknown> | undefined;
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
export async function runRestore(ctx: RestoreContext, options: RestoreOptions): Promise<number> {
  const settings = loadSettings(ctx, options.args);
  const logger = backupLogger(ctx);
  const volume = VolumeDir.open(settings.WORLD_DIR);
  try {
    const plan = await planRestore(ctx, options, settings, resticFor(ctx, settings, logger), volume);
    if (options.dryRun) {
      ctx.stdout.write(
        `Restore plan (nothing done, --dry-run):\n${plan.steps.map((step, i) => `  ${i + 1}. ${step}\n`).join("")}`,
      );
      return 0;
    }
    return await restore(ctx, options, settings, logger, plan);
  } finally {
    volume.close();
  }
}

/** Which snapshot, which of the world's directories it brings back, and where the steps put things. */
interface RestorePlan {
  volume: VolumeDir;
  restic: Restic;
  snapshot: Snapshot;
  level: string;
  /** The world's directories: the level's, its _nether and its _the_end. */
  names: string[];
  /** Those the snapshot holds. */
  inSnapshot: string[];
  /** When the restore began. */
  now: number;
  stagingPrefix: string;
  asidePrefix: string;
  serverTimeoutMs: number;
  /** The plan in words, for --dry-run. */
  steps: string[];
}

async function planRestore(
  ctx: Pick<ToolContext, "clock">,
  options: RestoreOptions,
  settings: Settings,
  restic: Restic,
  volume: VolumeDir,
): Promise<RestorePlan> {
  const worldDir = settings.WORLD_DIR;
  const level = levelName(volume);
  const names = [level, `${level}_nether`, `${level}_the_end`];
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
  const steps = [
    "stop the server through the panel and wait until it is offline",
    `restore snapshot ${snapshot.short_id} (${snapshotTime(snapshot)}, ${snapshot.hostname}) into a new private ${join(worldDir, `${stagingPrefix}XXXXXX`)}`,
    `check that ${level}/level.dat came back, and chown it to ${uid}:${gid} there`,
    `move the current ${present.join(", ") || "(nothing)"} into a new private ${join(worldDir, `${asidePrefix}XXXXXX`)}`,
    `move the restored ${inSnapshot.join(", ")} into ${worldDir}`,
    options.noStart ? "leave the server stopped (--no-start)" : "start the server",
  ];
  const serverTimeoutMs = options.serverTimeoutMs ?? 5 * 60_000;
  return {
    volume,
    restic,
    snapshot,
    level,
    names,
    inSnapshot,
    now,
    stagingPrefix,
    asidePrefix,
    serverTimeoutMs,
    steps,
  };
}

/** The restore itself, under the backup lock: a failure at any step puts the original world back. */
async function restore(
  ctx: RestoreContext,
  options: RestoreOptions,
  settings: Settings,
  logger: Logger,
  plan: RestorePlan,
): Promise<number> {
  const { snapshot } = plan;
  // docs/contract.md: a webhook.env others can read is refused (78) before anything is done.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await takeBackupLock(ctx, "backup restore", options.wait ?? false);
  const panel: PanelClient = panelFor(settings, ctx);
  const work: RestoreWork = { volume: plan.volume, moved: [], placed: [], stoppedByUs: false };
  logger.info(`=== Restore started === snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}`);
  try {
    await notifier.send({
      title: "Restore started",
      description: `Restoring snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}; the server stops for it.`,
      colour: COLOURS.warning,
      category: "backup",
    });
    await stopServer(panel, logger, work, plan.serverTimeoutMs, ctx.signal);
    const staged = await restoreToStaging(plan, settings, logger, work);
    const aside = swapIn(plan, staged, logger, work);
    const started = options.noStart
      ? "left stopped (--no-start)"
      : await startAfterRestore(panel, logger, plan.serverTimeoutMs, ctx.signal);
    const took = formatDuration(ctx.clock.now() - plan.now);
    logger.info(`=== Restore done === snapshot ${snapshot.short_id} in ${took}; ${started}`);
    await notifier.send({
      title: "Restore completed",
      description: `Snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)} is back (${took}); ${started}.\nThe previous world is kept in ${aside.path}.`,
      colour: COLOURS.success,
      category: "backup",
    });
    return 0;
  } catch (error) {
    throw await reportRestoreFailed({ options, settings, logger, notifier, panel, work }, error);
  } finally {
    work.restored?.close();
    work.staging?.close();
    work.aside?.close();
    lock.release();
  }
}

/** Stops the server through the panel, unless it is offline already, and waits until it is. */
async function stopServer(
  panel: PanelClient,
  logger: Logger,
  work: RestoreWork,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const state = (await panel.resources()).state;
  if (state === "offline") return;
  logger.info(`stopping the server (it is ${state})`);
  if (state !== "stopping") await panel.power("stop");
  work.stoppedByUs = true;
  await panel.waitForState("offline", { timeoutMs, pollMs: 2000, signal });
  logger.info("the server is offline");
}

/** The private staging directory, and the restored copy of WORLD_DIR inside it. */
interface Staged {
  staging: VolumeDir;
  restored: VolumeDir;
}

/** restic restores the snapshot into a new private staging directory; the world there must have its level.dat. */
async function restoreToStaging(
  plan: RestorePlan,
  settings: Settings,
  logger: Logger,
  work: RestoreWork,
): Promise<Staged> {
  const { volume, level, snapshot, inSnapshot } = plan;
  const worldDir = settings.WORLD_DIR;
  const staging = volume.makePrivateDir(plan.stagingPrefix);
  work.staging = staging;
  // restic writes through this process's descriptor of the staging directory: renaming it, or putting a link in its
  // place, changes nothing for restic.
  await plan.restic.restore(
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
  const { uid, gid } = settings.owner;
  for (const name of inSnapshot) restored.chownTree(name, uid, gid);
  return { staging, restored };
}

/** The current world into a new private aside directory, the restored one into its place; returns the aside one. */
function swapIn(plan: RestorePlan, { staging, restored }: Staged, logger: Logger, work: RestoreWork): VolumeDir {
  const { volume } = plan;
  const aside = volume.makePrivateDir(plan.asidePrefix);
  work.aside = aside;
  for (const name of plan.names) {
    if (!volume.lstat(name)) continue;
    volume.rename(name, aside);
    work.moved.push(name);
  }
  for (const name of plan.inSnapshot) {
    restored.rename(name, volume);
    work.placed.push(name);
  }
  volume.sync();
  volume.removePrivateDir(staging);
  logger.info(`world restored; the previous one is kept in ${aside.path}`);
  return aside;
}

/** Puts the original world back, starts the server again if the restore stopped it, says so; returns what to throw. */
async function reportRestoreFailed(
  run: {
    options: RestoreOptions;
    settings: Settings;
    logger: Logger;
    notifier: Notifier;
    panel: PanelClient;
    work: RestoreWork;
  },
  error: unknown,
): Promise<JobError> {
  const { options, settings, logger, notifier, panel, work } = run;
  const reason = error instanceof Error ? error.message : String(error);
  const undo = rollBack(work);
  logger.error(`=== Restore failed === ${reason}; ${undo}`, { echo: false });
  let restart = "";
  if (work.stoppedByUs && !options.noStart) {
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
  return new JobError(`restore failed: ${reason}; ${undo}`, { hint: `see ${settings.logFile}`, cause: error });
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
  /** The restore stopped the server (so a failure starts it again). */
  stoppedByUs: boolean;
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
