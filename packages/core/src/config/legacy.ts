import { isAbsolute } from "node:path";
import * as z from "zod/mini";
import { readEnvFile } from "../env-file.ts";
import { configFile, type Paths } from "../paths.ts";
import { registerSecret } from "../secrets.ts";
import {
  absolutePathSchema,
  baseUrlSchema,
  clientKeySchema,
  countSchema,
  durationOrOffSchema,
  durationSchema,
  fail,
  field,
  hostSchema,
  listSchema,
  ownerSchema,
  panelUrlSchema,
  pingUrlSchema,
  secondsSchema,
  serverIdSchema,
  sizeSchema,
  yesNoSchema,
} from "./fields.ts";
import { type Origin, parseResolved, type Resolved } from "./load.ts";
import { webhookUrlSchema } from "./notify.ts";

/**
 * TEMPORARY: the old all-tools schema of backup.env and the local .env, kept only while each tool moves its fields
 * into its own settings.ts. Nothing new may use it.
 */

export interface LoadEnvOptions {
  paths: Paths;
  env?: NodeJS.ProcessEnv | undefined;
  flags?: Record<string, string | undefined> | undefined;
  flagNames?: Record<string, string> | undefined;
}

function resolveByName(
  names: readonly string[],
  entries: ReturnType<typeof readEnvFile>,
  file: string,
  { env = process.env, flags = {}, flagNames = {} }: Partial<LoadEnvOptions>,
  defaults: Partial<Record<string, string>> = {},
): Resolved {
  const input: Record<string, string> = {};
  const origins = new Map<string, Origin>();
  for (const name of names) {
    const flag = flags[name];
    const entry = entries?.get(name);
    if (flag !== undefined) {
      input[name] = flag;
      origins.set(name, { kind: "flag", flag: flagNames[name] ?? name.toLowerCase().replaceAll("_", "-") });
    } else if (env[name] !== undefined) {
      input[name] = env[name] as string;
      origins.set(name, { kind: "environment" });
    } else if (entry) {
      input[name] = entry.value;
      origins.set(name, { kind: "file", file, line: entry.line });
    } else if (defaults[name] !== undefined) {
      input[name] = defaults[name] as string;
      origins.set(name, { kind: "default" });
    }
  }
  return { input, origins };
}

export const resticRepositorySchema = field((value, ctx) => {
  if (value.startsWith("rclone:")) {
    if (!/^rclone:[^:/]+:.+$/.test(value)) {
      fail(ctx, "must have the form rclone:<remote>:<folder>", "e.g. rclone:gdrive:mc-backups");
    }
  } else if (!isAbsolute(value) && !/^(sftp|rest|s3|b2|azure|gs|swift):/.test(value)) {
    fail(ctx, "is not a restic repository location", "use rclone:<remote>:<folder> (docs/system.md 2.1)");
  }
});

const contactSchema = field((value, ctx) => {
  if (!/^(https?:\/\/\S+|[^@\s]+@[^@\s]+\.[^@\s]+)$/.test(value)) {
    fail(ctx, "must be an e-mail address or an https:// address", "e.g. admin@example.com");
  }
});

