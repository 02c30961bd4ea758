import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { BusyError, ConfigError, JobError, UsageError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import {
  COLOURS,
  createPanelClient,
  gameState,
  type HttpClient,
  type Notifier,
  type PanelClient,
  stopGame,
  toolNotifier,
} from "@mcops/core/http";
import { acquireLock, type Lock, pauseBackups } from "@mcops/core/lock";
import { type Logger, toolLogger, type Writer } from "@mcops/core/log";
import { LOG_FILES } from "@mcops/core/log-events";
import { backupLockFile } from "@mcops/core/paths";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import type { Settings as BackupSettings } from "@mcops/world/settings";
import { type SafetySnapshot, safetySnapshot } from "@mcops/world/snapshot";
import type { SavedBy } from "@mcops/world/world";
import { type Downloaded, downloadVerified, installedDigest } from "./download.ts";
import { installJar, JAR, type Owner, PREVIOUS, removeStaleTemps, WORK_PREFIX } from "./install.ts";
import { forgetKept } from "./install-tree.ts";
import { jarVersion } from "./jar-version.ts";
import { type ImagePlan, shortImage, switchImage } from "./java.ts";
import { type Artifact, LABELS } from "./sources.ts";
import {
  dataVersionOf,
  ignoredWorldVersion,
  type JarRecord,
  readHistory,
  recordedAs,
  recordOf,
  refuseDowngrade,
  worldSaver,
  writeHistory,
} from "./versions.ts";

/** What any install into the volume takes (a jar here, a loader in loader-install.ts). */
export interface InstallJob {
  /** The server's image against the Java the install needs (java.ts planImage); undefined: not compared. */
  image?: ImagePlan | undefined;
  /** What is installed, in words: "Paper 1.21.4 build 231". */
  what: string;
  /** The server's volume (WORLD_DIR). */
  dir: string;
  /** The panel, and the owner server.jar is given to (default 988:988). */
  control: { url: string; key: string; serverId: string; owner: Owner };
  http: HttpClient;
  retryDelayMs: number;
  /** --stop: a running server is stopped for the swap and started again. */
  stop: boolean;
  /** backup's settings for the pre-upgrade snapshot; undefined with --no-backup. */
  backup: BackupSettings | undefined;
  /** --ignore-world-version: level.dat's version is not checked (said in the log). */
  ignoreWorldVersion: boolean;
  lockWaitMs: number;
  stateTimeoutMs: number;
}

/** A jar to put in place of server.jar, and what it takes to do so. */
interface Replacement extends InstallJob {
  artifact: Artifact;
}

type Ctx = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal" | "atExit">;

/** One replacement under way: what it works on, and how it reports. */
interface Run {
  ctx: Ctx;
  job: Replacement;
  jar: string;
  logger: Logger;
  notifier: Notifier;
  volume: VolumeDir;
  work: WorkDir;
}

/**
 * Downloads, verifies and installs the jar in the volume, the server stopped and started again around the swap when
 * --stop allows it. One jar-download at a time; the download's private directory is removed on every way out.
 */
export async function replaceJar(ctx: Ctx, job: Replacement): Promise<number> {
  const { logger, notifier, lock, volume } = await beginJob(ctx, job.dir);
  const work = workDir(volume);
  process.once("exit", work.remove);
  const run: Run = { ctx, job, jar: join(job.dir, JAR), logger, notifier, volume, work };
  try {
    const installed = await replaceIn(run);
    // Not awaited, as always: the locks are released and the private directory removed while the message is posted.
    return installed ? report(run, installed) : 0;
  } finally {
    work.remove();
    process.off("exit", work.remove);
    volume.close();
    lock.release();
  }
}

/** What every change to server.jar begins with: the volume there, the log, the channel, the jar-download lock. */
export async function beginJob(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stderr">,
  dir: string,
): Promise<{ logger: Logger; notifier: Notifier; lock: Lock; volume: VolumeDir }> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ConfigError("the server's volume does not exist", {
      where: `WORLD_DIR=${dir}`,
      hint: "set WORLD_DIR (or --dir) to {volumes_dir}/<server uuid>",
    });
  }
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: LOG_FILES["jar-download"],
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  // Read now, before anything is done: a webhook.env that is refused (exit 78) must stop the run, not follow it.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await acquireLock(join(ctx.paths.runDir, "jar-download.lock"), {
    tool: "jar-download",
    what: "another jar-download",
    clock: ctx.clock,
  });
  return { logger, notifier, lock, volume: VolumeDir.open(dir) };
}

