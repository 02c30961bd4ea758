import { fromBackupEnv, gameAddressField, panelFields } from "@mcops/core/config";
import { parseDuration } from "@mcops/core/format";
import type { ToolContext } from "@mcops/core/tool";

/**
 * What restart-with-warning reads from backup.env (docs/system.md 2.1), each field declared once: the panel it restarts
 * the server through, and the game port it pings to see whether anyone is online. Their order is the order in which
 * problems are reported. The tool's options (--countdown, --reason, --lock-wait, --dry-run) are not fields: they have
 * no env form.
 */
const fields = {
  ...panelFields,
  /** The game port for the Server List Ping (default 127.0.0.1:25565). */
  GAME_ADDRESS: gameAddressField,
};

export function loadSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(fields, { paths: ctx.paths, env: ctx.env });
}

export type Settings = ReturnType<typeof loadSettings>;

interface Timing {
  /** Countdown length (default 5 minutes: the cron line at :55 restarts on the hour). */
  countdownMs?: number | undefined;
  reason?: string | undefined;
  /** How long to wait for a running backup to finish (default 30 minutes). */
  lockWaitMs?: number | undefined;
  /** How long the server may take to be running again (default 5 minutes). */
  upTimeoutMs?: number | undefined;
}

/** What a run is handed: its timing, and backup.env's fields unless it is a dry run (which reads no configuration). */
export type RestartPlan = Timing & ({ dryRun: true; settings?: undefined } | { dryRun?: false; settings: Settings });

/** The command's options and settings, read and checked in that order before anything is done. */
export function restartPlan(
  ctx: Pick<ToolContext, "paths" | "env">,
  args: { countdown: string; reason?: string | undefined; lockWait: string; dryRun?: boolean | undefined },
): RestartPlan {
  const timing = {
    countdownMs: parseDuration(args.countdown),
    reason: args.reason,
    lockWaitMs: parseDuration(args.lockWait),
  };
  // A dry run prints the schedule only: backup.env may not exist yet.
  return args.dryRun ? { ...timing, dryRun: true } : { ...timing, settings: loadSettings(ctx) };
}
