import { ExitCode } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, type Notifier, type PanelClient } from "@mcops/core/http";
import { isHolderAlive, readLockHolder } from "@mcops/core/lock";
import type { Logger } from "@mcops/core/log";
import { backupLockFile } from "@mcops/core/paths";
import type { RunResult } from "@mcops/core/runner";
import type { ToolContext } from "@mcops/core/tool";
import type { Action, Decision, IdleState } from "./decide.ts";
import type { MonitorSettings } from "./settings.ts";
import { writeState } from "./state.ts";

/** What the actions work with: the monitor's settings and means, what it remembers, and how it says a failure. */
export interface Actor {
  ctx: Pick<ToolContext, "paths" | "clock" | "runner" | "signal">;
  settings: MonitorSettings;
  logger: Logger;
  notifier: Notifier;
  panel: PanelClient;
  /** The state of this decision: each action records in it what it did. */
  state: IdleState;
  /**
   * The boot id read for this decision (undefined: it could not be read). What the Worker is told; the state's
   * bootId is only what the state was saved on, which on a VM revived from a snapshot is the boot hibernated.
   */
  bootId?: string | undefined;
  /** An ERROR line, and for --once the failure the run ends with. */
  fail(line: string): void;
}

/** How long an idle stop may take before it counts as failed (the game saves every world first). */
const STOP_TIMEOUT_MS = 5 * 60_000;

/** Carries out a decision (its line logged); the action taken: a backup that waits for a running one is none. */
export async function act(actor: Actor, decision: Decision, now: number): Promise<Action> {
  if (decision.action === "backup" || decision.action === "recovery") {
    return (await backup(actor, now, decision.line, decision.action)) ? decision.action : "none";
  }
  if (decision.action === "stop") await stop(actor, now, decision.line);
  else actor.logger.info(decision.line);
  return decision.action;
}

/** What each kind of backup says when it starts. */
function announcement(state: IdleState, now: number, kind: "backup" | "recovery") {
  if (kind === "recovery") {
    const since = state.activeSince === undefined ? "" : ` for ${formatDuration(now - state.activeSince)}`;
    return {
      title: "Recovery point",
      description: `People have been playing${since}; backing up so that a crash loses at most BACKUP_WHILE_PLAYING of play.`,
    };
  }
  const since = state.idleSince === undefined ? "" : ` for ${formatDuration(now - state.idleSince)}`;
  return {
    title: "Idle backup triggered",
    description: `Nobody has played${since}; backing up what was played since the last backup.`,
  };
}

/**
 * The idle backup, or a recovery point while people play: never while the backup lock is held (a backup, a restore,
 * a drill, or a restart's countdown, which holds it until the server runs again). False when nothing was started.
 */
async function backup(actor: Actor, now: number, line: string, kind: "backup" | "recovery"): Promise<boolean> {
  const { ctx, settings, logger, state } = actor;
  const holder = readLockHolder(backupLockFile(ctx.paths));
  if (holder && isHolderAlive(holder)) {
    logger.info(`${line} — but a backup is running (${holder.tool}, pid ${holder.pid}): waiting for it`);
    return false;
  }
  logger.info(line);
  if (kind === "recovery") state.lastPlayBackup = now;
  else state.lastIdleBackup = now;
  writeState(settings.stateFile, state);
  await actor.notifier.send({ ...announcement(state, now, kind), colour: COLOURS.info, category: "idle" });
  const result = await ctx.runner.run(settings.backupCommand, [], {
    signal: ctx.signal,
    onStderrLine: (l) => logger.debug(`backup: ${l}`),
  });
  backupEnded(actor, result, now, kind);
  return true;
}

function backupEnded(actor: Actor, result: RunResult, startedAt: number, kind: "backup" | "recovery"): void {
  const { clock } = actor.ctx;
  const what = kind === "recovery" ? "recovery point" : "idle backup";
  if (result.code === ExitCode.ok) {
    actor.state.lastBackupOk = clock.now();
    actor.logger.info(`${what} done (${formatDuration(clock.now() - startedAt)})`);
  } else if (result.code === ExitCode.busy) {
    actor.logger.info(`${what} skipped: another backup was running (exit ${ExitCode.busy})`);
  } else {
    const why = result.code === null ? (result.signal ?? "did not start") : `exit ${result.code}`;
    const said = result.stderr.trim().split("\n").at(-1);
    const next = kind === "recovery" ? "next try after BACKUP_WHILE_PLAYING" : "next try after the cooldown";
    actor.fail(`${what} failed (${why})${said ? `: ${said}` : ""}; ${next}`);
  }
}

async function stop(actor: Actor, now: number, line: string): Promise<void> {
  const { ctx, panel, state, logger } = actor;
  logger.info(line);
  try {
    await panel.power("stop");
    // The panel answers before Wings acts, and caches the state it reports: "stopped" is said, and the stop command
    // (hibernation) run, only once the panel says offline.
    await panel.waitForState("offline", { timeoutMs: STOP_TIMEOUT_MS, signal: ctx.signal });
  } catch (error) {
    actor.fail(`idle stop failed: ${(error as Error).message}`);
    return;
  }
  state.idleStop = now;
  const since = state.idleSince === undefined ? "" : ` after ${formatDuration(now - state.idleSince)} without players`;
  await actor.notifier.send({
    title: "Server stopped (idle)",
    description: `Nobody played${since}, and the world is backed up. Start it again from the panel.`,
    colour: COLOURS.info,
    category: "idle",
  });
  await runStopCommand(actor);
}

/** The executable run after an idle stop (IDLE_STOP_COMMAND, e.g. hibernation), if there is one. */
async function runStopCommand(actor: Actor): Promise<void> {
  const { stopCommand } = actor.settings;
  if (!stopCommand) return;
  const result = await actor.ctx.runner.run(stopCommand, [], { signal: actor.ctx.signal });
  if (result.code === ExitCode.ok) actor.logger.info(`ran ${stopCommand}`);
  else actor.fail(`${stopCommand} failed (exit ${result.code ?? result.signal})`);
}