export const backupEnvSchema = z.object({
  CONTROL_URL: panelUrlSchema,
  CONTROL_KEY: clientKeySchema,
  SERVER_ID: serverIdSchema,
  WORLD_DIR: absolutePathSchema,
  RESTIC_REPOSITORY: resticRepositorySchema,
  RESTIC_PASSWORD_FILE: absolutePathSchema,
  // mcops extensions (all optional; see packages/backup/README.md)
  /** Extra paths to back up, relative to WORLD_DIR or absolute: plugins,config */
  BACKUP_EXTRA_PATHS: z.optional(listSchema),
  /** restic --exclude patterns */
  BACKUP_EXCLUDE: z.optional(listSchema),
  BACKUP_KEEP_LAST: z.optional(countSchema),
  BACKUP_KEEP_DAILY: z.optional(countSchema),
  BACKUP_KEEP_WEEKLY: z.optional(countSchema),
  /** Retention after each backup (default yes). */
  BACKUP_PRUNE: z.optional(yesNoSchema),
  /** How long to wait for "Saved the game" after save-all flush (default 60). */
  BACKUP_SAVE_TIMEOUT: z.optional(secondsSchema),
  /** Owner of what the tools put into the volume: restored worlds, server.jar (default 988:988, docs/system.md 2.6). */
  BACKUP_OWNER: z.optional(ownerSchema),
  /** Files larger than this are left out of the backup (default 4G): no world file comes near it. */
  BACKUP_MAX_FILE_SIZE: z.optional(sizeSchema),
  /** restic reads the volume in a mount namespace where no link is followed (default yes; no is unsafe). */
  BACKUP_ISOLATE: z.optional(yesNoSchema),
  /** Dead-man's switch, Healthchecks style: <url>/start, <url>, <url>/fail. */
  BACKUP_PING_URL: z.optional(pingUrlSchema),
  /** node_exporter textfile collector directory for mcops_backup.prom. */
  BACKUP_TEXTFILE_DIR: z.optional(absolutePathSchema),
  /** The game port for the Server List Ping (default 127.0.0.1:25565). */
  GAME_ADDRESS: z.optional(hostSchema),
  // jar-download (see packages/jar-download/README.md)
  /** PaperMC's download service, docs/system.md 4.3's {download_base} (default https://fill.papermc.io). */
  DOWNLOAD_BASE: z.optional(baseUrlSchema),
  PURPUR_BASE: z.optional(baseUrlSchema),
  MOJANG_BASE: z.optional(baseUrlSchema),
  FABRIC_BASE: z.optional(baseUrlSchema),
  /** The operator's contact, put into the User-Agent as PaperMC asks of every client. */
  DOWNLOAD_CONTACT: z.optional(contactSchema),
  // idle-monitor (see packages/idle-monitor/README.md)
  /** How long the server must stay empty after play before the idle backup (default 30m). */
  IDLE_AFTER: z.optional(durationSchema),
  /** Least time between two idle backups (default 2h). */
  IDLE_COOLDOWN: z.optional(durationSchema),
  /** How often to look (default 60s). */
  IDLE_POLL: z.optional(durationSchema),
  /** Stop the server after it stayed empty this long, once the idle backup succeeded (default off). */
  IDLE_STOP_AFTER: z.optional(durationOrOffSchema),
  /** The backup executable (default /opt/mc-tools/backup). */
  IDLE_BACKUP_COMMAND: z.optional(absolutePathSchema),
  /** An executable run after an idle stop (e.g. the hibernate tool); none by default. */
  IDLE_STOP_COMMAND: z.optional(absolutePathSchema),
});
export type BackupEnv = z.infer<typeof backupEnvSchema>;

export const backupEnvDefaults: Partial<Record<keyof BackupEnv, string>> = {
  RESTIC_PASSWORD_FILE: "/root/.restic-password",
};

/**
 * Loads the fields a tool needs from backup.env (docs/system.md 2.1). The file is secret (mode 600); it may be absent when
 * every field comes from the environment or flags. Other tools' keys in the file are left alone.
 */
export function loadBackupEnv<K extends keyof BackupEnv>(
  fields: readonly K[],
  options: LoadEnvOptions,
): Pick<BackupEnv, K> & { file: string } {
  const file = configFile(options.paths, "backup.env");
  const entries = readEnvFile(file, { secret: true });
  const resolved = resolveByName(fields, entries, file, options, backupEnvDefaults);
  const mask = Object.fromEntries(fields.map((f) => [f, true])) as Record<K, true>;
  const values = parseResolved(
    z.pick(backupEnvSchema, mask as never),
    resolved,
    file,
    `add {name}=... to ${file} (docs/system.md 2.1)`,
  ) as Pick<BackupEnv, K>;
  if ("CONTROL_KEY" in values) registerSecret(values.CONTROL_KEY as string);
  if ("RESTIC_REPOSITORY" in values) registerRepositoryCredentials(values.RESTIC_REPOSITORY as string);
  return { ...values, file };
}

/**
 * A repository address can carry credentials: a user and password in a URL (`rest:https://user:pass@host/`, up to the
 * last `@` before the host, as Go parses it), in sftp's short form (`sftp:user:pass@host:/repo`), or as parameters of an
 * rclone connection string (`rclone:remote,secret_access_key=...:path`). All are secrets, so every line that shows the
 * address shows `***` in their place; a password is registered percent-decoded too, as restic's messages may show it.
 */
