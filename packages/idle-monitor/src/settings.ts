import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  absolutePathSchema,
  backupMaxAgeField,
  baseUrlSchema,
  diskCriticalField,
  diskLimits,
  diskWarnField,
  durationOrOffSchema,
  durationSchema,
  fail,
  field,
  fromBackupEnv,
  gameAddressField,
  panelFields,
  setting,
  textfileDirField,
  worldDirField,
} from "@mcops/core/config";
import { type DiskLimits, resticCacheDir } from "@mcops/core/disk";
import { ConfigError } from "@mcops/core/errors";
import { IDLE_STATE_FILE } from "@mcops/core/health";
import type { ToolContext } from "@mcops/core/tool";
import * as z from "zod/mini";

/** The Worker the idle monitor reports to (worker-link.ts): where, its shared secret, how often, when to hibernate. */
export interface WorkerSettings {
  url: string;
  secret: string;
  heartbeatMs: number;
  /** undefined: no hibernation on autopilot. */
  hibernateAfterMs: number | undefined;
}

import type { IdleSettings } from "./decide.ts";

/** Ticks a second: above 0, at most 20 (the game's rate). */
const tpsSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d{1,2}(\.\d{1,2})?$/.test(value) || !(Number(value) > 0 && Number(value) <= 20)) {
      fail(ctx, "is not a tick rate from 0 to 20", "e.g. 15");
    }
  }),
  z.transform((value: string) => Number(value)),
);

/** The secret the Worker checks the VM's signatures with: long enough that it cannot be guessed. */
const workerSecretSchema = field((value, ctx) => {
  if (value.length < 32) fail(ctx, `is too short (${value.length} characters)`, "make one with: openssl rand -hex 32");
});

/**
 * What the idle monitor reads from backup.env (docs/system.md 2.1, packages/idle-monitor/README.md), each field declared
 * once: its flag (which wins over the file and the environment) is the option of the same name in cli.ts.
 */
export const fields = {
  ...panelFields,
  /** The server volume; its logs/latest.log is the fallback when the ping does not answer. */
  WORLD_DIR: worldDirField,
  GAME_ADDRESS: {
    ...gameAddressField,
    flag: { name: "game-address", describe: `host:port of the game (GAME_ADDRESS, ${gameAddressField.default})` },
  },
  /** How long the server must stay empty after play before the idle backup. */
  IDLE_AFTER: setting(durationSchema, {
    default: "30m",
    flag: { name: "idle-after", describe: "empty this long after play: back up (IDLE_AFTER, 30m)" },
  }),
  /** Least time between two idle backups. */
  IDLE_COOLDOWN: setting(durationSchema, {
    default: "2h",
    flag: { name: "cooldown", describe: "least time between idle backups (IDLE_COOLDOWN, 2h)" },
  }),
  /** How often to look. */
  IDLE_POLL: setting(durationSchema, {
    default: "60s",
    flag: { name: "poll", describe: "how often to look (IDLE_POLL, 60s)" },
  }),
  /** Stop the server after it stayed empty this long, once the idle backup succeeded. */
  IDLE_STOP_AFTER: setting(durationOrOffSchema, {
    default: "off",
    flag: { name: "stop-after", describe: "empty this long and backed up: stop the server (IDLE_STOP_AFTER, off)" },
  }),
  /** While people play, a backup once this long has passed since the last one; 0 or off: none. */
  BACKUP_WHILE_PLAYING: setting(durationOrOffSchema, {
    default: "60m",
    flag: {
      name: "while-playing",
      describe: "while people play, back up this often (BACKUP_WHILE_PLAYING, 60m; 0 off)",
    },
  }),
  /** Past this age of the newest successful backup, one red alarm per period. */
  BACKUP_MAX_AGE: backupMaxAgeField,
  /** node_exporter's textfile directory, for mcops_idle.prom. */
  BACKUP_TEXTFILE_DIR: textfileDirField,
  /** The backup executable (default: the one installed beside this tool, see defaultBackupCommand). */
  IDLE_BACKUP_COMMAND: setting(z.optional(absolutePathSchema), {
    flag: { name: "backup-command", describe: "the backup executable (IDLE_BACKUP_COMMAND)" },
  }),
  /** While players are online, how often the server is asked its tick rate (off: never). */
  TPS_EVERY: setting(durationOrOffSchema, { default: "5m" }),
  /** Three samples in a row under this many ticks a second post a lag warning. */
  TPS_WARN: setting(tpsSchema, { default: "15" }),
  /** Free space on the volume's disk and restic's cache's: below this a yellow health alert (default 10 %). */
  DISK_WARN: diskWarnField,
  /** Below this a red one (default 5 %); backup does not begin then. */
  DISK_CRITICAL: diskCriticalField,
  /** discord-control's Worker (its workers.dev or custom address) and the secret it shares with the VM. */
  WORKER_URL: setting(z.optional(baseUrlSchema)),
  WORKER_SECRET: setting(z.optional(workerSecretSchema), { secret: true }),
  /** How often the VM tells the Worker how the server is. */
  HEARTBEAT_EVERY: setting(durationSchema, { default: "5m" }),
  /** Nobody played this long and backed up since: stop the game and ask the Worker to hibernate the VM (off). */
  IDLE_HIBERNATE_AFTER: setting(durationOrOffSchema, { default: "off" }),
  /** Where the kernel says which boot this is: a new boot (a revived VM) starts the idle clock again. */
  BOOT_ID_FILE: setting(absolutePathSchema, { default: "/proc/sys/kernel/random/boot_id" }),
  /** What `certs check` is run as once a day (default: the certs tool beside this one; none: no check). */
  CERT_CHECK_COMMAND: setting(z.optional(absolutePathSchema)),
  /** An executable run after an idle stop (e.g. the hibernate tool); none by default. */
  IDLE_STOP_COMMAND: setting(z.optional(absolutePathSchema), {
    flag: { name: "stop-command", describe: "run after an idle stop (IDLE_STOP_COMMAND)" },
  }),
};

