import { isAbsolute } from "node:path";
import {
  absolutePathSchema,
  backupMaxAgeField,
  countSchema,
  diskCriticalField,
  diskLimits,
  diskWarnField,
  durationSchema,
  fail,
  field,
  fromBackupEnv,
  listSchema,
  ownerField,
  panelFields,
  pingUrlSchema,
  secondsSchema,
  setting,
  sizeSchema,
  textfileDirField,
  type Values,
  worldDirField,
  yesNoSchema,
} from "@mcops/core/config";
import type { DiskLimits } from "@mcops/core/disk";
import { readConfigText } from "@mcops/core/env-file";
import { ConfigError } from "@mcops/core/errors";
import { toolLogPath } from "@mcops/core/log-events";
import { registerSecret } from "@mcops/core/secrets";
import type { ToolContext } from "@mcops/core/tool";
import * as z from "zod/mini";
import type { RetentionPolicy } from "./restic.ts";

/** Where restic keeps the backups: the rclone remote of docs/system.md 2.1, or any location restic itself knows. */
const resticRepositorySchema = field((value, ctx) => {
  if (value.startsWith("rclone:")) {
    if (!/^rclone:[^:/]+:.+$/.test(value)) {
      fail(ctx, "must have the form rclone:<remote>:<folder>", "e.g. rclone:gdrive:mc-backups");
    }
  } else if (!isAbsolute(value) && !/^(sftp|rest|s3|b2|azure|gs|swift):/.test(value)) {
    fail(ctx, "is not a restic repository location", "use rclone:<remote>:<folder> (docs/system.md 2.1)");
  }
});

/**
 * What backup reads from backup.env (docs/system.md 2.1, packages/backup/README.md), each field declared once: a
 * field's flag (which wins over the file and the environment) is the option of that name in backup's cli.ts. Their
 * order is the order in which problems are reported. jar-download reads the same file through loadSettings, for the
 * snapshot it takes before an upgrade: one declaration, so both refuse the same backup.env with the same words.
 */
export const fields = {
  ...panelFields,
  WORLD_DIR: worldDirField,
  RESTIC_REPOSITORY: setting(resticRepositorySchema),
  RESTIC_PASSWORD_FILE: setting(absolutePathSchema, { default: "/root/.restic-password" }),
  /** Extra paths to back up, relative to WORLD_DIR or absolute: plugins,config */
  BACKUP_EXTRA_PATHS: setting(z.optional(listSchema), {
    flag: { name: "extra-path", array: true, describe: "also back up this path (relative to WORLD_DIR), e.g. plugins" },
  }),
  /** restic --exclude patterns */
  BACKUP_EXCLUDE: setting(z.optional(listSchema), {
    flag: { name: "exclude", array: true, describe: "restic --exclude pattern (session.lock is always left out)" },
  }),
  // Retention after each backup; the defaults are docs/system.md 4.5 and 8's forced clean.
  BACKUP_KEEP_LAST: setting(countSchema, { default: "1" }),
  BACKUP_KEEP_DAILY: setting(countSchema, { default: "30" }),
  BACKUP_KEEP_WEEKLY: setting(countSchema, { default: "12" }),
  /** Retention after each backup. */
  BACKUP_PRUNE: setting(yesNoSchema, { default: "yes" }),
  /** How long to wait for "Saved the game" after save-all flush, in seconds. */
  BACKUP_SAVE_TIMEOUT: setting(secondsSchema, { default: "60" }),
  /** A save (save-all flush to "Saved the game") longer than this posts a yellow warning, once a day. */
  BACKUP_FLUSH_WARN: setting(durationSchema, { default: "20s" }),
  /** Files larger than this are left out of the backup (restic's --exclude-larger-than): no world file comes near it. */
  BACKUP_MAX_FILE_SIZE: setting(sizeSchema, { default: "4G" }),
  /** restic reads the volume in a mount namespace where no link is followed (no is unsafe). */
  BACKUP_ISOLATE: setting(yesNoSchema, { default: "yes" }),
  /** Owner of the restored world (default 988:988, docs/system.md 2.6). */
  BACKUP_OWNER: {
    ...ownerField,
    flag: { name: "owner", describe: `uid:gid for the restored files (default ${ownerField.default})` },
  },
  /** `backup status` exits 1 when the newest snapshot is older than this. */
  BACKUP_MAX_AGE: backupMaxAgeField,
  /** Dead-man's switch, Healthchecks style: <url>/start, <url>, <url>/fail. */
  BACKUP_PING_URL: setting(z.optional(pingUrlSchema)),
  /** The heap the restore drill's checker threads share; past it the drill fails naming the file (issue 28). */
  DRILL_MEMORY: setting(sizeSchema, {
    default: "512M",
    flag: { name: "memory", describe: "the heap the drill's checker may use (default 512M)" },
  }),
  /** node_exporter textfile collector directory for mcops_backup.prom and mcops_drill.prom. */
  BACKUP_TEXTFILE_DIR: textfileDirField,
  /** Free space on the volume's disk below which no backup begins (a full disk during a save corrupts the world). */
  DISK_CRITICAL: diskCriticalField,
  /** Read with DISK_CRITICAL so that the pair is checked the same way everywhere. */
  DISK_WARN: diskWarnField,
};