interface WorkDir {
  /** Removes what an earlier run left, then makes the private directory the download goes to. */
  make(): VolumeDir;
  /** Removes the private directory, if there is one (also on the way out of the process). */
  remove(): void;
}

export function workDir(volume: VolumeDir): WorkDir {
  let work: VolumeDir | undefined;
  return {
    make() {
      removeStaleTemps(volume);
      work = volume.makePrivateDir(WORK_PREFIX);
      return work;
    },
    remove() {
      try {
        if (work) volume.removePrivateDir(work);
      } catch {
        // Left for the next run's removeStaleTemps.
      }
      work?.close();
      work = undefined;
    },
  };
}

function refuse(run: Run, state: string): BusyError {
  return new BusyError(`the server is ${state}; its jar cannot be replaced under it`, {
    where: `server ${run.job.control.serverId}`,
    hint: "stop it first, or pass --stop to stop it, replace the jar and start it again",
  });
}

/** A jar put in place: what the report says. */
interface Installed {
  /** The old jar was kept as server.jar.previous. */
  previous: boolean;
  restarted: boolean;
  downloaded: Downloaded;
  /** The new jar's data version, from minecraft-data or its own version.json. */
  dataVersion: number | undefined;
  owner: Owner;
  /** The snapshot taken before the swap. */
  pre: SafetySnapshot | undefined;
  /** What the history knew of the jar that was in place (now server.jar.previous). */
  replaced: JarRecord | undefined;
  /** The image switch made with the swap. */
  switched: { from: string; to: string } | undefined;
}

/** The jar in place (undefined: it was there already, and that is said). */
async function replaceIn(run: Run): Promise<Installed | undefined> {
  const { ctx, job, jar, logger } = run;
  const { artifact, control, what } = job;
  if (
    artifact.checksum &&
    (await installedDigest(run.volume, JAR, artifact.checksum.algorithm, artifact.size)) === artifact.checksum.hex
  ) {
    logger.info(`${what} is already installed (${jar}): nothing to do`);
    ctx.stdout.write(`${what} is already installed in ${jar}.\n`);
    return undefined;
  }
  sayImagePlan(run);
  const panel = createPanelClient({ url: control.url, key: control.key, serverId: control.serverId, clock: ctx.clock });
  // The game's own answer, not the panel's cached state (core's gameState): a server started from Discord a moment
  // ago is still "offline" in the panel's /resources for up to 20 s.
  const game = { clock: ctx.clock, logger, signal: ctx.signal };
  const before = (await gameState(panel, game)).state;
  if (before !== "offline" && !job.stop) throw refuse(run, before);

  if (job.ignoreWorldVersion) logger.warn(await ignoredWorldVersion(run.volume));
  const { work, downloaded } = await download(run);
  const dataVersion = await checkDownloaded(run, work);
  const owner = control.owner;
  // Asked again once no backup can begin: the server may have been started or stopped during the download.
  const backups = await pauseBackupsFor(run);
  try {
    const now = (await gameState(panel, game)).state;
    if (now === "offline") {
      const pre = await preUpgrade(run);
      const replaced = await replacedRecord(run);
      const { previous, switched } = await swapWithImage(run, panel, work, owner);
      const installed = { previous, restarted: false, downloaded, dataVersion, owner, pre, replaced, switched };
      recordHistory(run, installed);
      return installed;
    }
    if (!job.stop) throw refuse(run, now);
    return await swapStopped(run, panel, now, { work, downloaded, dataVersion, owner });
  } finally {
    backups.release();
  }
}

