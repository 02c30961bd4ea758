import type { Clock } from "@mcops/core/clock";
import type { JobError } from "@mcops/core/errors";
import { type ConsoleAnswer, type PanelClient, PanelError, type PowerState, sendToGame } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { UnsafePathError, type VolumeDir } from "@mcops/core/volume";
import { isMainThread, LATEST_LOG, parseHeader } from "@mcops/game-log/game-log";
import { type FollowPosition, LogFollower, positionAtEnd } from "@mcops/game-log/log-follower";

/**
 * A consistent world on disk while restic reads it (issue 3, step 3): `save-off`, then `save-all flush`, then wait for
 * the game's "Saved the game" in latest.log. `resume()` sends `save-on`; callers run it on every path (finally, and on
 * SIGINT/SIGTERM; `atExit` gets it for a second signal that ends the run at once).
 *
 * The panel's state is never taken as proof of a world at rest: it caches /resources for 20 s (pterodactyl/panel
 * ResourceUtilizationController), so "offline" may be a server that is starting or stopping, both of which write the
 * world. `save-off` is always sent; only the panel's "Server must be online" (Wings' 502: the container does not run)
 * proves the world at rest. A server shown starting or stopping is waited for (at most `settleTimeoutMs`) first.
 */
export interface AutosaveGuard {
  /** How the world was made consistent, for the log and the messages. */
  mode: "flushed" | "flush-unconfirmed" | "server-offline" | "panel-unreachable";
  note: string;
  /** When autosave was turned off (ms), if it was. */
  offSince: number | undefined;
  /** From sending `save-all flush` to the game's "Saved the game" (ms): the main thread's stall; unset unless confirmed. */
  flushMs?: number | undefined;
  /** Turns autosave back on, once; later calls wait for that one. Never throws. */
  resume(): Promise<void>;
  /**
   * For a world found at rest (mode "server-offline"), asked once its files were read: why it may not have stayed at
   * rest, or undefined. "Server must be online" holds only for the moment it was said: a start asked just before
   * (still "starting", the container not yet run) or during the backup runs the game while restic reads the world,
   * and the game's first write is its log.
   */
  disturbed?(): string | undefined;
}

export interface AutosaveOptions {
  panel: PanelClient;
  /** The server volume, and the game log inside it (default logs/latest.log). */
  volume: VolumeDir;
  latestLog?: string | undefined;
  clock: Clock;
  logger: Logger;
  saveTimeoutMs: number;
  pollMs?: number;
  /** The run's abort signal (SIGINT, SIGTERM): the wait for the confirmation ends at once. */
  signal?: AbortSignal | undefined;
  /** Gets `resume` before save-off is sent, and loses it once save-on went through: what a second signal runs. */
  atExit?: Set<() => Promise<void>> | undefined;
  /** The longest wait for a server shown starting or stopping to be running or offline. Default 5 minutes. */
  settleTimeoutMs?: number | undefined;
  /**
   * After "Server must be online" to a server not shown offline, the longest wait for the panel to show it offline
   * before the world is taken as at rest. Default 30 s (the panel caches resources for 20 s).
   */
  recheckTimeoutMs?: number | undefined;
}

const SETTLE_TIMEOUT_MS = 5 * 60_000;
/** The most of the game's log read at each look for "Saved the game": the game writes a few lines meanwhile. */
const READ_BYTES = 1 << 20;

/** How the world was made consistent, before the guard knows whether autosave was turned off. */
type Outcome = Pick<AutosaveGuard, "mode" | "note" | "flushMs">;

const nothingToResume = async (): Promise<void> => {};

/** A guard for a world the backup did not pause: nothing to turn back on. */
function atRest(mode: AutosaveGuard["mode"], note: string): AutosaveGuard {
  return { mode, note, offSince: undefined, resume: nothingToResume };
}

export async function pauseAutosave(options: AutosaveOptions): Promise<AutosaveGuard> {
  const { logger, signal } = options;
  let state: PowerState;
  try {
    state = await settledState(options);
  } catch (error) {
    if (signal?.aborted) return interrupted(options);
    const reason = error instanceof PanelError ? error.message : String(error);
    logger.warn(
      `the panel cannot be reached (${reason}); the backup is crash-consistent, taken while the game may be writing`,
    );
    return atRest("panel-unreachable", "panel unreachable: crash-consistent backup");
  }
  if (signal?.aborted) return interrupted(options);
  const offSince = options.clock.now();
  const resume = resumer(options, offSince);
  options.atExit?.add(resume);
  const refused = await saveOff(options, state, resume);
  if (refused) return refused;
  try {
    return { ...(await flushAndConfirm(options)), offSince, resume };
  } catch (error) {
    // A command failed after save-off went through: turn autosave back on before going crash-consistent.
    await resume();
    logger.warn(`save commands failed (${(error as Error).message}); the backup is crash-consistent`);
    return atRest("panel-unreachable", "save commands failed: crash-consistent backup");
  }
}

