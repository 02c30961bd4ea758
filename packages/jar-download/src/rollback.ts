import { JobError, UsageError } from "@mcops/core/errors";
import { COLOURS, createPanelClient, gameState, type PanelClient, stopGame } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import type { VolumeDir } from "@mcops/core/volume";
import { JAR, PREVIOUS, WORK_PREFIX } from "./install.ts";
import { jarVersion } from "./jar-version.ts";
import { shortImage, switchImage } from "./java.ts";
import { loaderInPlace, markerName, rollBackLoader } from "./loader-rollback.ts";
import { beginJob, pauseBackupsFor, startBack } from "./replace.ts";
import {
  ignoredWorldVersion,
  type JarHistory,
  type JarRecord,
  readHistory,
  recordedAs,
  worldSaver,
  writeHistory,
} from "./versions.ts";

type Ctx = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr">;

interface RollbackSettings {
  worldDir: string | undefined;
  control: { url: string; key: string; serverId: string } | undefined;
}

/**
 * `jar-download --rollback`: server.jar.previous goes back in place of server.jar (and server.jar becomes
 * server.jar.previous, so the rollback can itself be undone). A running server is stopped for it and started again, as
 * with --stop. When the world has been saved by the newer version since, the older one cannot open it safely: the
 * rollback is refused (exit 2) and names the pre-upgrade snapshot to restore first.
 */
export async function rollBack(
  ctx: Ctx,
  settings: RollbackSettings,
  options: { stateTimeoutMs: number; lockWaitMs?: number; dryRun?: boolean; ignoreWorldVersion?: boolean },
): Promise<number> {
  const dir = settings.worldDir as string;
  const control = settings.control as NonNullable<RollbackSettings["control"]>;
  const { logger, notifier, lock, volume } = await beginJob(ctx, dir);
  try {
    const recorded = readHistory(ctx.paths, dir);
    const loader = await loaderInPlace(volume, recorded);
    if (recorded?.loader && !loader) {
      // The last install was a loader, and its unix_args.txt (a Fabric pack's server.jar) has changed since: what the
      // volume runs is not known, and server.jar.previous (a jar from before it) is not what came before the loader.
      const marker = markerName(recorded.loader);
      throw new JobError(`${marker} is not the one ${recorded.loader.what} put there: it changed since`, {
        where: volume.display(marker),
        hint: "nothing was changed; install the version you want instead",
      });
    }
    if (loader) {
      const panel = createPanelClient({
        url: control.url,
        key: control.key,
        serverId: control.serverId,
        clock: ctx.clock,
      });
      return await rollBackLoader(
        ctx,
        { logger, notifier, volume, panel, dir },
        {
          record: loader,
          history: recorded as JarHistory,
          dryRun: options.dryRun ?? false,
          ignore: options.ignoreWorldVersion ?? false,
          timeoutMs: options.stateTimeoutMs,
          lockWaitMs: options.lockWaitMs ?? 30 * 60_000,
        },
      );
    }
    if (!volume.lstat(PREVIOUS)?.isFile()) {
      throw new JobError("there is no server.jar.previous to go back to", {
        where: volume.display(PREVIOUS),
        hint: "jar-download keeps the replaced jar there when it installs another; install the version you want instead",
      });
    }
    const history = readHistory(ctx.paths, dir);
    const back = await recordedAs(volume, PREVIOUS, history?.previous);
    const now = await recordedAs(volume, JAR, history?.installed);
    const going = await goingBack(volume, back, logger);
    // --ignore-world-version: level.dat is not checked, before the stop or after it.
    const ignore = options.ignoreWorldVersion ?? false;
    if (ignore) logger.warn(await ignoredWorldVersion(volume));
    else await refuseIfSavedSince(volume, going, history);
    const panel = createPanelClient({
      url: control.url,
      key: control.key,
      serverId: control.serverId,
      clock: ctx.clock,
    });
    const kept = now ? `${now.what} is kept as ${PREVIOUS}` : `the jar it replaces is kept as ${PREVIOUS}`;
    const image = now ? await imageToRestore(panel, history, logger) : undefined;
    const imageSaid = image ? `; the Java image back to ${shortImage(image)}` : "";
    if (options.dryRun) {
      const { state } = await gameState(panel, { clock: ctx.clock, logger });
      const server =
        state === "offline" ? "the server is offline" : `the server is ${state}: stopped and started again`;
      ctx.stdout.write(
        `Would put ${going.what} back as server.jar (${kept}${imageSaid}; ${server}). Nothing done (--dry-run).\n`,
      );
      return 0;
    }
    const run = { ctx, logger, job: { lockWaitMs: options.lockWaitMs ?? 30 * 60_000 } };
    const restarted = await swapAround(run, {
      panel,
      volume,
      going,
      ignore,
      history,
      image,
      timeoutMs: options.stateTimeoutMs,
    });
    if (back) {
      // The image goes with the jars: rolling this rollback back switches to the newer image again.
      const images = image ? { image, previousImage: history?.image } : {};
      writeHistory(ctx.paths, dir, { installed: back, previous: now, preUpgrade: undefined, ...images });
    }
    const line = `${going.what} is back as server.jar (${kept})${imageSaid}.${restarted ? " The server was restarted with it." : ""}`;
    logger.info(line);
    ctx.stdout.write(`${line}\n`);
    await notifier.send({
      title: "Server rolled back",
      description: line,
      colour: COLOURS.warning,
      category: "restart",
    });
    return 0;
  } finally {
    volume.close();
    lock.release();
  }
}

