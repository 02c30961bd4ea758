import { closeSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Clock } from "@mcops/core/clock";
import { loadBackupEnv } from "@mcops/core/config";
import { JobError, type McopsError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { isErrno, writeFileAtomic } from "@mcops/core/fs";
import {
  COLOURS,
  createPanelClient,
  type Notifier,
  type PanelClient,
  PanelError,
  toolNotifier,
} from "@mcops/core/http";
import { isHolderAlive, readLockHolder } from "@mcops/core/lock";
import { type Logger, toolLogger, type Writer } from "@mcops/core/log";
import { readLogTail } from "@mcops/core/log-lines";
import { backupLockFile, type Paths } from "@mcops/core/paths";
import type { Runner } from "@mcops/core/runner";
import { readRange, UnsafePathError, VolumeDir } from "@mcops/core/volume";
import { parseGameLog, playersOnline } from "@mcops/game-log/game-log";
import { pingGame } from "@mcops/game-log/game-ping";
import { type Decision, decide, type IdleSettings, type IdleState, type Observation } from "./decide.ts";

export { systemClock } from "@mcops/core/clock";
// What cli.ts needs of core, named here so that the bundle keeps only what the tool uses.
export { resolvePaths } from "@mcops/core/paths";

export interface MonitorContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stderr: Writer & { isTTY?: boolean };
  /** Ends the service loop (SIGTERM). */
  signal?: AbortSignal;
  runner?: Runner;
}

/** Flags; each wins over its backup.env field. */
export interface MonitorFlags {
  idleAfter?: string | undefined;
  cooldown?: string | undefined;
  poll?: string | undefined;
  stopAfter?: string | undefined;
  gameAddress?: string | undefined;
  backupCommand?: string | undefined;
  stopCommand?: string | undefined;
}

export interface MonitorSettings extends IdleSettings {
  pollMs: number;
  gameAddress: string;
  /** The server volume; its logs/latest.log is the fallback when the ping does not answer. */
  worldDir: string;
  backupCommand: string;
  stopCommand: string | undefined;
  stateFile: string;
  backupLog: string;
}

/**
 * The `backup` installed beside this tool: install.sh puts the executables in <prefix>/lib and their launchers in
 * <prefix>, so from <prefix>/lib/idle-monitor.mjs it is <prefix>/backup, whatever --prefix was. /opt/mc-tools/backup
 * (the default prefix) when there is none, as when run from a clone.
 */
export function defaultBackupCommand(self: string = import.meta.url): string {
  const beside = fileURLToPath(new URL("../backup", self));
  return existsSync(beside) ? beside : "/opt/mc-tools/backup";
}

export function loadSettings(ctx: MonitorContext, flags: MonitorFlags = {}) {
  const env = loadBackupEnv(
    [
      "CONTROL_URL",
      "CONTROL_KEY",
      "SERVER_ID",
      "WORLD_DIR",
      "GAME_ADDRESS",
      "IDLE_AFTER",
      "IDLE_COOLDOWN",
      "IDLE_POLL",
      "IDLE_STOP_AFTER",
      "IDLE_BACKUP_COMMAND",
      "IDLE_STOP_COMMAND",
    ],
    {
      paths: ctx.paths,
      env: ctx.env,
      flags: {
        IDLE_AFTER: flags.idleAfter,
        IDLE_COOLDOWN: flags.cooldown,
        IDLE_POLL: flags.poll,
        IDLE_STOP_AFTER: flags.stopAfter,
        GAME_ADDRESS: flags.gameAddress,
        IDLE_BACKUP_COMMAND: flags.backupCommand,
        IDLE_STOP_COMMAND: flags.stopCommand,
      },
      flagNames: {
        IDLE_COOLDOWN: "cooldown",
        IDLE_POLL: "poll",
        IDLE_STOP_AFTER: "stop-after",
        IDLE_BACKUP_COMMAND: "backup-command",
        IDLE_STOP_COMMAND: "stop-command",
      },
    },
  );
  const settings: MonitorSettings = {
    idleAfterMs: env.IDLE_AFTER ?? 30 * 60_000,
    cooldownMs: env.IDLE_COOLDOWN ?? 2 * 3600_000,
    stopAfterMs: env.IDLE_STOP_AFTER,
    pollMs: env.IDLE_POLL ?? 60_000,
    gameAddress: env.GAME_ADDRESS ?? "127.0.0.1:25565",
    worldDir: env.WORLD_DIR,
    backupCommand: env.IDLE_BACKUP_COMMAND ?? defaultBackupCommand(),
    stopCommand: env.IDLE_STOP_COMMAND,
    stateFile: join(ctx.paths.stateDir, "idle-monitor.json"),
    backupLog: join(ctx.paths.logDir, "mc-backup.log"),
  };
  return { env, settings };
}