/**
 * The downloaded jar's data version: minecraft-data's for the version; for a version it does not know (newer than this
 * build of mcops), the jar's own version.json's, and a jar older than the world is refused there, before the server is
 * touched.
 */
async function checkDownloaded(run: Run, work: VolumeDir): Promise<number | undefined> {
  const { job, logger } = run;
  const known = dataVersionOf(job.artifact.version);
  if (known !== undefined) return known;
  const own = await jarVersion(work, JAR);
  if (!own) {
    logger.warn(`${job.what} is a version mcops does not know and the jar does not say its data version`);
    return undefined;
  }
  logger.info(`${job.what} says it is ${own.id}, data version ${own.dataVersion} (its version.json)`);
  refuseDowngrade(await worldOf(run), own.dataVersion, job.what);
  return own.dataVersion;
}

/** Who last saved the world, for the downgrade check; undefined (not checked) with --ignore-world-version. */
async function worldOf(run: Run): Promise<SavedBy | undefined> {
  return run.job.ignoreWorldVersion ? undefined : await worldSaver(run.volume);
}

/** The download, written and verified where the game's user cannot reach it (then renamed into place). */
async function download(run: Run): Promise<{ work: VolumeDir; downloaded: Downloaded }> {
  const { ctx, job, logger } = run;
  const { artifact } = job;
  const work = run.work.make();
  logger.info(`downloading ${job.what}: ${artifact.fileName} from ${artifact.url}`);
  const started = ctx.clock.now();
  const progress = progressLine(ctx.stderr, ctx.clock, artifact.fileName);
  let downloaded: Downloaded;
  try {
    downloaded = await downloadVerified(artifact, work.at(JAR), {
      http: job.http,
      clock: ctx.clock,
      retryDelayMs: job.retryDelayMs,
      onProgress: progress.update,
      onRetry: (reason, attempt) => {
        progress.done();
        logger.warn(`download attempt ${attempt} failed (${reason}); trying again`);
      },
    });
  } finally {
    progress.done();
  }
  logger.info(
    `downloaded ${formatBytes(downloaded.size)} in ${formatDuration(ctx.clock.now() - started)}; ${artifact.checksum ? `${downloaded.algorithm} verified` : `size verified (${LABELS[artifact.type]} publishes no checksum)`}`,
  );
  return { work, downloaded };
}

/** --stop (no backup meanwhile: the caller paused them): stop the game, swap the jar, start it and wait until it runs. */
async function swapStopped(
  run: Run,
  panel: PanelClient,
  state: string,
  swap: { work: VolumeDir; downloaded: Downloaded; dataVersion: number | undefined; owner: Owner },
): Promise<Installed> {
  const { ctx, job, logger } = run;
  logger.info(`stopping the server to replace its jar (it was ${state})`);
  await stopGame(panel, { clock: ctx.clock, logger, signal: ctx.signal, timeoutMs: job.stateTimeoutMs });
  let pre: SafetySnapshot | undefined;
  try {
    // The server saved the world as it stopped: the world as it is now is what the new jar must be able to open.
    refuseDowngrade(await worldOf(run), swap.dataVersion, job.what);
    pre = await preUpgrade(run);
  } catch (error) {
    // No check passed or no snapshot, no upgrade: the server goes back to work with the jar it had.
    const running = await startBack(panel, job.stateTimeoutMs);
    const again = running
      ? "the server was started again with its old jar"
      : "the server did not start again: look at the panel console";
    if (error instanceof UsageError) {
      throw new UsageError(`${error.message}; nothing was replaced`, { hint: `${again}; ${error.hint}` });
    }
    throw new JobError(`the pre-upgrade snapshot failed, nothing was replaced: ${(error as Error).message}`, {
      hint: `${again}; fix the backup, or install without one: --no-backup`,
      cause: error,
    });
  }
  const replaced = await replacedRecord(run);
  let previous: boolean;
  let switched: Installed["switched"];
  try {
    ({ previous, switched } = await swapWithImage(run, panel, swap.work, swap.owner));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The panel refused the image: nothing was swapped, the server goes back to work as it was.
    const again = (await startBack(panel, job.stateTimeoutMs))
      ? "the server was started again with its old jar"
      : "the server did not start again: look at the panel console";
    throw new UsageError(`${error.message}; nothing was replaced`, {
      where: error.where,
      hint: `${again}; ${error.hint}`,
    });
  }
  const { downloaded, dataVersion, owner } = swap;
  const installed = { previous, restarted: true, downloaded, dataVersion, owner, pre, replaced, switched };
  // Recorded before the start: a server that does not come up is still running this jar (--rollback needs to know).
  recordHistory(run, installed);
  await startAgain(run, panel, previous);
  return installed;
}