/**
 * The swap, no backup meanwhile: a running server is stopped first, and the world checked again once it is (the
 * server saves it as it stops: a server that ran the newer jar may only now have written it as the newer version);
 * refused then, the server is started again with the jar it had. True when the server was restarted.
 */
async function swapAround(
  run: { ctx: Ctx; logger: Logger; job: { lockWaitMs: number } },
  on: {
    panel: PanelClient;
    volume: VolumeDir;
    going: Going;
    history: JarHistory | undefined;
    ignore: boolean;
    /** The image to put back with the jar (the one the upgrade switched from). */
    image: string | undefined;
    timeoutMs: number;
  },
): Promise<boolean> {
  const { panel, volume, timeoutMs } = on;
  const backups = await pauseBackupsFor(run);
  try {
    // The game's own answer, not the panel's cached state (core's gameState and stopGame).
    const game = { clock: run.ctx.clock, logger: run.logger };
    const { state } = await gameState(panel, game);
    if (state !== "offline") {
      run.logger.info(`stopping the server to put server.jar.previous back (it was ${state})`);
      await stopGame(panel, { ...game, timeoutMs });
      try {
        if (!on.ignore) await refuseIfSavedSince(volume, on.going, on.history);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        const again = (await startBack(panel, timeoutMs))
          ? "the server was started again with the jar it had"
          : "the server did not start again: look at the panel console";
        throw new UsageError(`${error.message}; nothing was changed`, { hint: `${again}; ${error.hint}` });
      }
    }
    if (on.image) await imageBack(panel, on.image, state !== "offline", timeoutMs);
    swapJars(volume);
    return state !== "offline" && (await startWith(panel, timeoutMs));
  } finally {
    backups.release();
  }
}

/**
 * The image the upgrade switched the server from, when the jar in place is the one it installed and the server still
 * runs the image it switched to; a change made since (on the Startup tab) is left as it is, and said.
 */
async function imageToRestore(
  panel: PanelClient,
  history: JarHistory | undefined,
  logger: Logger,
): Promise<string | undefined> {
  if (!history?.image || !history.previousImage) return undefined;
  const current = (await panel.details()).dockerImage;
  if (current === history.image) return history.previousImage;
  logger.info(
    `the server's image was changed since jar-download switched it to ${history.image} (it is ${current ?? "not said"}): left as it is`,
  );
  return undefined;
}