// ---------------------------------------------------------------------------------------------------------------
// State file: written whole to a temporary file and renamed, so a crash never leaves half of it.

export function readState(file: string): IdleState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return {};
    throw error;
  }
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const time = (key: string) => (typeof value[key] === "number" ? (value[key] as number) : undefined);
    return {
      lastActivity: time("lastActivity"),
      idleSince: time("idleSince"),
      lastIdleBackup: time("lastIdleBackup"),
      lastBackupOk: time("lastBackupOk"),
      idleStop: time("idleStop"),
    };
  } catch {
    return {};
  }
}

export function writeState(file: string, state: IdleState): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The time of the newest `=== Backup done ===` line in mc-backup.log (its last 256 KiB), if any. */
export function lastBackupDone(file: string): number | undefined {
  try {
    return readLogTail(file).findLast((l) => l.level === "INFO" && l.text.startsWith("=== Backup done ==="))?.time;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** The game log, below WORLD_DIR. */
const LATEST_LOG = "logs/latest.log";

/**
 * How much of the end of latest.log the fallback reads. The players online are those who joined and did not leave since
 * the last start; a day's log of a busy server is a few MiB, so 8 MiB holds the start or the joins of nearly every
 * session, while a log of any size (or one made huge on purpose) costs at most 8 MiB and a parse of that.
 */
export const LOG_TAIL_BYTES = 8 * 1024 * 1024;

/**
 * The players the end of the game log says are online: the last `maxBytes` of WORLD_DIR/logs/latest.log, its partial
 * first line dropped; undefined when there is no log. The log is reached without following links and read only if it
 * is a regular file: a link, a FIFO, a device or a directory throws its UnsafePathError, and nothing is read.
 */
export function playersInLog(worldDir: string, maxBytes = LOG_TAIL_BYTES): string[] | undefined {
  const volume = VolumeDir.open(worldDir);
  try {
    const file = volume.tryOpenFile(LATEST_LOG);
    if (!file) return undefined;
    try {
      const start = Math.max(0, file.stat.size - maxBytes);
      let bytes = readRange(file.fd, start, Math.min(file.stat.size, maxBytes));
      if (start > 0) {
        const nl = bytes.indexOf(10);
        bytes = nl < 0 ? bytes.subarray(0, 0) : bytes.subarray(nl + 1);
      }
      return playersOnline(parseGameLog(bytes.toString("utf8")));
    } finally {
      closeSync(file.fd);
    }
  } finally {
    volume.close();
  }
}

/**
 * Who plays: the Server List Ping on the game port; if it does not answer, the players the game log says are online;
 * if the log cannot be read either, the panel's state alone (offline means nobody; running means nobody can tell).
 * `onLog` hears, each time the log is consulted, why it was refused (a link, a FIFO, ...) or undefined when it was read.
 */
export async function observe(
  panel: PanelClient,
  settings: MonitorSettings,
  onLog?: (problem: McopsError | undefined) => void,
): Promise<Observation> {
  const notes: string[] = [];
  let state: Observation["state"];
  try {
    state = (await panel.resources()).state;
  } catch (error) {
    // A key the panel refuses will not get better by itself: no decision, an ERROR line each time.
    if (error instanceof PanelError && error.kind === "auth") throw error;
    state = "unknown";
    notes.push(`panel: ${(error as Error).message}`);
  }
  if (state === "offline" || state === "stopping") {
    return { state, players: 0, names: [], source: "panel", notes };
  }
  const { ping, error } = await pingGame(settings.gameAddress);
  if (ping) return { state, players: ping.online, names: ping.names, source: "ping", notes };
  notes.push(`no ping answer on ${settings.gameAddress} (${error})`);
  if (state === "starting") return { state, players: 0, names: [], source: "panel", notes };
  try {
    const names = playersInLog(settings.worldDir);
    if (names) {
      onLog?.(undefined);
      return { state, players: names.length, names, source: "log", notes };
    }
    notes.push("no log (ENOENT)");
  } catch (failure) {
    if (failure instanceof UnsafePathError) onLog?.(failure);
    notes.push(`no log (${(failure as NodeJS.ErrnoException).code ?? (failure as Error).message})`);
  }
  return { state, players: undefined, names: [], source: "panel", notes };
}

/** How long an idle stop may take before it counts as failed (the game saves every world first). */
export const STOP_TIMEOUT_MS = 5 * 60_000;

export interface Monitor {
  /**
   * One decision: observe, decide, act, save. A failure (the idle backup or stop failed, the panel refused the key, or
   * anything unexpected) is logged and returned, not thrown.
   */
  tick(): Promise<Decision & { error?: Error }>;
  readonly state: IdleState;
  readonly settings: MonitorSettings;
}

/** `once`: the failure of the one decision ends the run with it (exit code, one line), so its log line is not echoed. */
export function createMonitor(ctx: MonitorContext, flags: MonitorFlags = {}, once = false): Monitor {
  const { env, settings } = loadSettings(ctx, flags);
  const logger: Logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-idle-monitor.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  let failure: Error | undefined;
  /** An ERROR line, and for --once the failure the run ends with. */
  const fail = (line: string, error: Error = new JobError(line)): void => {
    logger.error(line, { echo: !once });
    failure ??= error;
  };
  const notifier: Notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const panel = createPanelClient({
    url: env.CONTROL_URL,
    key: env.CONTROL_KEY,
    serverId: env.SERVER_ID,
    clock: ctx.clock,
    maxAttempts: 2,
  });
  // zx is loaded only when there is something to run: the service spends its days idle.
  const runner: Runner = ctx.runner ?? {
    run: async (...args) => (await import("@mcops/core/runner")).zxRunner.run(...args),
  };
  let state = readState(settings.stateFile);
  // A log that is a link, a FIFO, a device or a directory: one WARN line per distinct problem, not one per poll.
  let logProblem: string | undefined;
  /** The post about a refused game log, awaited by the decision that found it (so --once does not exit before it). */
  let logProblemPost: Promise<unknown> | undefined;
  const onLog = (problem: McopsError | undefined) => {
    if (problem && problem.message !== logProblem) {
      logger.warn(`${problem.message}; not reading it${problem.hint ? ` — ${problem.hint}` : ""}`);
      // Said once per problem: the service keeps deciding by the panel's state meanwhile.
      logProblemPost = notifier.send({
        title: "Game log not readable",
        description: `${problem.message}; while the game does not answer a ping, the idle monitor cannot tell who plays.`,
        colour: COLOURS.warning,
        category: "idle",
      });
    }
    logProblem = problem?.message;
  };

  /** False when a backup already runs (nothing started). */
  async function backup(now: number, line: string): Promise<boolean> {
    const holder = readLockHolder(backupLockFile(ctx.paths));
    if (holder && isHolderAlive(holder)) {
      logger.info(`${line} — but a backup is running (${holder.tool}, pid ${holder.pid}): waiting for it`);
      return false;
    }
    logger.info(line);
    state.lastIdleBackup = now;
    writeState(settings.stateFile, state);
    const since = state.idleSince === undefined ? "" : ` for ${formatDuration(now - state.idleSince)}`;
    await notifier.send({
      title: "Idle backup triggered",
      description: `Nobody has played${since}; backing up what was played since the last backup.`,
      colour: COLOURS.info,
      category: "idle",
    });
    const result = await runner.run(settings.backupCommand, [], {
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onStderrLine: (l) => logger.debug(`backup: ${l}`),
    });
    if (result.code === 0) {
      state.lastBackupOk = ctx.clock.now();
      logger.info(`idle backup done (${formatDuration(ctx.clock.now() - now)})`);
    } else if (result.code === 75) {
      logger.info("idle backup skipped: another backup was running (exit 75)");
    } else {
      const why = result.code === null ? (result.signal ?? "did not start") : `exit ${result.code}`;
      const said = result.stderr.trim().split("\n").at(-1);
      fail(`idle backup failed (${why})${said ? `: ${said}` : ""}; next try after the cooldown`);
    }
    return true;
  }

  async function stop(now: number, line: string): Promise<void> {
    logger.info(line);
    try {
      await panel.power("stop");
      // The panel answers before Wings acts, and caches the state it reports: "stopped" is said, and the stop command
      // (hibernation) run, only once the panel says offline.
      await panel.waitForState("offline", {
        timeoutMs: STOP_TIMEOUT_MS,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } catch (error) {
      fail(`idle stop failed: ${(error as Error).message}`);
      return;
    }
    state.idleStop = now;
    const since =
      state.idleSince === undefined ? "" : ` after ${formatDuration(now - state.idleSince)} without players`;
    await notifier.send({
      title: "Server stopped (idle)",
      description: `Nobody played${since}, and the world is backed up. Start it again from the panel.`,
      colour: COLOURS.info,
      category: "idle",
    });
    if (settings.stopCommand) {
      const result = await runner.run(settings.stopCommand, [], ctx.signal ? { signal: ctx.signal } : {});
      if (result.code === 0) logger.info(`ran ${settings.stopCommand}`);
      else fail(`${settings.stopCommand} failed (exit ${result.code ?? result.signal})`);
    }
  }

  return {
    settings,
    get state() {
      return state;
    },
    async tick() {
      failure = undefined;
      try {
        const now = ctx.clock.now();
        const observation = await observe(panel, settings, onLog);
        await logProblemPost;
        logProblemPost = undefined;
        const decision = decide(state, observation, settings, now, lastBackupDone(settings.backupLog));
        state = decision.state;
        let action = decision.action;
        if (action === "backup") action = (await backup(now, decision.line)) ? "backup" : "none";
        else if (action === "stop") await stop(now, decision.line);
        else logger.info(decision.line);
        writeState(settings.stateFile, state);
        return failure ? { ...decision, action, error: failure } : { ...decision, action };
      } catch (thrown) {
        const error = thrown instanceof Error ? thrown : new Error(String(thrown));
        fail(`no decision this time: ${error.message}`, error);
        return { state, action: "none", line: error.message, error };
      }
    },
  };
}

/** The service: a decision every IDLE_POLL until the signal; `once`: one decision. */
export async function runMonitor(ctx: MonitorContext, flags: MonitorFlags, once: boolean): Promise<number> {
  const monitor = createMonitor(ctx, flags, once);
  for (;;) {
    const decision = await monitor.tick();
    if (once) {
      if (decision.error) throw decision.error;
      return 0;
    }
    if (ctx.signal?.aborted) return 0;
    try {
      await ctx.clock.sleep(monitor.settings.pollMs, ctx.signal);
    } catch {
      return 0;
    }
  }
}
