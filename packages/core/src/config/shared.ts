import * as z from "zod/mini";
import type { DiskLimits } from "../disk.ts";
import { ConfigError } from "../errors.ts";
import { configFile, type Paths } from "../paths.ts";
import {
  absolutePathSchema,
  clientKeySchema,
  dockerSocketSchema,
  durationSchema,
  hostSchema,
  ownerSchema,
  panelUrlSchema,
  percentSchema,
  serverIdSchema,
} from "./fields.ts";
import { type Fields, loadSettings, setting, type Values } from "./load.ts";

/**
 * The fields of backup.env (docs/system.md 2.1) that more than one tool reads. Each tool declares the rest of what it
 * reads from the file in its own settings.ts.
 */

/** The panel's client API: every tool that talks to the server. */
export const panelFields = {
  CONTROL_URL: setting(panelUrlSchema),
  CONTROL_KEY: setting(clientKeySchema, { secret: true }),
  SERVER_ID: setting(serverIdSchema),
};

/** The server's volume: backup, the log tailer, the idle monitor, jar-download. */
export const worldDirField = setting(absolutePathSchema);

/**
 * Docker's socket, the one Wings' daemon listens on (off: not used): the log tailer follows the server's container's
 * events there, jar-download runs a loader's installer in the server's image through it.
 */
export const dockerSocketField = setting(dockerSocketSchema, { default: "/var/run/docker.sock" });

/** The game port for the Server List Ping, on the VM: the game beside the tools (its one default, here). */
export const gameAddressField = setting(hostSchema, { default: "127.0.0.1:25565" });

/** Owner of what the tools put into the volume: restored worlds, server.jar (default 988:988, docs/system.md 2.6). */
export const ownerField = setting(ownerSchema, { default: "988:988" });

/**
 * How old the newest successful backup may be before it is stale (default 26h): `backup status` exits 1 past it and
 * the idle monitor's service raises its alarm.
 */
export const backupMaxAgeField = setting(durationSchema, { default: "26h" });

/** node_exporter's textfile collector directory, where the tools write their `mcops_*.prom` gauges (none by default). */
export const textfileDirField = setting(z.optional(absolutePathSchema));

/** Free space on the volume's disk (and restic's cache's) below which a warning is posted (default 10 %). */
export const diskWarnField = setting(percentSchema, { default: "10%" });

/** Free space below which it is critical: a red alert, and `backup` does not begin (default 5 %). */
export const diskCriticalField = setting(percentSchema, { default: "5%" });

/** DISK_WARN and DISK_CRITICAL as limits; exit 78 when the critical level is not below the warning one. */
export function diskLimits(settings: { DISK_WARN: number; DISK_CRITICAL: number; file: string }): DiskLimits {
  if (settings.DISK_CRITICAL >= settings.DISK_WARN) {
    throw new ConfigError(
      `DISK_CRITICAL (${settings.DISK_CRITICAL * 100}%) must be below DISK_WARN (${settings.DISK_WARN * 100}%)`,
      { where: settings.file, hint: "e.g. DISK_WARN=10% and DISK_CRITICAL=5%" },
    );
  }
  return { warn: settings.DISK_WARN, critical: settings.DISK_CRITICAL };
}

/** Loads a tool's fields from backup.env, the environment and its flags. */
export function fromBackupEnv<F extends Fields>(
  fields: F,
  options: { paths: Paths; env?: NodeJS.ProcessEnv | undefined; args?: Record<string, unknown> | undefined },
): Values<F> & { file: string } {
  const file = configFile(options.paths, "backup.env");
  return loadSettings(fields, {
    file,
    env: options.env,
    args: options.args,
    missingHint: `add {name}=... to ${file} (docs/system.md 2.1)`,
  });
}
