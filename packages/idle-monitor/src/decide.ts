import { isoSeconds } from "@mcops/core/clock";
import { formatDuration } from "@mcops/core/format";
import type { IdleStateFile } from "@mcops/core/records";

/**
 * The idle monitor's decision, as a pure function of what it remembers, what it sees now and the settings, so that
 * every rule is tested on its own. The loop around it (monitor.ts) observes (observe.ts), acts (act.ts) and saves the
 * state (state.ts).
 */

/**
 * What the monitor remembers between polls and across restarts (the state file, idle-monitor.json): its schema is
 * core's (records.ts, IdleStateFile), which the dashboard reads the health figures with. Times in ms since the epoch.
 */
export type IdleState = IdleStateFile;

type ServerState = "offline" | "starting" | "running" | "stopping" | "unknown";

export interface Observation {
  state: ServerState;
  /** undefined: nobody could tell (no ping answer, no log). */
  players: number | undefined;
  names: string[];
  /** Where the count came from. */
  source: "ping" | "log" | "panel";
  /** Why a source was not used (for the log line). */
  notes: string[];
  /** What the container uses, by the panel's resources; undefined when the panel did not answer. */
  memoryBytes?: number | undefined;
}

export interface IdleSettings {
  idleAfterMs: number;
  cooldownMs: number;
  /** undefined: never stop the server. */
  stopAfterMs: number | undefined;
  /** While people play, a backup once this long has passed since the last (BACKUP_WHILE_PLAYING); undefined: none. */
  whilePlayingMs?: number | undefined;
}

/** "recovery": a backup while people play (BACKUP_WHILE_PLAYING); "backup": the idle backup. */
export type Action = "none" | "backup" | "recovery" | "stop";

export interface Decision {
  state: IdleState;
  action: Action;
  /** The log line: players, source, idle for, next action. */
  line: string;
}

function who(observation: Observation): string {
  const { players, names, source, state } = observation;
  const count = players === undefined ? "players unknown" : `${players} player${players === 1 ? "" : "s"} online`;
  const listed = names.length ? ` (${names.join(", ")})` : "";
  const notes = observation.notes.length ? `; ${observation.notes.join("; ")}` : "";
  return `${count}${listed} [${source}], server ${state}${notes}`;
}

/**
 * The last successful backup, as the recovery points count from it: one that ended within a period of a recovery
 * point's start is that recovery point, counted from its start (the world it saved), so that the points stay an hour
 * apart instead of drifting by each backup's length.
 */
function recoveryAnchor(state: IdleState, every: number): number {
  const ok = state.lastBackupOk ?? 0;
  const started = state.lastPlayBackup;
  return started !== undefined && ok >= started && ok - started < every ? started : ok;
}

/**
 * While people play, a recovery point once BACKUP_WHILE_PLAYING has passed since the newest of: the last successful
 * backup (see recoveryAnchor), the last recovery point started (a failed one is not retried every poll), the start of
 * this session of play.
 * So a VM that dies mid-session loses at most that much play.
 */
function whilePlaying(state: IdleState, settings: IdleSettings, now: number, seen: string): Decision {
  const every = settings.whilePlayingMs;
  if (every === undefined) return { state, action: "none", line: `${seen}: active` };
  const since = Math.max(recoveryAnchor(state, every), state.lastPlayBackup ?? 0, state.activeSince ?? now);
  if (now - since < every) {
    return { state, action: "none", line: `${seen}: active; recovery point in ${formatDuration(since + every - now)}` };
  }
  const last = state.lastBackupOk === undefined ? "no backup yet" : `last backup ${isoSeconds(state.lastBackupOk)}`;
  return { state, action: "recovery", line: `${seen}: active, ${last}: recovery point now` };
}

/**
 * - Someone online: activity now; no idle period.
 * - Nobody can tell (the server runs, but neither the ping nor the log answers): not idle, nothing done.
 * - Nobody online: the idle period runs from the first empty poll. After IDLE_AFTER, one backup, only if someone played
 *   since the last successful backup, and not within IDLE_COOLDOWN of the previous idle backup.
 * - With IDLE_STOP_AFTER: once nobody played since a successful backup and the server stayed empty that long, stop it.
 */
export function decide(
  previous: IdleState,
  observation: Observation,
  settings: IdleSettings,
  now: number,
  /** The newest successful backup in mc-backup.log (cron's 06:00 backup counts too). */
  backupLogDone: number | undefined,
): Decision {
  const state: IdleState = { ...previous };
  if (backupLogDone !== undefined && (state.lastBackupOk === undefined || backupLogDone > state.lastBackupOk)) {
    state.lastBackupOk = backupLogDone;
  }
  const seen = who(observation);
  if (observation.players === undefined) {
    state.idleSince = undefined;
    return { state, action: "none", line: `${seen}: cannot tell whether anyone plays; not counting idle time` };
  }
  if (observation.players > 0) {
    state.lastActivity = now;
    state.idleSince = undefined;
    state.activeSince ??= now;
    return whilePlaying(state, settings, now, seen);
  }

  state.activeSince = undefined;
  state.idleSince ??= now;
  const idleFor = now - state.idleSince;
  const idle = `${seen}, empty for ${formatDuration(idleFor)}`;
  const played =
    state.lastActivity !== undefined && (state.lastBackupOk === undefined || state.lastActivity > state.lastBackupOk);

  if (played) {
    if (idleFor < settings.idleAfterMs) {
      return {
        state,
        action: "none",
        line: `${idle}; idle backup in ${formatDuration(settings.idleAfterMs - idleFor)}`,
      };
    }
    if (state.lastIdleBackup !== undefined && now - state.lastIdleBackup < settings.cooldownMs) {
      return {
        state,
        action: "none",
        line: `${idle}; idle backup waits for the cooldown until ${isoSeconds(state.lastIdleBackup + settings.cooldownMs)}`,
      };
    }
    return { state, action: "backup", line: `${idle}; someone played since the last backup: idle backup now` };
  }

  const saved = state.lastBackupOk === undefined ? "" : ` (last backup ${isoSeconds(state.lastBackupOk)})`;
  const nothing = state.lastActivity === undefined ? "nobody has played yet" : "nobody played since the last backup";
  if (settings.stopAfterMs !== undefined && observation.state === "running" && state.lastBackupOk !== undefined) {
    // At most one stop per IDLE_STOP_AFTER: the panel may still say running for a moment after the stop signal.
    const due = Math.max(state.idleSince + settings.stopAfterMs, (state.idleStop ?? 0) + settings.stopAfterMs);
    if (now >= due) {
      return { state, action: "stop", line: `${idle}; ${nothing}${saved}: stopping the server` };
    }
    return { state, action: "none", line: `${idle}; ${nothing}${saved}; idle stop in ${formatDuration(due - now)}` };
  }
  return { state, action: "none", line: `${idle}; ${nothing}${saved}: nothing to do` };
}