/** The image plan in the log: the switch to come, or why the image was not compared. */
function sayImagePlan(run: Run): void {
  const plan = run.job.image;
  if (plan?.kind === "switch") {
    run.logger.info(
      `${run.job.what} needs Java ${plan.need}; the server's image ${shortImage(plan.from)} has Java ${plan.had}: it is switched to ${shortImage(plan.to.image)} (${plan.to.name}) with the swap`,
    );
  } else if (plan?.unchecked) {
    run.logger.warn(`the server's image is not compared with the Java ${run.job.what} needs: ${plan.unchecked}`);
  }
}

/**
 * The swap, the server stopped: the image first (a refusal is exit 2 with nothing swapped), then the jar; a jar that
 * cannot be put in place gets the old image back.
 */
async function swapWithImage(
  run: Run,
  panel: PanelClient,
  work: VolumeDir,
  owner: Owner,
): Promise<{ previous: boolean; switched: Installed["switched"] }> {
  const plan = run.job.image;
  if (plan?.kind !== "switch") return { ...installJar(work, run.volume, owner), switched: undefined };
  await switchImage(panel, plan.to.image);
  try {
    const { previous } = installJar(work, run.volume, owner);
    return { previous, switched: { from: plan.from, to: plan.to.image } };
  } catch (error) {
    await panel.setDockerImage(plan.from).catch(() => {
      run.logger.error(`the image could not be switched back to ${plan.from}: set it on the server's Startup tab`);
    });
    throw error;
  }
}

/** No backup while the server is down or its jar is swapped: waits for a running one first. */
export function pauseBackupsFor(run: {
  ctx: Pick<ToolContext, "paths" | "clock">;
  logger: Logger;
  job: { lockWaitMs: number };
}) {
  const { ctx, job, logger } = run;
  return pauseBackups(backupLockFile(ctx.paths), {
    tool: "jar-download",
    waitMs: job.lockWaitMs,
    clock: ctx.clock,
    onWait: (busy) => logger.info(`${busy.message}: waiting for it before stopping the server`),
  });
}

/** The pre-upgrade snapshot of the world, the server stopped (none with --no-backup). */
export async function preUpgrade(run: {
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "runner" | "signal" | "stderr" | "atExit">;
  job: { backup: BackupSettings | undefined };
  logger: Logger;
  volume: VolumeDir;
}): Promise<SafetySnapshot | undefined> {
  const { ctx, job, logger } = run;
  if (!job.backup) return undefined;
  return safetySnapshot(ctx, { settings: job.backup, logger, volume: run.volume, tag: "pre-upgrade" });
}

/** What the history says of the jar in place, if it is still that jar. */
async function replacedRecord(run: Run): Promise<JarRecord | undefined> {
  return recordedAs(run.volume, JAR, readHistory(run.ctx.paths, run.job.dir)?.installed);
}