/** The old image back before the jars change places; a refusal is exit 2 with nothing changed (the server started again). */
async function imageBack(panel: PanelClient, image: string, stopped: boolean, timeoutMs: number): Promise<void> {
  try {
    await switchImage(panel, image);
  } catch (error) {
    if (!(error instanceof UsageError) || !stopped) throw error;
    const again = (await startBack(panel, timeoutMs))
      ? "the server was started again with the jar it had"
      : "the server did not start again: look at the panel console";
    throw new UsageError(`${error.message}; nothing was changed`, {
      where: error.where,
      hint: `${again}; ${error.hint}`,
    });
  }
}

/**
 * What goes back in: the history's record of server.jar.previous, its data version from the jar's own version.json
 * when the record has none (or there is no record: the egg's jar); said in the log when nothing tells it.
 */
async function goingBack(volume: VolumeDir, back: JarRecord | undefined, logger: Logger): Promise<Going> {
  if (back?.dataVersion !== undefined) return back;
  const own = await ownVersion(volume);
  const going = back ? { what: back.what, dataVersion: own.dataVersion } : own;
  if (going.dataVersion === undefined) {
    logger.warn("server.jar.previous does not say which game version it is: the world's version is not checked");
  }
  return going;
}

/** The jar going back in, in words, and its data version. */
interface Going {
  what: string;
  dataVersion: number | undefined;
}

/** What server.jar.previous says it is in its version.json, when jar-download did not install it (the egg's jar). */
async function ownVersion(volume: VolumeDir): Promise<Going> {
  const own = await jarVersion(volume, PREVIOUS);
  return own ? { what: `the ${own.id} jar`, dataVersion: own.dataVersion } : { what: PREVIOUS, dataVersion: undefined };
}

/** Exit 2 when the world was saved by a version newer than the one going back in. */
async function refuseIfSavedSince(volume: VolumeDir, back: Going, history: JarHistory | undefined): Promise<void> {
  const saved = await worldSaver(volume);
  if (!saved || back.dataVersion === undefined || saved.dataVersion <= back.dataVersion) return;
  const snapshot = history?.preUpgrade
    ? `the pre-upgrade snapshot ${history.preUpgrade}`
    : "a snapshot from before the upgrade";
  throw new UsageError(
    `the world has been saved by ${saved.name ?? "a newer version"} (data version ${saved.dataVersion}) since the upgrade; ${back.what} (${back.dataVersion}) cannot open it safely`,
    { hint: `restore ${snapshot} first (backup restore --tag pre-upgrade), then run jar-download --rollback again` },
  );
}

/** server.jar and server.jar.previous change places, through a private directory of the volume (the server is stopped). */
function swapJars(volume: VolumeDir): void {
  if (!volume.lstat(JAR)) {
    volume.rename(PREVIOUS, volume, JAR);
    volume.sync();
    return;
  }
  const work = volume.makePrivateDir(WORK_PREFIX);
  try {
    volume.rename(JAR, work);
    try {
      volume.rename(PREVIOUS, volume, JAR);
    } catch (error) {
      work.rename(JAR, volume);
      throw error;
    }
    work.rename(JAR, volume, PREVIOUS);
    volume.sync();
  } finally {
    // Removed only when empty: a jar that could not be put back stays there, never deleted with the directory.
    if (work.list().length === 0) volume.removePrivateDir(work);
    work.close();
  }
}

/** Starts the server and waits until it runs; one that does not come up is an error with the way forward. */
async function startWith(panel: PanelClient, timeoutMs: number): Promise<boolean> {
  try {
    await panel.power("start");
    await panel.waitForState("running", { timeoutMs });
    return true;
  } catch (failure) {
    throw new JobError(`server.jar.previous is back, but the server did not start: ${(failure as Error).message}`, {
      hint: "look at the panel console and the server's latest.log",
    });
  }
}
