import { savedBy } from "@mcops/backup/world";
import { JobError, UsageError } from "@mcops/core/errors";
import { COLOURS, createPanelClient, type PanelClient } from "@mcops/core/http";
import type { ToolContext } from "@mcops/core/tool";
import type { VolumeDir } from "@mcops/core/volume";
import { JAR, PREVIOUS, WORK_PREFIX } from "./install.ts";
import { jarVersion } from "./jar-version.ts";
import { beginJob, pauseBackupsFor } from "./replace.ts";
import { type JarHistory, readHistory, recordedAs, writeHistory } from "./versions.ts";

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
  options: { stateTimeoutMs: number; lockWaitMs?: number },
): Promise<number> {
  const dir = settings.worldDir as string;
  const control = settings.control as NonNullable<RollbackSettings["control"]>;
  const { logger, notifier, lock, volume } = await beginJob(ctx, dir);
  try {
    if (!volume.lstat(PREVIOUS)?.isFile()) {
      throw new JobError("there is no server.jar.previous to go back to", {
        where: volume.display(PREVIOUS),
        hint: "jar-download keeps the replaced jar there when it installs another; install the version you want instead",
      });
    }
    const history = readHistory(ctx.paths, dir);
    const back = await recordedAs(volume, PREVIOUS, history?.previous);
    const now = await recordedAs(volume, JAR, history?.installed);
    const going = back ?? (await ownVersion(volume));
    if (going.dataVersion === undefined) {
      logger.warn(
        "server.jar.previous is not a jar jar-download installed and does not say its version: the world's version is not checked",
      );
    }
    await refuseIfSavedSince(volume, going, history);
    const panel = createPanelClient({
      url: control.url,
      key: control.key,
      serverId: control.serverId,
      clock: ctx.clock,
    });
    const run = { ctx, logger, job: { lockWaitMs: options.lockWaitMs ?? 30 * 60_000 } };
    const backups = await pauseBackupsFor(run);
    let restarted = false;
    try {
      const state = (await panel.resources()).state;
      if (state !== "offline") {
        logger.info(`stopping the server to put server.jar.previous back (it was ${state})`);
        await panel.power("stop");
        await panel.waitForState("offline", { timeoutMs: options.stateTimeoutMs });
      }
      swapJars(volume);
      if (state !== "offline") restarted = await startWith(panel, options.stateTimeoutMs);
    } finally {
      backups.release();
    }
    if (back) writeHistory(ctx.paths, dir, { installed: back, previous: now, preUpgrade: undefined });
    const what = going.what;
    const line = `${what} is back as server.jar${now ? ` (${now.what} is kept as ${PREVIOUS})` : ` (the jar it replaces is kept as ${PREVIOUS})`}.${restarted ? " The server was restarted with it." : ""}`;
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
  const saved = await savedBy(volume);
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
    volume.removePrivateDir(work);
    work.close();
  }
}

/** Starts the server and waits until it runs; one that does not come up is an error with the way forward. */
async function startWith(panel: PanelClient, timeoutMs: number): Promise<boolean> {
  await panel.power("start");
  try {
    await panel.waitForState("running", { timeoutMs });
    return true;
  } catch (failure) {
    throw new JobError(`server.jar.previous is back, but the server did not start: ${(failure as Error).message}`, {
      hint: "look at the panel console and the server's latest.log",
    });
  }
}
