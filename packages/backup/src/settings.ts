import { join } from "node:path";
import { type Clock } from "@mcops/core/clock";
import { type BackupEnv, loadBackupEnv } from "@mcops/core/config";
import { readConfigText } from "@mcops/core/env-file";
import { ConfigError, describeError } from "@mcops/core/errors";
import { createNotifier, createPanelClient, type Notifier, type PanelClient, toolNotifier } from "@mcops/core/http";
import { type Logger, silentLogger, toolLogger, type Writer } from "@mcops/core/log";
import { type Paths } from "@mcops/core/paths";
import { type Runner } from "@mcops/core/runner";
import { registerSecret } from "@mcops/core/secrets";
import { DEFAULT_RETENTION, type RetentionPolicy } from "./restic.ts";

/** Everything the backup commands touch of the outside world; tests build one that points at temporary directories. */
export interface BackupContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stdout: Writer;
  stderr: Writer & { isTTY?: boolean };
  runner: Runner;
  /** Aborted on SIGINT or SIGTERM; its reason is the signal's name. */
  signal: AbortSignal;
  /**
   * What must still happen when a second signal ends the run at once (turning autosave back on): the job adds it while
   * it is owed and removes it once done; the CLI runs what is left, for a few seconds at most, before it exits.
   */
  atExit?: Set<() => Promise<void>> | undefined;
}

/** Command-line values that override backup.env (docs/contract.md precedence). */
export interface SettingFlags {
  extraPath?: string[] | undefined;
  exclude?: string[] | undefined;
  owner?: string | undefined;
}

export interface Settings extends BackupEnv {
  file: string;
  retention: RetentionPolicy;
  prune: boolean;
  saveTimeoutMs: number;
  /** restic's --exclude-larger-than. */
  maxFileSize: string;
  /** Read the volume in a mount namespace where links are not followed. */
  isolate: boolean;
  owner: { uid: number; gid: number };
  tags: string[];
  logFile: string;
}

const FIELDS = [
  "CONTROL_URL",
  "CONTROL_KEY",
  "SERVER_ID",
  "WORLD_DIR",
  "RESTIC_REPOSITORY",
  "RESTIC_PASSWORD_FILE",
  "BACKUP_EXTRA_PATHS",
  "BACKUP_EXCLUDE",
  "BACKUP_KEEP_LAST",
  "BACKUP_KEEP_DAILY",
  "BACKUP_KEEP_WEEKLY",
  "BACKUP_PRUNE",
  "BACKUP_SAVE_TIMEOUT",
  "BACKUP_MAX_FILE_SIZE",
  "BACKUP_ISOLATE",
  "BACKUP_OWNER",
  "BACKUP_PING_URL",
  "BACKUP_TEXTFILE_DIR",
] as const;

export function loadSettings(ctx: BackupContext, flags: SettingFlags = {}): Settings {
  const env = loadBackupEnv(FIELDS, {
    paths: ctx.paths,
    env: ctx.env,
    flags: {
      BACKUP_EXTRA_PATHS: flags.extraPath?.length ? flags.extraPath.join(",") : undefined,
      BACKUP_EXCLUDE: flags.exclude?.length ? flags.exclude.join(",") : undefined,
      BACKUP_OWNER: flags.owner,
    },
    flagNames: { BACKUP_EXTRA_PATHS: "extra-path", BACKUP_EXCLUDE: "exclude", BACKUP_OWNER: "owner" },
  });
  checkPasswordFile(env.RESTIC_PASSWORD_FILE);
  return {
    ...env,
    retention: {
      keepLast: env.BACKUP_KEEP_LAST ?? DEFAULT_RETENTION.keepLast,
      keepDaily: env.BACKUP_KEEP_DAILY ?? DEFAULT_RETENTION.keepDaily,
      keepWeekly: env.BACKUP_KEEP_WEEKLY ?? DEFAULT_RETENTION.keepWeekly,
    },
    prune: env.BACKUP_PRUNE ?? true,
    saveTimeoutMs: (env.BACKUP_SAVE_TIMEOUT ?? 60) * 1000,
    maxFileSize: env.BACKUP_MAX_FILE_SIZE ?? "4G",
    isolate: env.BACKUP_ISOLATE ?? true,
    owner: env.BACKUP_OWNER ?? { uid: 988, gid: 988 },
    tags: ["mcops", `server-${env.SERVER_ID}`],
    logFile: join(ctx.paths.logDir, "mc-backup.log"),
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

export function backupLogger(ctx: BackupContext): Logger {
  return toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-backup.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
}

export function panelFor(settings: Settings, ctx: BackupContext): PanelClient {
  return createPanelClient({
    url: settings.CONTROL_URL,
    key: settings.CONTROL_KEY,
    serverId: settings.SERVER_ID,
    clock: ctx.clock,
    timeoutMs: 10_000,
    maxAttempts: 3,
  });
}

/**
 * The notifier that reports a run refused for its configuration: a silent one when the webhook configuration is
 * itself what is wrong (that problem is logged as an error so that it is seen).
 */
export function notifierFor(ctx: BackupContext, logger: Logger): Notifier {
  try {
    return toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  } catch (error) {
    logger.error(`notifications are off: ${describeError(error)}`, { echo: false });
    return createNotifier({
      config: { webhookUrl: undefined, source: "none", events: {} as never, playHost: undefined },
      paths: ctx.paths,
      logger: silentLogger,
    });
  }
}
