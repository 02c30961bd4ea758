import type { McopsError } from "@mcops/core/errors";
import { readRecords } from "@mcops/core/events";
import { COLOURS, type Notifier, type PanelClient, PanelError } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import { lastBackupDone, lastBackupEnd, lastDrill, type RecordOf } from "@mcops/core/records";
import { UnsafePathError, VolumeDir } from "@mcops/core/volume";
import { LOG_TAIL_BYTES, playersInGameLog } from "@mcops/game-log/game-log";
import { pingGame } from "@mcops/game-log/game-ping";
import type { BackupEnd } from "./backup-age.ts";
import type { Observation } from "./decide.ts";
import type { MonitorSettings } from "./settings.ts";

export { LOG_TAIL_BYTES };

/**
 * The players the end of WORLD_DIR/logs/latest.log says are online (game-log's playersInGameLog, which reads at most
 * LOG_TAIL_BYTES of it without following links); undefined when there is no log.
 */
export function playersInLog(worldDir: string, maxBytes = LOG_TAIL_BYTES): string[] | undefined {
  const volume = VolumeDir.open(worldDir);
  try {
    return playersInGameLog(volume, maxBytes);
  } finally {
    volume.close();
  }
}

/** Hears, each time the game log is consulted, why it was refused (a link, a FIFO, ...) or undefined when it was read. */
type OnGameLog = (problem: McopsError | undefined) => void;

/**
 * Who plays: the Server List Ping on the game port; if it does not answer, the players the game log says are online;
 * if the log cannot be read either, the panel's state alone (offline means nobody; running means nobody can tell).
 */
export async function observe(panel: PanelClient, settings: MonitorSettings, onLog?: OnGameLog): Promise<Observation> {
  const notes: string[] = [];
  let state: Observation["state"];
  let memoryBytes: number | undefined;
  try {
    const resources = await panel.resources();
    state = resources.state;
    memoryBytes = resources.memoryBytes;
  } catch (error) {
    // A key the panel refuses will not get better by itself: no decision, an ERROR line each time.
    if (error instanceof PanelError && error.kind === "auth") throw error;
    state = "unknown";
    notes.push(`panel: ${(error as Error).message}`);
  }
  if (state === "offline" || state === "stopping") {
    return { state, players: 0, names: [], source: "panel", notes, memoryBytes };
  }
  const { ping, error } = await pingGame(settings.gameAddress);
  if (ping) return { state, players: ping.online, names: ping.names, source: "ping", notes, memoryBytes };
  notes.push(`no ping answer on ${settings.gameAddress} (${error})`);
  if (state === "starting") return { state, players: 0, names: [], source: "panel", notes, memoryBytes };
  return { state, ...playersByLog(settings.worldDir, notes, onLog), notes, memoryBytes };
}

/** The game log's players, else nobody can tell (and `notes` says why). */
function playersByLog(
  worldDir: string,
  notes: string[],
  onLog: OnGameLog | undefined,
): Pick<Observation, "players" | "names" | "source"> {
  try {
    const names = playersInLog(worldDir);
    if (names) {
      onLog?.(undefined);
      return { players: names.length, names, source: "log" };
    }
    notes.push("no log (ENOENT)");
  } catch (failure) {
    if (failure instanceof UnsafePathError) onLog?.(failure);
    notes.push(`no log (${(failure as NodeJS.ErrnoException).code ?? (failure as Error).message})`);
  }
  return { players: undefined, names: [], source: "panel" };
}

/** What the backup's records say: the newest successful backup, the newest run's end, and the last drill. */
export function backupLogFacts(paths: Pick<Paths, "logDir" | "stateDir">): {
  done: number | undefined;
  end: BackupEnd | undefined;
  drill: RecordOf<"drill.done" | "drill.failed"> | undefined;
} {
  try {
    const records = readRecords(paths, "backup");
    return { done: lastBackupDone(records)?.at, end: lastBackupEnd(records), drill: lastDrill(records) };
  } catch {
    return { done: undefined, end: undefined, drill: undefined };
  }
}

/** Says a refused game log: one WARN line and one post per distinct problem, not one per poll. */
export interface GameLogReporter {
  onLog: OnGameLog;
  /** The post about a refused game log, awaited by the decision that found it (so --once does not exit before it). */
  posted(): Promise<void>;
}

export function gameLogReporter(logger: Logger, notifier: Notifier): GameLogReporter {
  // A log that is a link, a FIFO, a device or a directory: said once for as long as the problem lasts.
  let said: string | undefined;
  let post: Promise<unknown> | undefined;
  return {
    onLog(problem) {
      if (problem && problem.message !== said) {
        logger.warn(`${problem.message}; not reading it${problem.hint ? ` — ${problem.hint}` : ""}`);
        // Said once per problem: the service keeps deciding by the panel's state meanwhile.
        post = notifier.send({
          title: "Game log not readable",
          description: `${problem.message}; while the game does not answer a ping, the idle monitor cannot tell who plays.`,
          colour: COLOURS.warning,
          category: "idle",
        });
      }
      said = problem?.message;
    },
    async posted() {
      await post;
      post = undefined;
    },
  };
}
