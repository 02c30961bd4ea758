import { closeSync, constants, openSync } from "node:fs";
import { BusyError, JobError, UsageError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { COLOURS, createPanelClient, gameState, type PanelClient, stopGame } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import { setOwnerAndMode, type VolumeDir } from "@mcops/core/volume";
import type { SafetySnapshot } from "@mcops/world/snapshot";
import { INSTALLER_MEMORY_BYTES, runInstaller } from "./container.ts";
import { downloadVerified, installedDigest } from "./download.ts";
import { INSTALL_DIR, JAR, type Owner, PACK_DIR } from "./install.ts";
import {
  checkTree,
  forgetKept,
  KEEP_PREFIX,
  loaderLayout,
  moveInto,
  prepareLegacyForgeOutput,
  prepareLoaderOutput,
  prepareQuiltOutput,
  UNIX_ARGS,
} from "./install-tree.ts";
import { shortImage, switchImage } from "./java.ts";
import { type InstallerArtifact, isLegacyForge, LOADER_LABELS } from "./loaders.ts";
import { type ModPack, type MrpackZip, stagePack } from "./mrpack.ts";
import { beginJob, type InstallJob, pauseBackupsFor, preUpgrade, startBack, workDir } from "./replace.ts";
import type { Artifact } from "./sources.ts";
import { dataVersionOf, readHistory, refuseDowngrade, worldSaver, writeHistory } from "./versions.ts";

/**
 * What puts a loader in place: its own installer run in the server's image (Forge, NeoForge, Quilt), or a launcher jar that
 * becomes server.jar (Fabric, for a Fabric modpack).
 */
export type LoaderSource =
  | {
      kind: "installer";
      artifact: InstallerArtifact;
      /** Docker's socket (DOCKER_SOCKET): the installer runs in the server's own image there. */
      socket: string;
      /** How long the installer may run (it downloads the loader's libraries and Mojang's server). */
      installerTimeoutMs: number;
      /** The Docker network its container joins (INSTALLER_NETWORK). */
      installerNetwork: string;
    }
  | { kind: "jar"; artifact: Artifact };

/** A loader to install (and a modpack with it), and what it takes. */
export interface LoaderJob extends InstallJob {
  loader: LoaderSource;
  /** The game version the loader is for. */
  game: string;
  /** A modpack installed with the loader: its files downloaded and its overrides extracted beside the loader's. */
  pack?: { pack: ModPack; zip: MrpackZip; hostMap: Readonly<Record<string, string>> } | undefined;
}

type Ctx = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal" | "atExit">;

/** The least memory a heavy modpack loader's server should have (docs/system.md 1: 8 GB or more for a modpack). */
const LOADER_MEMORY_BYTES = 6 * 2 ** 30;
/** The installer's lines kept for the error when it fails. */
const TAIL_LINES = 10;

/**
 * Installs a loader by its own installer (issue 33, docs/system.md 4.3), or a modpack with its loader: the installer jar
 * is downloaded and verified into a private directory of the volume, run in the server's own container image as the
 * game's user through Docker, its output checked and given to the game's user (a Fabric pack's launcher jar is only
 * downloaded and verified, to become server.jar); a pack's files are downloaded and verified and its overrides
 * extracted beside it, first, while the server still runs. Then all of it is moved into the volume (what it replaces
 * kept for --rollback), the server stopped for that and started again with --stop, the world snapshotted first.
 * Whatever fails before the move, the volume is as it was.
 */
export async function installLoader(ctx: Ctx, job: LoaderJob): Promise<number> {
  const { logger, notifier, lock, volume } = await beginJob(ctx, job.dir);
  const work = workDir(volume);
  process.once("exit", work.remove);
  try {
    const owner = job.control.owner;
    const panel = createPanelClient({ ...job.control, clock: ctx.clock });
    const details = await panel.details();
    // The game's own answer, not the panel's cached state (core's gameState): see swapIn.
    const before = (await gameState(panel, { clock: ctx.clock, logger, signal: ctx.signal })).state;
    if (before !== "offline" && !job.stop) throw refuse(job, before);
    warnMemory(logger, job, details.memoryLimitBytes);
    await warnStartup(logger, panel, startsBy(job.loader));

    const staging = work.make();
    const out = installDir(staging, owner);
    try {
      const packTops = job.pack ? await stageModpack(ctx, logger, job, staging, owner) : [];
      const names =
        job.loader.kind === "installer"
          ? await installerOutput(ctx, logger, job, {
              out,
              volume,
              owner,
              image: details.dockerImage,
              memoryBytes: Math.max(details.memoryLimitBytes ?? 0, INSTALLER_MEMORY_BYTES),
            })
          : [await launcherJar(ctx, logger, job, out, owner)];
      if (job.pack) moveTops(staging.dir(PACK_DIR), out, packTops, job.what);
      const all = [...names, ...packTops];
      const done = await swapIn(ctx, logger, job, { panel, volume, out, names: all });
      const switched =
        job.image?.kind === "switch"
          ? `; Java image switched to ${shortImage(job.image.to.image)} (was ${shortImage(job.image.from)})`
          : "";
      const line = `Installed ${job.what} in ${job.dir} (${all.join(", ")})${done.replaced.length ? "; what it replaced is kept aside" : ""}${switched}.${done.pre ? ` The world before it is snapshot ${done.pre.shortId} (pre-upgrade).` : ""}${done.restarted ? " The server was restarted with it." : ""}`;
      logger.info(line);
      ctx.stdout.write(`${line}\n`);
      await notifier.send({
        title: done.restarted ? "Server upgraded" : job.pack ? "Modpack installed" : "Server loader installed",
        description: `${job.what} installed${switched}${done.restarted ? "; the server was restarted with it" : "; it is used from the next start"}.${done.pre ? `\nThe world before it is snapshot ${done.pre.shortId} (pre-upgrade); to go back: jar-download --rollback.` : ""}`,
        colour: COLOURS.success,
        category: "restart",
      });
      return 0;
    } finally {
      out.close();
    }
  } finally {
    work.remove();
    process.off("exit", work.remove);
    volume.close();
    lock.release();
  }
}

/** The pack's files downloaded and verified, its overrides extracted: into the private directory, given to the owner. */
async function stageModpack(ctx: Ctx, logger: Logger, job: LoaderJob, staging: VolumeDir, owner: Owner) {
  const { pack, zip, hostMap } = job.pack as NonNullable<LoaderJob["pack"]>;
  const into = staging.ensureDir(PACK_DIR);
  try {
    const bytes = pack.files.reduce((sum, file) => sum + file.size, 0);
    logger.info(
      `downloading the ${pack.files.length} files of ${pack.name} ${pack.versionId} (${formatBytes(bytes)}) and extracting its ${pack.overrides.length} overrides`,
    );
    return await stagePack(pack, zip, into, {
      http: job.http,
      clock: ctx.clock,
      retryDelayMs: job.retryDelayMs,
      owner,
      hostMap,
    });
  } finally {
    into.close();
  }
}

/** The installer run in the image the server will run (the one it is switched to, if it is), its output checked. */
async function installerOutput(
  ctx: Ctx,
  logger: Logger,
  job: LoaderJob,
  on: { out: VolumeDir; volume: VolumeDir; owner: Owner; image: string | undefined; memoryBytes: number },
): Promise<string[]> {
  const loader = job.loader as Extract<LoaderSource, { kind: "installer" }>;
  const image = job.image?.kind === "switch" ? job.image.to.image : on.image;
  if (job.image?.kind === "switch") {
    logger.info(
      `${job.what} needs Java ${job.image.need}; the server's image ${shortImage(job.image.from)} has Java ${job.image.had}: it is switched to ${shortImage(job.image.to.image)} with the install`,
    );
  }
  await runIn(ctx, logger, job, loader, { out: on.out, owner: on.owner, image, memoryBytes: on.memoryBytes });
  checkTree(on.out, on.owner);
  const { artifact } = loader;
  if (artifact.type === "quilt") return prepareQuiltOutput(on.out, on.owner);
  if (isLegacyForge(artifact.type, artifact.game))
    return prepareLegacyForgeOutput(on.out, artifact.game, artifact.loader);
  return prepareLoaderOutput(on.out, on.volume, loaderLayout(artifact.type, artifact.game, artifact.loader), on.owner);
}

/** A Fabric pack's loader: the launcher jar downloaded and verified as server.jar, given to the owner. */
async function launcherJar(ctx: Ctx, logger: Logger, job: LoaderJob, out: VolumeDir, owner: Owner): Promise<string> {
  const { artifact } = job.loader as Extract<LoaderSource, { kind: "jar" }>;
  logger.info(`downloading ${artifact.fileName} from ${artifact.url}`);
  await downloadVerified(artifact, out.at(JAR), {
    http: job.http,
    clock: ctx.clock,
    retryDelayMs: job.retryDelayMs,
    onRetry: (reason, attempt) => logger.warn(`download attempt ${attempt} failed (${reason}); trying again`),
  });
  giveToOwner(out, JAR, owner);
  return JAR;
}

/** The pack's top-level names moved beside the loader's output; one the loader wrote too is refused. */
function moveTops(from: VolumeDir, out: VolumeDir, tops: readonly string[], what: string): void {
  try {
    for (const top of tops) {
      if (out.lstat(top)) {
        throw new JobError(`the modpack's ${top} is also written by the loader's installer: nothing was installed`, {
          where: what,
          hint: "use a pack made for this loader",
        });
      }
      from.rename(top, out);
    }
  } finally {
    from.close();
  }
}

function giveToOwner(dir: VolumeDir, name: string, owner: Owner): void {
  const fd = openSync(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    setOwnerAndMode(fd, owner, 0o644);
  } finally {
    closeSync(fd);
  }
}

function refuse(job: LoaderJob, state: string): BusyError {
  return new BusyError(`the server is ${state}; its loader cannot be installed under it`, {
    where: `server ${job.control.serverId}`,
    hint: "stop it first, or pass --stop to stop it, install the loader and start it again",
  });
}

/**
 * docs/system.md 1: a heavy modpack loader needs 8 GB or more; said before anything is installed, never refused. A
 * modpack states no need of its own (Modrinth's format has no field for it): the same bound holds for every pack.
 */
function warnMemory(logger: Logger, job: LoaderJob, limit: number | undefined): void {
  if (limit === undefined || limit >= LOADER_MEMORY_BYTES) return;
  // Quilt alone is a lightweight loader, as Fabric is: the bound is the heavy loaders' and the modpacks'.
  if (!job.pack && job.loader.artifact.type === "quilt") return;
  const what = job.pack
    ? `the modpack ${job.pack.pack.name}`
    : `${LOADER_LABELS[job.loader.artifact.type as keyof typeof LOADER_LABELS]} with mods`;
  const line = `the server has ${formatBytes(limit)} of memory in the panel; ${what} needs ${formatBytes(LOADER_MEMORY_BYTES)} or more (raise it in the panel's admin area, Servers → Build Configuration)`;
  logger.warn(line);
}

/**
 * The panel's Forge and NeoForge eggs start the loader with @unix_args.txt; another egg's startup line does not. A
 * launcher jar (Fabric, Quilt) is started as server.jar: a startup line reading @unix_args.txt would start the old
 * loader.
 */
async function warnStartup(logger: Logger, panel: PanelClient, kind: "args" | "jar"): Promise<void> {
  const startup = await panel.startup();
  const readsArgs = /@unix_args\.txt|run\.sh/.test(startup.rawStartupCommand);
  if (kind === "args" && !readsArgs) {
    logger.warn(
      `the server's startup line does not read @unix_args.txt ("${startup.rawStartupCommand}"): the loader is installed but the server will start server.jar; choose the panel's Forge or NeoForge egg for it, or a startup line with @user_jvm_args.txt @unix_args.txt`,
    );
  }
  if (kind === "jar" && readsArgs) {
    logger.warn(
      `the server's startup line reads @unix_args.txt or run.sh ("${startup.rawStartupCommand}"): server.jar is installed but the server will start the loader those name; choose an egg that starts -jar server.jar (the panel's Fabric, Quilt or Vanilla egg), or remove unix_args.txt`,
    );
  }
}

/**
 * How the server starts what is installed: NeoForge and Forge from 1.17 by their args file; Fabric, Quilt and Forge
 * before 1.17 as server.jar.
 */
function startsBy(loader: LoaderSource): "args" | "jar" {
  if (loader.kind === "jar") return "jar";
  const { type, game } = loader.artifact;
  return type === "quilt" || isLegacyForge(type, game) ? "jar" : "args";
}

/** The installer's directory in the private one: given to the game's user, whom the installer runs as. */
function installDir(staging: VolumeDir, owner: Owner): VolumeDir {
  const out = staging.ensureDir(INSTALL_DIR);
  setOwnerAndMode(out.fd, owner, 0o700);
  return out;
}

/** Downloads and verifies the installer into `out`, runs it in the server's image, and removes it again. */
async function runIn(
  ctx: Ctx,
  logger: Logger,
  job: LoaderJob,
  loader: Extract<LoaderSource, { kind: "installer" }>,
  on: { out: VolumeDir; owner: Owner; image: string | undefined; memoryBytes: number },
): Promise<void> {
  const { artifact } = loader;
  const { installer } = artifact;
  const { out, owner, image } = on;
  if (!image) {
    throw new JobError("the panel does not say which image the server runs in", {
      where: `server ${job.control.serverId}`,
      hint: "look at the server's Startup tab in the panel",
    });
  }
  logger.info(`downloading ${installer.fileName} from ${installer.url}`);
  await downloadVerified(installer, out.at(installer.fileName), {
    http: job.http,
    clock: ctx.clock,
    retryDelayMs: job.retryDelayMs,
    onRetry: (reason, attempt) => logger.warn(`download attempt ${attempt} failed (${reason}); trying again`),
  });
  giveToOwner(out, installer.fileName, owner);
  const label = LOADER_LABELS[artifact.type];
  logger.info(`running the ${label} installer in ${image} as ${owner.uid}:${owner.gid}: ${artifact.cmd.join(" ")}`);
  const tail: string[] = [];
  const { exitCode } = await runInstaller({
    socket: loader.socket,
    image,
    user: owner,
    dir: out,
    cmd: artifact.cmd,
    timeoutMs: loader.installerTimeoutMs,
    network: loader.installerNetwork,
    memoryBytes: on.memoryBytes,
    signal: ctx.signal,
    log: logger,
    onLine: (line) => {
      logger.info(`installer: ${line}`);
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    },
  });
  out.unlink(installer.fileName);
  if (exitCode !== 0) {
    throw new JobError(`the ${label} installer failed (exit ${exitCode}): nothing in the volume was changed`, {
      where: tail.at(-1),
      hint: "its output is in /var/log/mc-jar-download.log; run again later, or install another loader version",
    });
  }
}

interface SwapIn {
  panel: PanelClient;
  volume: VolumeDir;
  out: VolumeDir;
  names: string[];
}

/**
 * The move into the volume, no backup meanwhile; with --stop, the server stopped for it and started again. Whether the
 * game runs is asked of the game itself (core's gameState: a server started from Discord a moment ago is still
 * "offline" in the panel's /resources for up to 20 s), and a stop is waited for until Wings says the container
 * stopped (stopGame).
 */
async function swapIn(
  ctx: Ctx,
  logger: Logger,
  job: LoaderJob,
  on: SwapIn,
): Promise<{ replaced: string[]; pre: SafetySnapshot | undefined; restarted: boolean }> {
  const { panel, volume } = on;
  const run = { ctx, logger, job, volume };
  const backups = await pauseBackupsFor(run);
  try {
    const game = { clock: ctx.clock, logger, signal: ctx.signal };
    const { state } = await gameState(panel, game);
    if (state !== "offline") {
      if (!job.stop) throw refuse(job, state);
      logger.info(`stopping the server to install ${job.what} (it was ${state})`);
      await stopGame(panel, { ...game, timeoutMs: job.stateTimeoutMs });
    }
    let pre: SafetySnapshot | undefined;
    try {
      if (!job.ignoreWorldVersion) {
        refuseDowngrade(await worldSaver(volume), dataVersionOf(job.game), job.what);
      }
      pre = await preUpgrade({ ctx, job, logger, volume });
    } catch (error) {
      if (state === "offline") throw error;
      const again = (await startBack(panel, job.stateTimeoutMs))
        ? "the server was started again as it was"
        : "the server did not start again: look at the panel console";
      if (error instanceof UsageError)
        throw new UsageError(`${error.message}; nothing was installed`, { hint: `${again}; ${error.hint}` });
      throw new JobError(`the pre-upgrade snapshot failed, nothing was installed: ${(error as Error).message}`, {
        hint: `${again}; fix the backup, or install without one: --no-backup`,
        cause: error,
      });
    }
    const plan = job.image;
    if (plan?.kind === "switch") {
      try {
        await switchImage(panel, plan.to.image);
      } catch (error) {
        if (state !== "offline") await startBack(panel, job.stateTimeoutMs);
        throw error;
      }
    }
    // The digest of the file that tells this install is still in place (the loader's unix_args.txt, a launcher's
    // server.jar), read here, where only root reaches it: once in the volume it is the game's user's to replace.
    const marker = markerOf(job);
    const argsDigest = (await installedDigest(on.out, marker, "sha256", undefined)) ?? "";
    const keep = volume.makePrivateDir(KEEP_PREFIX);
    let replaced: string[];
    let installed: string[] = [];
    try {
      ({ replaced, installed } = moveInto(on.out, volume, keep, on.names));
      recordLoader(ctx, job, { names: on.names, keep, volume }, pre, { marker, argsDigest });
    } catch (error) {
      // Not recorded, it could not be rolled back: the volume is put back as it was (moveInto already did when a
      // rename failed), then the image and the server.
      if (installed.length > 0) putBack(volume, keep, on.out, installed);
      if (plan?.kind === "switch") await switchImage(panel, plan.from).catch(() => undefined);
      if (state !== "offline") await startBack(panel, job.stateTimeoutMs);
      throw error;
    } finally {
      keep.close();
    }
    if (state === "offline") return { replaced, pre, restarted: false };
    logger.info("starting the server again");
    try {
      await panel.power("start");
      await panel.waitForState("running", { timeoutMs: job.stateTimeoutMs });
    } catch (failure) {
      throw new JobError(`${job.what} was installed, but the server did not start: ${(failure as Error).message}`, {
        hint: "look at the panel console; to go back to what was there before: jar-download --rollback",
      });
    }
    return { replaced, pre, restarted: true };
  } finally {
    backups.release();
  }
}

/**
 * What --rollback needs: the names put in place, where what they replaced is kept, and the marker's digest. The
 * directory an earlier loader install kept is removed once this one is recorded: only the last can be rolled back.
 */
function recordLoader(
  ctx: Ctx,
  job: LoaderJob,
  moved: { names: string[]; keep: VolumeDir; volume: VolumeDir },
  pre: SafetySnapshot | undefined,
  inPlace: { marker: string; argsDigest: string },
): void {
  const previous = readHistory(ctx.paths, job.dir);
  const { names, keep } = moved;
  writeHistory(ctx.paths, job.dir, {
    ...(previous ?? {}),
    loader: {
      what: job.what,
      version: job.game,
      dataVersion: dataVersionOf(job.game),
      names,
      keep: { name: keep.path.slice(keep.path.lastIndexOf("/") + 1), ino: keep.stat().ino },
      argsDigest: inPlace.argsDigest,
      ...(inPlace.marker === UNIX_ARGS ? {} : { marker: inPlace.marker }),
    },
    preUpgrade: pre?.shortId,
    ...(job.image?.kind === "switch" ? { image: job.image.to.image, previousImage: job.image.from } : {}),
  });
  if (previous?.loader) forgetKept(moved.volume, previous.loader);
}

/** The file whose digest tells the install is still the one in place: the args file when it starts by one, else server.jar. */
function markerOf(job: LoaderJob): string {
  return startsBy(job.loader) === "args" ? UNIX_ARGS : JAR;
}

/**
 * Undoes a move whose record failed: each installed name back into the staging directory (removed with it), what it
 * replaced back from the keep directory, which is removed once empty. What cannot be moved stays kept, never deleted.
 */
function putBack(volume: VolumeDir, keep: VolumeDir, out: VolumeDir, installed: string[]): void {
  try {
    moveInto(keep, volume, out, installed, { clear: true });
    if (keep.list().length === 0) volume.removePrivateDir(keep);
  } catch {
    // What is left is in the keep directory, root's only.
  }
}
