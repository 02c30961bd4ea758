import { JobError, UsageError } from "@mcops/core/errors";
import { COLOURS, gameState, type Notifier, type PanelClient, stopGame } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import type { VolumeDir } from "@mcops/core/volume";
import { installedDigest } from "./download.ts";
import { KEEP_PREFIX, keptDir, moveInto, UNIX_ARGS } from "./install-tree.ts";
import { shortImage, switchImage } from "./java.ts";
import { pauseBackupsFor, startBack } from "./replace.ts";
import { type JarHistory, type LoaderRecord, worldSaver, writeHistory } from "./versions.ts";

type Ctx = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr">;

/** The loader install the history names, when it is still the one in place (its unix_args.txt, or marker, unchanged). */
export async function loaderInPlace(
  volume: VolumeDir,
  history: JarHistory | undefined,
): Promise<LoaderRecord | undefined> {
  const record = history?.loader;
  if (!record) return undefined;
  // A regular file only, read within a bound: anything else is not what was installed.
  const digest = await installedDigest(volume, markerName(record), "sha256", undefined);
  return digest === record.argsDigest ? record : undefined;
}

/** The file whose digest was recorded: unix_args.txt unless the record names another. */
export function markerName(record: LoaderRecord): string {
  return record.marker === "server.jar" ? "server.jar" : UNIX_ARGS;
}

/**
 * `--rollback` after a loader install: the names it put into the volume are taken out (and removed with the private
 * directory they are moved to), what they replaced comes back from where it was kept, the image goes back to the one
 * before, and a running server is stopped for it and started again. The world is checked again once the server is
 * stopped (it saves as it stops); refused then, the server is started again as it was. The kept directory must still
 * be the one made (its inode): a directory the game's user renamed to its name is never taken for it.
 */
export async function rollBackLoader(
  ctx: Ctx,
  run: { logger: Logger; notifier: Notifier; volume: VolumeDir; panel: PanelClient; dir: string },
  on: {
    record: LoaderRecord;
    history: JarHistory;
    dryRun: boolean;
    ignore: boolean;
    timeoutMs: number;
    lockWaitMs: number;
  },
): Promise<number> {
  const { logger, volume, panel } = run;
  const { record, history } = on;
  const kept = keptDir(volume, record);
  try {
    const back = history.installed?.what ?? "what was there before it";
    const image = history.previousImage ? `; the image back to ${shortImage(history.previousImage)}` : "";
    if (!on.ignore) await refuseIfSaved(volume, record, history);
    if (on.dryRun) {
      const { state } = await gameState(panel, { clock: ctx.clock, logger });
      const server =
        state === "offline" ? "the server is offline" : `the server is ${state}: stopped and started again`;
      ctx.stdout.write(
        `Would take ${record.what} out (${record.names.join(", ")}) and put ${back} back${image} (${server}). Nothing done (--dry-run).\n`,
      );
      return 0;
    }
    const backups = await pauseBackupsFor({ ctx, logger, job: { lockWaitMs: on.lockWaitMs } });
    let restarted = false;
    try {
      // The game's own answer, not the panel's cached state (core's gameState and stopGame).
      const game = { clock: ctx.clock, logger };
      const { state } = await gameState(panel, game);
      if (state !== "offline") {
        logger.info(`stopping the server to take ${record.what} out (it was ${state})`);
        await stopGame(panel, { ...game, timeoutMs: on.timeoutMs });
        // The server saves the world as it stops: one that ran the loader's version may only now have written it so.
        try {
          if (!on.ignore) await refuseIfSaved(volume, record, history);
        } catch (error) {
          if (!(error instanceof UsageError)) throw error;
          const again = (await startBack(panel, on.timeoutMs))
            ? `the server was started again with ${record.what}`
            : "the server did not start again: look at the panel console";
          throw new UsageError(`${error.message}; nothing was changed`, { hint: `${again}; ${error.hint}` });
        }
      }
      swapBack(volume, kept, record);
      // The files are back whatever the panel says next: recorded so, and a stopped server started again, before a
      // failed image switch is told (a newer Java image runs the older jar; the operator switches it by hand).
      let imageFailure: Error | undefined;
      if (history.previousImage) {
        imageFailure = await switchImage(panel, history.previousImage).then(
          () => undefined,
          (error: Error) => error,
        );
      }
      writeHistory(ctx.paths, run.dir, {
        installed: history.installed,
        previous: history.previous,
        preUpgrade: undefined,
        ...(imageFailure ? { image: history.image, previousImage: history.previousImage } : {}),
      });
      if (state !== "offline") {
        restarted = await startBack(panel, on.timeoutMs);
        if (!restarted) {
          throw new JobError(`${record.what} was taken out, but the server did not start again`, {
            hint: "look at the panel console and the server's latest.log",
          });
        }
      }
      if (imageFailure) {
        throw new JobError(
          `${record.what} was taken out and ${back} put back, but the image could not be switched back to ${shortImage(history.previousImage as string)}: ${imageFailure.message}`,
          { hint: "choose it on the server's Startup tab in the panel (Docker Image)" },
        );
      }
    } finally {
      backups.release();
    }
    const line = `${record.what} was taken out and ${back} put back${image}.${restarted ? " The server was restarted." : ""}`;
    logger.info(line);
    ctx.stdout.write(`${line}\n`);
    await run.notifier.send({
      title: "Server rolled back",
      description: line,
      colour: COLOURS.warning,
      category: "restart",
    });
    return 0;
  } finally {
    kept.close();
  }
}

/** The swap: the loader's names out (removed), the kept ones back; the emptied kept directory removed. */
function swapBack(volume: VolumeDir, kept: VolumeDir, record: LoaderRecord): void {
  const out = volume.makePrivateDir(KEEP_PREFIX);
  try {
    moveInto(kept, volume, out, record.names, { clear: true });
    volume.removePrivateDir(out);
    if (kept.list().length === 0) volume.removePrivateDir(kept);
  } finally {
    out.close();
  }
}

/** Exit 2 when the world has been saved by the loader's game version and what goes back is older. */
async function refuseIfSaved(volume: VolumeDir, record: LoaderRecord, history: JarHistory): Promise<void> {
  const saved = await worldSaver(volume);
  const back = history.installed?.dataVersion;
  if (!saved || back === undefined || saved.dataVersion <= back) return;
  const snapshot = history.preUpgrade ? `the pre-upgrade snapshot ${history.preUpgrade}` : "a snapshot from before it";
  throw new UsageError(
    `the world has been saved by ${saved.name ?? "a newer version"} (data version ${saved.dataVersion}) since ${record.what} went in; ${history.installed?.what} (${back}) cannot open it safely`,
    { hint: `restore ${snapshot} first (backup restore --tag pre-upgrade), then run jar-download --rollback again` },
  );
}