/** The run was aborted (SIGINT, SIGTERM) before save-off: nothing sent, nothing to resume. */
function interrupted({ logger, signal }: AutosaveOptions): AutosaveGuard {
  logger.info(`interrupted by ${String(signal?.reason)} before save-off: no save commands sent`);
  return atRest("flush-unconfirmed", "interrupted before save-off");
}

/**
 * The server's state once it is not starting or stopping (both write the world), waited for at most
 * settleTimeoutMs; after that the state as it is (save-off decides).
 */
async function settledState(options: AutosaveOptions): Promise<PowerState> {
  const { panel, logger, signal, settleTimeoutMs = SETTLE_TIMEOUT_MS } = options;
  const state = (await panel.resources()).state;
  if (state !== "starting" && state !== "stopping") return state;
  logger.info(`the server is ${state}: waiting up to ${Math.round(settleTimeoutMs / 1000)} s for it to settle`);
  try {
    const settled = await panel.waitForState(["running", "offline"], { timeoutMs: settleTimeoutMs, signal });
    return settled.state;
  } catch (error) {
    if (!(error instanceof PanelError) || error.kind !== "timeout") throw error;
    logger.warn(`${error.message}; trying save-off anyway`);
    return state;
  }
}

/**
 * save-off, whatever the panel's (cached) state said: undefined once the game took it. The panel's "Server must be
 * online" (Wings' 502: the container does not run) is the world at rest, once the panel shows the server offline
 * (core's sendToGame: a proxy's 502 in front of Wings says the same while the game runs); any other failure is a
 * crash-consistent backup, with save-on sent when save-off may have gone through (no answer, or the panel's 504).
 */
async function saveOff(
  options: AutosaveOptions,
  state: PowerState,
  resume: () => Promise<void>,
): Promise<AutosaveGuard | undefined> {
  const { panel, logger, atExit, signal, recheckTimeoutMs } = options;
  let answer: ConsoleAnswer;
  try {
    answer = await sendToGame(panel, "save-off", { shown: state, recheckTimeoutMs, signal });
  } catch (error) {
    const mayHaveGoneThrough = !(error instanceof PanelError) || error.status === undefined || error.status === 504;
    if (mayHaveGoneThrough) await resume();
    else atExit?.delete(resume);
    logger.warn(`save-off failed (${(error as Error).message}); the backup is crash-consistent`);
    return atRest("panel-unreachable", "save-off failed: crash-consistent backup");
  }
  if (answer.kind === "taken") {
    if (state !== "running") logger.info(`the panel showed the server ${state}, but the game took save-off: it runs`);
    return undefined;
  }
  // Nothing was sent to the game.
  atExit?.delete(resume);
  if (answer.kind === "unconfirmed") {
    logger.warn(
      `the panel said Server must be online, but it showed the server ${state} and does not show it offline (${answer.reason}): Wings may be unreachable behind a proxy while the game runs; the backup is crash-consistent`,
    );
    return atRest(
      "panel-unreachable",
      "save-off refused but the server was not shown offline: crash-consistent backup",
    );
  }
  logger.info("the game is not running (the panel: Server must be online): its files are at rest");
  const before = logStamp(options);
  return {
    ...atRest("server-offline", "server offline"),
    disturbed: () =>
      logStamp(options) === before
        ? undefined
        : `the game started during the backup (${options.volume.display(options.latestLog ?? LATEST_LOG)} was written since save-off was refused): its files were not at rest, the backup is crash-consistent`,
  };
}

/** The game's log as it stands (its file, size and time), to tell whether the game wrote it since. */
function logStamp({ volume, latestLog = LATEST_LOG }: AutosaveOptions): string {
  try {
    const stat = volume.lstat(latestLog);
    return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : "absent";
  } catch (error) {
    return `unreadable ${(error as NodeJS.ErrnoException).code ?? ""}`;
  }
}

/**
 * `save-on`, once however many paths ask for it (the job's finally, a second signal): each waits for the same one.
 * Never throws; it leaves `atExit` once done.
 */
