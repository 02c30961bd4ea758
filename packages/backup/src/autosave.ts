import { closeSync, openSync, readSync, statSync } from "node:fs";
import { type Clock } from "@mcops/core/clock";
import { type Logger } from "@mcops/core/log";
import { type PanelClient, PanelError } from "@mcops/core/panel-client";

/**
 * A consistent world on disk while restic reads it (issue 3, step 3): when the server runs, `save-off`, then
 * `save-all flush`, then wait for the game's "Saved the game" in latest.log. `resume()` sends `save-on`; callers run it
 * on every path (finally, and on SIGINT/SIGTERM).
 */
export interface AutosaveGuard {
  /** How the world was made consistent, for the log and the messages. */
  mode: "flushed" | "flush-unconfirmed" | "server-offline" | "panel-unreachable";
  note: string;
  /** When autosave was turned off (ms), if it was. */
  offSince: number | undefined;
  /** Turns autosave back on, once; later calls do nothing. Never throws. */
  resume(): Promise<void>;
}

export interface AutosaveOptions {
  panel: PanelClient;
  latestLog: string;
  clock: Clock;
  logger: Logger;
  saveTimeoutMs: number;
  pollMs?: number;
}

export async function pauseAutosave(options: AutosaveOptions): Promise<AutosaveGuard> {
  // Reading the new tail of latest.log is cheap; look often, the flush usually lands within a few hundred ms.
  const { panel, latestLog, clock, logger, saveTimeoutMs, pollMs = 25 } = options;
  const nothingToResume = async () => {};
  let state: string;
  try {
    state = (await panel.resources()).state;
  } catch (error) {
    const reason = error instanceof PanelError ? error.message : String(error);
    logger.warn(
      `the panel cannot be reached (${reason}); the backup is crash-consistent, taken while the game may be writing`,
    );
    return {
      mode: "panel-unreachable",
      note: "panel unreachable: crash-consistent backup",
      offSince: undefined,
      resume: nothingToResume,
    };
  }
  if (state !== "running") {
    logger.info(`the server is ${state}: its files are at rest, no save commands needed`);
    return { mode: "server-offline", note: `server ${state}`, offSince: undefined, resume: nothingToResume };
  }

  let resumed = false;
  const offSince = clock.now();
  const resume = async () => {
    if (resumed) return;
    resumed = true;
    try {
      await panel.command("save-on");
      logger.info(`save-on sent; autosave was off for ${((clock.now() - offSince) / 1000).toFixed(1)} s`);
    } catch (error) {
      logger.error(`could not turn autosave back on (${(error as Error).message}); run save-on in the console`);
    }
  };

  try {
    await panel.command("save-off");
    const from = fileSize(latestLog);
    await panel.command("save-all flush");
    logger.info("save-off and save-all flush sent; waiting for the game to confirm");
    const deadline = clock.now() + saveTimeoutMs;
    let offset = from;
    while (clock.now() < deadline) {
      const { text, next } = readFrom(latestLog, offset);
      offset = next;
      if (/Saved the game/.test(text)) {
        logger.info("the game confirmed: Saved the game");
        return { mode: "flushed", note: "world flushed (save-all flush confirmed)", offSince, resume };
      }
      await clock.sleep(pollMs);
    }
    logger.warn(
      `no "Saved the game" in ${latestLog} within ${saveTimeoutMs / 1000} s; going on without the confirmation`,
    );
    return { mode: "flush-unconfirmed", note: "save-all flush not confirmed in time", offSince, resume };
  } catch (error) {
    // A command failed after save-off may have gone through: turn autosave back on before going crash-consistent.
    await resume();
    logger.warn(`save commands failed (${(error as Error).message}); the backup is crash-consistent`);
    return {
      mode: "panel-unreachable",
      note: "save commands failed: crash-consistent backup",
      offSince: undefined,
      resume: nothingToResume,
    };
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** New text of a growing log from `offset`; starts over when the file was replaced or truncated. */
function readFrom(path: string, offset: number): { text: string; next: number } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { text: "", next: offset };
  }
  try {
    const size = statSync(path).size;
    const start = size < offset ? 0 : offset;
    const buffer = Buffer.alloc(Math.min(size - start, 1 << 20));
    const read = readSync(fd, buffer, 0, buffer.length, start);
    return { text: buffer.subarray(0, read).toString("utf8"), next: start + read };
  } finally {
    closeSync(fd);
  }
}
