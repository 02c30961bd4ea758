import type { Clock } from "@mcops/core/clock";
import { BusyError, describeError, ExitCode, JobError, McopsError } from "@mcops/core/errors";
import { recordingLogger } from "@mcops/core/events";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, createPanelClient, type PanelClient, toolNotifier } from "@mcops/core/http";
import { pauseBackups } from "@mcops/core/lock";
import type { Logger } from "@mcops/core/log";
import { backupLockFile } from "@mcops/core/paths";
import type { ToolContext } from "@mcops/core/tool";
import { pingGame } from "@mcops/game-log/game-ping";
import type { RestartPlan } from "./settings.ts";

/** When the players are told, in seconds before the restart. */
const MARKS = [300, 180, 120, 60, 30, 10, 5, 4, 3, 2, 1];

export function schedule(countdownMs: number): number[] {
  const total = Math.round(countdownMs / 1000);
  const marks = MARKS.filter((s) => s <= total);
  return marks[0] === total ? marks : [total, ...marks].filter((s) => s > 0);
}

function say(seconds: number): string {
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? "" : "s"}`;
  if (seconds > 60) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

/** A visible, coloured line for everyone: gold label, yellow text, red in the last ten seconds. */
export function tellraw(seconds: number, reason: string | undefined): string {
  const text = `The server restarts in ${say(seconds)}${reason ? ` (${reason})` : ""}.`;
  return `tellraw @a ${JSON.stringify(["", { text: "[Restart] ", color: "gold", bold: true }, { text, color: seconds <= 10 ? "red" : "yellow" }])}`;
}

/**
 * How far a restart got, which decides what a failure tells the channel: nothing before the countdown (nobody was
 * told anything), "Restart failed" once the countdown began or the signal was attempted.
 */
type Stage = "checking" | "countdown" | "signal" | "sent";

interface Run {
  ctx: Pick<ToolContext, "paths" | "clock">;
  env: { GAME_ADDRESS: string };
  logger: Logger;
  panel: PanelClient;
  post: (title: string, description: string, colour: number) => Promise<unknown>;
  stage: Stage;
  /** A failure already logged and posted where it happened; the catch-all in runRestart leaves it alone. */
  reported?: unknown;
}

/**
 * docs/system.md 1.6 and 8: warn the players in game, then restart through the panel. Offline server: nothing to do (exit 75).
 * Nobody online (Server List Ping): no countdown. A console command that fails does not stop the restart; the server
 * stopping during the countdown does. Never in the middle of a backup: it waits for the backup lock before the
 * countdown and holds it until the server runs again. A failure is written to the restart log (and posted once the
 * players were warned or the signal was attempted), then thrown on: the exit code and stderr line stay runMain's.
 */
export async function runRestart(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr">,
  options: RestartPlan,
): Promise<number> {
  const countdownMs = options.countdownMs ?? 5 * 60_000;
  const marks = schedule(countdownMs);
  if (options.dryRun) {
    ctx.stdout.write(
      `Restart plan (nothing done, --dry-run):\n${marks.map((s) => `  at -${say(s)}: ${tellraw(s, options.reason)}\n`).join("")}  then: the restart power signal, and wait until the server runs again\n`,
    );
    return 0;
  }
  const env = options.settings;
  const logger = recordingLogger(ctx, "restart-with-warning");
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const panel: PanelClient = createPanelClient({
    url: env.CONTROL_URL,
    key: env.CONTROL_KEY,
    serverId: env.SERVER_ID,
    clock: ctx.clock,
  });
  const post = (title: string, description: string, colour: number) =>
    notifier.send({ title, description, colour, category: "restart" });
  const run: Run = { ctx, env, logger, panel, post, stage: "checking" };
  try {
    return await restart(run, options, marks);
  } catch (failure) {
    if (failure !== run.reported) {
      const { message, line } = explain(failure);
      // runMain prints the error line on stderr: here it goes to the log file only.
      logger.error(`restart failed: ${line}`, { echo: false });
      if (run.stage === "countdown") {
        await post("Restart failed", `The server was not restarted: ${message}`, COLOURS.error);
      } else if (run.stage !== "checking") {
        await post("Restart failed", `The restart signal failed: ${message}`, COLOURS.error);
      }
    }
    throw failure;
  }
}

/** The error as the log line and the message say it: what went wrong, where, and what to do. */
function explain(failure: unknown): { message: string; line: string } {
  if (failure instanceof McopsError) return { message: failure.message, line: describeError(failure) };
  const message = `unexpected error: ${describeError(failure)}`;
  return { message, line: message };
}

const isDown = (state: string | undefined): boolean => state === "offline" || state === "stopping";

async function restart(run: Run, options: RestartPlan, marks: number[]): Promise<number> {
  const { ctx, logger, panel, post } = run;
  const state = (await panel.resources()).state;
  if (isDown(state)) {
    logger.info(`the server is ${state}: nothing to restart`);
    return ExitCode.busy;
  }

  // Never in the middle of a backup: the lock is taken before anyone is warned, and held until the server is back.
  const lockWaitMs = options.lockWaitMs ?? 30 * 60_000;
  let waited = false;
  const lock = await pauseBackups(backupLockFile(ctx.paths), {
    tool: "restart-with-warning",
    waitMs: lockWaitMs,
    clock: ctx.clock,
    onWait: (busy) => {
      waited = true;
      logger.info(`${busy.message}: waiting for it before restarting`);
    },
  }).catch(async (failure: unknown) => {
    if (failure instanceof BusyError) {
      // The run ends with the busy error's own line on stderr: this one is for the log file.
      logger.error(`a backup was still running after ${formatDuration(lockWaitMs)}: restart skipped`, { echo: false });
      await post("Restart skipped", "A backup was still running; the server was not restarted.", COLOURS.error);
      run.reported = failure;
    }
    throw failure;
  });
  try {
    if (waited) {
      const now = (await panel.resources()).state;
      if (isDown(now)) {
        logger.info(`the server is ${now} after the backup: nothing to restart`);
        return ExitCode.busy;
      }
    }
    return await countdownAndRestart(run, options, marks);
  } finally {
    lock.release();
  }
}

async function countdownAndRestart(run: Run, options: RestartPlan, marks: number[]): Promise<number> {
  const { ctx, logger, panel, post } = run;
  const address = run.env.GAME_ADDRESS;
  const { ping, error } = await pingGame(address);
  const started = ctx.clock.now();
  let countdown = "";
  if (ping && ping.online === 0) {
    countdown = "nobody was online, so no countdown";
    logger.info(`no players online (Server List Ping on ${address}): restarting now, without a countdown`);
  } else {
    if (error) logger.warn(`no answer to the Server List Ping on ${address} (${error}); counting down anyway`);
    const who = ping ? `${ping.online} player${ping.online === 1 ? "" : "s"} online` : "players unknown";
    logger.info(`countdown of ${say(marks[0] ?? 0)} starts (${who})${options.reason ? `: ${options.reason}` : ""}`);
    run.stage = "countdown";
    await post(
      "Scheduled restart warning",
      `The server restarts in ${say(marks[0] ?? 0)}${options.reason ? ` (${options.reason})` : ""}.`,
      COLOURS.warning,
    );
    for (const [i, seconds] of marks.entries()) {
      if (i > 0) {
        await ctx.clock.sleep(((marks[i - 1] as number) - seconds) * 1000);
        const now = (await panel.resources().catch(() => undefined))?.state;
        if (isDown(now)) {
          logger.warn(`the server stopped during the countdown (${say(seconds)} left): not restarting it`);
          await post(
            "Restart cancelled",
            `The server stopped during the countdown, ${say(seconds)} before the restart.`,
            COLOURS.info,
          );
          return ExitCode.busy;
        }
      }
      try {
        await panel.command(tellraw(seconds, options.reason));
        logger.info(`countdown: ${say(seconds)} left`);
      } catch (failure) {
        logger.warn(`countdown message at ${say(seconds)} failed (${(failure as Error).message}); going on`);
      }
    }
    await ctx.clock.sleep((marks.at(-1) ?? 0) * 1000);
    countdown = `after a ${say(marks[0] ?? 0)} countdown`;
  }

  logger.info(`sending the restart signal (${countdown})`);
  run.stage = "signal";
  const sentAt = ctx.clock.now();
  await panel.power("restart");
  run.stage = "sent";
  await post("Restart triggered", `The server is restarting (${countdown}).`, COLOURS.warning);
  try {
    await waitForRestart(panel, ctx.clock, sentAt, options.upTimeoutMs ?? 5 * 60_000);
  } catch (failure) {
    const reason = (failure as Error).message;
    logger.error(`the server is not running again: ${reason}`);
    await post("Restart failed", `The server did not come back: ${reason}`, COLOURS.error);
    run.reported = new JobError(`the server did not come back after the restart: ${reason}`, {
      hint: "look at the panel console and the server's latest.log",
    });
    throw run.reported;
  }
  const took = formatDuration(ctx.clock.now() - started);
  logger.info(`the server is running again (${took} after the countdown began)`);
  await post("Server restarted", `Running again, ${took} after the restart began (${countdown}).`, COLOURS.success);
  return 0;
}

/**
 * After the restart signal, until the server runs again (at most `timeoutMs` from the signal). A real panel hands the
 * signal to Wings asynchronously and caches the resources answer (about 20 s), so its first answers can still say
 * "running" about the old process. The restart counts as under way once the server has left "running" (stopping,
 * offline or starting) or its uptime is shorter than the time since the signal (a new process); only then does
 * "running" mean the server is back.
 */
async function waitForRestart(panel: PanelClient, clock: Clock, sentAt: number, timeoutMs: number): Promise<void> {
  const deadline = sentAt + timeoutMs;
  let interval = 250;
  for (;;) {
    const now = await panel.resources();
    if (now.state !== "running") break;
    if (now.uptimeMs > 0 && now.uptimeMs < clock.now() - sentAt) return;
    if (clock.now() >= deadline) {
      throw new JobError(
        `the panel still says it is running the old process ${formatDuration(timeoutMs)} after the restart signal`,
      );
    }
    // The same pace as the panel client's waitForState: quick looks first, then every 5 s.
    await clock.sleep(Math.min(interval, Math.max(1, deadline - clock.now())));
    interval = Math.min(5000, interval * 2);
  }
  await panel.waitForState("running", { timeoutMs: Math.max(0, deadline - clock.now()) });
}