export interface MonitorSettings extends IdleSettings {
  pollMs: number;
  gameAddress: string;
  /** The server volume; its logs/latest.log is the fallback when the ping does not answer. */
  worldDir: string;
  backupCommand: string;
  stopCommand: string | undefined;
  stateFile: string;
  maxAgeMs: number;
  textfileDir: string | undefined;
  serverId: string;
  disk: DiskLimits;
  lag: { everyMs: number | undefined; warnTps: number };
  /** restic's cache directory (RESTIC_CACHE_DIR, else restic's default for this user). */
  resticCache: string;
  /** discord-control's Worker, when WORKER_URL is set. */
  worker: WorkerSettings | undefined;
  /** The certs tool for the daily check; undefined: not installed, no check. */
  certsCommand: string | undefined;
  /** The file that holds the kernel's boot id (BOOT_ID_FILE). */
  bootIdFile: string;
}

/**
 * The `backup` installed beside this tool: install.sh puts the executables in <prefix>/lib and their launchers in
 * <prefix>, so from <prefix>/lib/idle-monitor.mjs it is <prefix>/backup, whatever --prefix was. /opt/mc-tools/backup
 * (the default prefix) when there is none, as when run from a clone.
 */
export function defaultBackupCommand(self: string = import.meta.url): string {
  return besideThisTool("backup", self) ?? "/opt/mc-tools/backup";
}

/** An mcops executable installed beside this tool (<prefix>/<name>, see defaultBackupCommand), if there is one. */
export function besideThisTool(name: string, self: string = import.meta.url): string | undefined {
  const beside = fileURLToPath(new URL(`../${name}`, self));
  return existsSync(beside) ? beside : undefined;
}

/** The certs tool for the daily certificate check: CERT_CHECK_COMMAND, else the one installed beside this tool. */
function certsCommand(configured: string | undefined): string | undefined {
  if (configured) return configured;
  return besideThisTool("certs") ?? (existsSync("/opt/mc-tools/certs") ? "/opt/mc-tools/certs" : undefined);
}

/**
 * The settings from backup.env, the environment and `args` (the parsed command line: each flag wins); `env` keeps the
 * panel's fields for its client.
 */
export function loadSettings(ctx: Pick<ToolContext, "paths" | "env">, args: Record<string, unknown> = {}) {
  const env = fromBackupEnv(fields, { paths: ctx.paths, env: ctx.env, args });
  const settings: MonitorSettings = {
    idleAfterMs: env.IDLE_AFTER,
    cooldownMs: env.IDLE_COOLDOWN,
    stopAfterMs: env.IDLE_STOP_AFTER,
    whilePlayingMs: env.BACKUP_WHILE_PLAYING,
    maxAgeMs: env.BACKUP_MAX_AGE,
    textfileDir: env.BACKUP_TEXTFILE_DIR,
    serverId: env.SERVER_ID,
    pollMs: env.IDLE_POLL,
    gameAddress: env.GAME_ADDRESS,
    worldDir: env.WORLD_DIR,
    backupCommand: env.IDLE_BACKUP_COMMAND ?? defaultBackupCommand(),
    stopCommand: env.IDLE_STOP_COMMAND,
    stateFile: join(ctx.paths.stateDir, IDLE_STATE_FILE),
    disk: diskLimits(env),
    lag: { everyMs: env.TPS_EVERY, warnTps: env.TPS_WARN },
    resticCache: resticCacheDir(ctx.env),
    worker: workerSettings(env),
    certsCommand: certsCommand(env.CERT_CHECK_COMMAND),
    bootIdFile: env.BOOT_ID_FILE,
  };
  return { env, settings };
}

/** What the command is handed: backup.env's fields as read (the panel client's), and the monitor's settings from them. */
export type LoadedSettings = ReturnType<typeof loadSettings>;

/** WORKER_URL and WORKER_SECRET go together; IDLE_HIBERNATE_AFTER needs both. One line when they do not. */
function workerSettings(env: {
  WORKER_URL?: string | undefined;
  WORKER_SECRET?: string | undefined;
  HEARTBEAT_EVERY: number;
  IDLE_HIBERNATE_AFTER: number | undefined;
  file: string;
}): WorkerSettings | undefined {
  const { WORKER_URL: url, WORKER_SECRET: secret } = env;
  if (url && secret) {
    return { url, secret, heartbeatMs: env.HEARTBEAT_EVERY, hibernateAfterMs: env.IDLE_HIBERNATE_AFTER };
  }
  if (url || secret || env.IDLE_HIBERNATE_AFTER !== undefined) {
    const what = env.IDLE_HIBERNATE_AFTER !== undefined ? "IDLE_HIBERNATE_AFTER needs" : "the Worker needs";
    throw new ConfigError(`${what} both WORKER_URL and WORKER_SECRET`, {
      where: env.file,
      hint: "set both (packages/discord-control/README.md), or neither",
    });
  }
  return undefined;
}