export function registerRepositoryCredentials(repository: string): void {
  const url = /^(?:[a-z0-9]+:)?[a-z][a-z0-9+.-]*:\/\/([^/]*)@/i.exec(repository);
  const short = /^sftp:([^/]*)@[^@/]*:/i.exec(repository);
  const userinfo = url?.[1] ?? (short?.[1]?.includes(":") ? short[1] : undefined);
  if (userinfo) {
    // Short credentials are registered with what surrounds them: a bare two-letter secret would mangle ordinary text.
    registerSecret(userinfo.length >= 6 ? userinfo : url ? `//${userinfo}@` : `:${userinfo}@`);
    const password = userinfo.includes(":") ? userinfo.slice(userinfo.indexOf(":") + 1) : undefined;
    if (password) {
      registerSecret(password);
      try {
        registerSecret(decodeURIComponent(password));
      } catch {
        // not percent-encoded
      }
    }
  }
  const rclone = /^rclone:([^:]*)/.exec(repository)?.[1] ?? "";
  for (const [, key, value] of rclone.matchAll(/,([^,=]+)=([^,]*)/g)) {
    if (value) registerSecret(value.length >= 6 ? value : `${key}=${value}`);
  }
}

/**
 * The local `.env` of the operator's own computer (docs/system.md 2.3), read by revive and hibernate. The token names are the
 * ones the vendors' own tools use (doctl, wrangler/terraform).
 */
export const localEnvSchema = z.object({
  DIGITALOCEAN_ACCESS_TOKEN: field(),
  CLOUDFLARE_API_TOKEN: field(),
  CONTROL_KEY: clientKeySchema,
  /** The play host, maybe with its port. */
  SERVER_ADDR: hostSchema,
  PANEL_URL: panelUrlSchema,
  SERVER_ID: z.optional(serverIdSchema),
  WEBHOOK_URL: z.optional(webhookUrlSchema),
  /** The game VM: by name, else the one droplet with DROPLET_TAG (default mcops). */
  DROPLET_NAME: z.optional(field()),
  DROPLET_TAG: z.optional(field()),
  /** The passphrase-free automation key for the last backup over SSH (docs/system.md 1). */
  SSH_KEY: z.optional(absolutePathSchema),
  SSH_USER: z.optional(field()),
  /** How many mcops snapshots to keep (default 2). */
  KEEP_SNAPSHOTS: z.optional(countSchema),
  /** Where to reach the panel's API and the game when that is not PANEL_URL and SERVER_ADDR (a private network, tests). */
  CONTROL_URL: z.optional(panelUrlSchema),
  GAME_ADDRESS: z.optional(hostSchema),
  DIGITALOCEAN_API_URL: z.optional(baseUrlSchema),
  CLOUDFLARE_API_URL: z.optional(baseUrlSchema),
});
export type LocalEnv = z.infer<typeof localEnvSchema>;

/** Loads fields of the local `.env` (mode 600); flag > environment > file. */
export function loadLocalEnv<K extends keyof LocalEnv>(
  fields: readonly K[],
  options: { file: string; env?: NodeJS.ProcessEnv | undefined; flags?: Record<string, string | undefined> },
): Pick<LocalEnv, K> & { file: string } {
  const entries = readEnvFile(options.file, { secret: true });
  const resolved = resolveByName(fields, entries, options.file, options);
  const mask = Object.fromEntries(fields.map((f) => [f, true])) as Record<K, true>;
  const values = parseResolved(
    z.pick(localEnvSchema, mask as never),
    resolved,
    options.file,
    `add {name}=... to ${options.file} (copy .env.example)`,
  ) as Pick<LocalEnv, K>;
  for (const key of ["DIGITALOCEAN_ACCESS_TOKEN", "CLOUDFLARE_API_TOKEN", "CONTROL_KEY"] as const) {
    const value = (values as Partial<LocalEnv>)[key];
    if (value) registerSecret(value);
  }
  return { ...values, file: options.file };
}