function resumer(options: AutosaveOptions, offSince: number): () => Promise<void> {
  const { panel, clock, logger, atExit } = options;
  let resuming: Promise<void> | undefined;
  const resume = () => {
    resuming ??= (async () => {
      try {
        await panel.command("save-on");
        logger.info(`save-on sent; autosave was off for ${((clock.now() - offSince) / 1000).toFixed(1)} s`);
      } catch (error) {
        logger.error(`could not turn autosave back on (${(error as Error).message}); run save-on in the console`);
      } finally {
        atExit?.delete(resume);
      }
    })();
    return resuming;
  };
  return resume;
}

/** save-all flush (save-off was taken), then the wait for the game's "Saved the game" in latest.log. */
async function flushAndConfirm(options: AutosaveOptions): Promise<Outcome> {
  const { panel, volume, latestLog = LATEST_LOG, logger } = options;
  const from = logEnd(volume, latestLog);
  const sent = options.clock.now();
  await panel.command("save-all flush");
  logger.info("save-off and save-all flush sent; waiting for the game to confirm");
  return waitForSaved(options, from, sent);
}

/**
 * Where the log ends before the flush: its lines after that are the game's answer. Undefined when there is no regular
 * file there: then a log the game starts is read from its beginning, and what is there instead is said by the wait.
 */
function logEnd(volume: VolumeDir, latestLog: string): FollowPosition | undefined {
  try {
    return positionAtEnd(volume, latestLog);
  } catch {
    return undefined;
  }
}

/**
 * Reads the log's new lines through game-log's follower (a regular file only, never blocking, whole lines, a rotated
 * or truncated log from its beginning, at most READ_BYTES a look) until the game's own "Saved the game", the save
 * timeout, or the run's abort.
 */
async function waitForSaved(
  options: AutosaveOptions,
  from: FollowPosition | undefined,
  sent: number,
): Promise<Outcome> {
  // Reading the new tail of latest.log is cheap; look often, the flush usually lands within a few hundred ms.
  const { clock, logger, saveTimeoutMs, pollMs = 25, signal, volume, latestLog = LATEST_LOG } = options;
  const deadline = clock.now() + saveTimeoutMs;
  const seen = { saved: false, problem: undefined as JobError | undefined };
  const log = new LogFollower({
    dir: volume,
    file: latestLog,
    resumeFrom: from,
    turnBytes: READ_BYTES,
    onLine: (line) => {
      if (isSavedTheGame(line)) seen.saved = true;
    },
    onProblem: (error) => {
      seen.problem ??= error;
    },
  });
  try {
    while (clock.now() < deadline && !signal?.aborted) {
      log.poll();
      if (seen.problem) return unusable(seen.problem, logger);
      if (seen.saved) {
        const flushMs = clock.now() - sent;
        logger.info(`the game confirmed: Saved the game, ${(flushMs / 1000).toFixed(1)} s after save-all flush`);
        return { mode: "flushed", note: "world flushed (save-all flush confirmed)", flushMs };
      }
      // An abort ends the pause at once (the sleep rejects); the loop then stops.
      await clock.sleep(pollMs, signal).catch(() => {});
    }
  } finally {
    log.stop();
  }
  if (signal?.aborted) {
    const note = `interrupted by ${String(signal.reason)} while waiting for "Saved the game"`;
    logger.info(`${note}; turning autosave back on`);
    return { mode: "flush-unconfirmed", note };
  }
  logger.warn(
    `no "Saved the game" in ${volume.display(latestLog)} within ${saveTimeoutMs / 1000} s; going on without the confirmation`,
  );
  return { mode: "flush-unconfirmed", note: "save-all flush not confirmed in time" };
}

/** A FIFO, a device or a link where the log belongs (never opened, never waited on): no confirmation to wait for. */
function unusable(problem: JobError, logger: Logger): Outcome {
  if (!(problem instanceof UnsafePathError)) throw problem;
  logger.warn(`${problem.message}: going on without the game's confirmation`);
  return { mode: "flush-unconfirmed", note: "save-all flush not confirmed (game log unusable)" };
}

/**
 * Only the game's own line counts: a main-thread INFO entry whose message is exactly "Saved the game", so a player
 * (`<Steve> Saved the game`) or /say (`[Server] ...`) cannot confirm the flush.
 */
function isSavedTheGame(line: string): boolean {
  const header = parseHeader(line.endsWith("\r") ? line.slice(0, -1) : line);
  return header?.level === "INFO" && isMainThread(header.thread) && header.message === "Saved the game";
}
