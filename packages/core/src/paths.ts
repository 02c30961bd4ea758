import { isAbsolute, join } from "node:path";
import { ConfigError } from "./errors.ts";

/** Where the tools read and write on the VM (CONTRACT.md, "Paths and overrides"). */
export interface Paths {
  /** backup.env, webhook.env, webhook.json */
  configDir: string;
  /** mc-backup.log, mc-idle-monitor.log, mc-restart.log, ... */
  logDir: string;
  /** idle-monitor state, pending notifications */
  stateDir: string;
  /** locks and other per-boot files */
  runDir: string;
}

const defaults: Record<keyof Paths, [envName: string, fallback: string]> = {
  configDir: ["MCOPS_CONFIG_DIR", "/etc/mc-backup"],
  logDir: ["MCOPS_LOG_DIR", "/var/log"],
  stateDir: ["MCOPS_STATE_DIR", "/var/lib/mc-tools"],
  runDir: ["MCOPS_RUN_DIR", "/run/mc-tools"],
};

export function resolvePaths(env: NodeJS.ProcessEnv = process.env): Paths {
  const entries = Object.entries(defaults).map(([key, [envName, fallback]]) => {
    const value = env[envName];
    if (value === undefined || value === "") return [key, fallback];
    if (!isAbsolute(value)) {
      throw new ConfigError(`${envName} must be an absolute path, got "${value}"`, {
        where: "environment",
        hint: `set ${envName}=${join("/", value)} or unset it`,
      });
    }
    return [key, value];
  });
  return Object.fromEntries(entries) as unknown as Paths;
}

export const configFile = (paths: Paths, name: "backup.env" | "webhook.env" | "webhook.json"): string =>
  join(paths.configDir, name);

export const logFile = (paths: Paths, name: string): string => join(paths.logDir, name);

/** The lock every tool that must not overlap a backup takes: backup, restore, check, prune, init, restart. */
export const backupLockFile = (paths: Paths): string => join(paths.runDir, "backup.lock");
