import { createPanelClient, type PanelClient } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import { Restic, ResticError } from "./restic.ts";
import type { Settings } from "./settings.ts";

/**
 * restic and the panel as backup.env names them: what a snapshot of the world drives, and what backup's commands drive
 * the same way (restic's stderr heard through the job's log, stale locks cleared once, the panel's client).
 */

export function resticFor(
  ctx: Pick<ToolContext, "runner" | "signal">,
  settings: Settings,
  logger: Logger,
  onSpawn?: (pid: number) => void,
): Restic {
  return new Restic({
    runner: ctx.runner,
    env: { RESTIC_REPOSITORY: settings.RESTIC_REPOSITORY, RESTIC_PASSWORD_FILE: settings.RESTIC_PASSWORD_FILE },
    logFile: settings.logFile,
    signal: ctx.signal,
    onSpawn,
    onStderr: (line) => {
      if (/^error: /.test(line)) logger.warn(`restic: ${line}`);
      else if (line.trim() && !/NOTICE: Config file .* not found/.test(line)) logger.debug(`restic: ${line}`);
    },
  });
}

/**
 * Runs a restic command; when a lock is in its way, clears the locks whose restic is gone (restic unlock leaves a live
 * one alone) and tries once more. Unlocking only when needed saves opening the repository (~0.7 s) on every run.
 */
export async function unlockedOnce<T>(restic: Restic, logger: Logger, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof ResticError) || error.kind !== "locked") throw error;
    logger.warn(`${error.message}; clearing stale locks (restic unlock) and trying again`);
    await restic.unlock();
    return fn();
  }
}

export function panelFor(settings: Settings, ctx: Pick<ToolContext, "clock">): PanelClient {
  return createPanelClient({
    url: settings.CONTROL_URL,
    key: settings.CONTROL_KEY,
    serverId: settings.SERVER_ID,
    clock: ctx.clock,
    timeoutMs: 10_000,
    maxAttempts: 3,
  });
}