export type Settings = Values<typeof fields> & {
  file: string;
  retention: RetentionPolicy;
  saveTimeoutMs: number;
  owner: { uid: number; gid: number };
  tags: string[];
  /** The backup log, where the run's whole story is. */
  logFile: string;
  disk: DiskLimits;
};

/**
 * The settings from backup.env, the environment and `args` (the parsed command line: --extra-path, --exclude and
 * --owner win); the repository password file is checked and its password kept secret.
 */
export function loadSettings(ctx: Pick<ToolContext, "paths" | "env">, args: Record<string, unknown> = {}): Settings {
  const env = fromBackupEnv(fields, { paths: ctx.paths, env: ctx.env, args });
  registerRepositoryCredentials(env.RESTIC_REPOSITORY);
  checkPasswordFile(env.RESTIC_PASSWORD_FILE);
  return {
    ...env,
    retention: { keepLast: env.BACKUP_KEEP_LAST, keepDaily: env.BACKUP_KEEP_DAILY, keepWeekly: env.BACKUP_KEEP_WEEKLY },
    saveTimeoutMs: env.BACKUP_SAVE_TIMEOUT * 1000,
    owner: env.BACKUP_OWNER,
    tags: ["mcops", `server-${env.SERVER_ID}`],
    disk: diskLimits(env),
    logFile: toolLogPath(ctx.paths, "backup"),
  };
}

/** The password file must exist, hold something, and be readable by its owner alone; its content is a secret. */
function checkPasswordFile(file: string): void {
  const text = readConfigText(file, { secret: true });
  if (text === undefined) {
    throw new ConfigError("the repository password file does not exist", {
      where: `RESTIC_PASSWORD_FILE=${file}`,
      hint: `create it: install -m 600 /dev/null ${file} && openssl rand -base64 32 > ${file}`,
    });
  }
  const password = text.replace(/\r?\n$/, "");
  if (password === "") {
    throw new ConfigError("the repository password file is empty", {
      where: file,
      hint: "put the repository password in it",
    });
  }
  registerSecret(password);
}

/**
 * A repository address can carry credentials: a user and password in a URL (`rest:https://user:pass@host/`, up to the
 * last `@` before the host, as Go parses it), in sftp's short form (`sftp:user:pass@host:/repo`), or as parameters of an
 * rclone connection string (`rclone:remote,secret_access_key=...:path`). All are secrets, so every line that shows the
 * address shows `***` in their place; a password is registered percent-decoded too, as restic's messages may show it.
 */
function registerRepositoryCredentials(repository: string): void {
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
