import * as z from "zod/mini";
import { configFile, type Paths } from "../paths.ts";
import {
  absolutePathSchema,
  clientKeySchema,
  durationSchema,
  hostSchema,
  ownerSchema,
  panelUrlSchema,
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

/** The game port for the Server List Ping (default 127.0.0.1:25565). */
export const gameAddressField = setting(z.optional(hostSchema));

/** Owner of what the tools put into the volume: restored worlds, server.jar (default 988:988, docs/system.md 2.6). */
export const ownerField = setting(z.optional(ownerSchema));

/**
 * How old the newest successful backup may be before it is stale (default 26h): `backup status` exits 1 past it and
 * the idle monitor's service raises its alarm.
 */
export const backupMaxAgeField = setting(durationSchema, { default: "26h" });

/** node_exporter's textfile collector directory, where the tools write their `mcops_*.prom` gauges (none by default). */
export const textfileDirField = setting(z.optional(absolutePathSchema));

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