/** What --rollback will need: the jar now in place, the one kept as server.jar.previous, the pre-upgrade snapshot. */
function recordHistory(run: Run, done: Installed): void {
  const { job } = run;
  const before = readHistory(run.ctx.paths, job.dir);
  writeHistory(run.ctx.paths, job.dir, {
    installed: recordOf(job.artifact, job.what, done.downloaded, done.dataVersion),
    previous: done.previous ? done.replaced : undefined,
    preUpgrade: done.pre?.shortId,
    ...(done.switched ? { image: done.switched.to, previousImage: done.switched.from } : {}),
  });
  // A loader installed before this jar can no longer be rolled back: what it kept aside goes.
  if (before?.loader) forgetKept(run.volume, before.loader);
}

/** Starts a stopped server again and waits until it runs; false when it does not (said by the caller). */
export async function startBack(panel: PanelClient, timeoutMs: number): Promise<boolean> {
  try {
    await panel.power("start");
    await panel.waitForState("running", { timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** Starts the server with the new jar; one that does not come up is logged, posted and thrown with the way back. */
async function startAgain(run: Run, panel: PanelClient, previous: boolean): Promise<void> {
  const { job, logger } = run;
  logger.info("starting the server again");
  try {
    await panel.power("start");
    await panel.waitForState("running", { timeoutMs: job.stateTimeoutMs });
  } catch (failure) {
    const reason = (failure as Error).message;
    logger.error(`the server did not start with the new jar: ${reason}`);
    await run.notifier.send({
      title: "Server did not start",
      description: `${job.what} was installed, but the server is not running: ${reason}`,
      colour: COLOURS.error,
      category: "restart",
    });
    throw new JobError(`${job.what} was installed, but the server did not start: ${reason}`, {
      hint: previous
        ? "look at the panel console; to go back to the jar before it: jar-download --rollback"
        : "look at the panel console and the server's latest.log",
    });
  }
}

/** The log line, the line on stdout and the message of a jar installed. */
async function report(run: Run, done: Installed): Promise<number> {
  const { job, jar } = run;
  const kept = done.previous ? `; the old jar is ${PREVIOUS}` : "";
  const image = done.switched
    ? `; Java image switched to ${shortImage(done.switched.to)} (was ${shortImage(done.switched.from)})`
    : "";
  run.logger.info(`installed ${job.what} as ${jar} (${done.owner.uid}:${done.owner.gid})${kept}${image}`);
  run.ctx.stdout.write(
    `Installed ${job.what} as ${jar} (${formatBytes(done.downloaded.size)}, ${job.artifact.checksum ? `${job.artifact.checksum.algorithm} verified` : "size verified"})${kept}${image}.${done.pre ? ` The world before it is snapshot ${done.pre.shortId} (pre-upgrade).` : ""}${done.restarted ? " The server was restarted with it." : ""}\n`,
  );
  const snapshot = done.pre
    ? `\nThe world before it is snapshot ${done.pre.shortId} (pre-upgrade); to go back: jar-download --rollback, then backup restore --tag pre-upgrade if the new version saved the world.`
    : "";
  await run.notifier.send({
    title: done.restarted ? "Server upgraded" : "Server jar updated",
    description: `${job.what} installed${image}${done.restarted ? "; the server was restarted with it" : "; it is used from the next start"}.${snapshot}`,
    colour: COLOURS.success,
    category: "restart",
  });
  return 0;
}

/** `paper-1.21.4-231.jar  12.3 MiB / 50.1 MiB  24%` on a terminal, redrawn at most 10 times a second. */
function progressLine(stderr: Writer & { isTTY?: boolean }, clock: Clock, name: string) {
  let last = 0;
  let shown = false;
  return {
    update(done: number, total: number | undefined): void {
      if (!stderr.isTTY) return;
      const now = clock.now();
      if (now - last < 100 && done !== total) return;
      last = now;
      shown = true;
      const of = total ? ` / ${formatBytes(total)}  ${Math.floor((done / total) * 100)}%` : "";
      stderr.write(`\r\x1b[2K${name}  ${formatBytes(done)}${of}`);
    },
    done(): void {
      if (shown) stderr.write("\n");
      shown = false;
    },
  };
}
