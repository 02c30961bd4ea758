import { isAbsolute, join } from "node:path";
import { ConfigError } from "./errors.ts";

/** Where the tools read and write on the VM (docs/contract.md, "Paths and overrides"). */
export interface Paths {
  /** backup.env, webhook.env, webhook.json */
  configDir: string;
  /** mc-backup.log, mc-idle-monitor.log, mc-restart.log, ... */
  logDir: string;
  /** idle-monitor state, pending notifications */
  stateDir: string;
  /** locks and other per-boot files */
  runDir: string;
  /**
   * The webhook rate windows (30 posts a minute per webhook address, whoever posts): runDir unless MCOPS_RATE_DIR says
   * otherwise. The units of a second server keep their own runDir (their own backup lock) but share this one.
   */
  rateDir?: string | undefined;
}

const defaults: Record<Exclude<keyof Paths, "rateDir">, [envName: string, fallback: string]> = {
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
  const paths = Object.fromEntries(entries) as unknown as Paths;
  const rate = env.MCOPS_RATE_DIR;
  if (rate) {
    if (!isAbsolute(rate)) {
      throw new ConfigError(`MCOPS_RATE_DIR must be an absolute path, got "${rate}"`, {
        where: "environment",
        hint: `set MCOPS_RATE_DIR=${join("/", rate)} or unset it`,
      });
    }
    paths.rateDir = rate;
  }
  return paths;
}

export const configFile = (paths: Paths, name: "backup.env" | "webhook.env" | "webhook.json"): string =>
  join(paths.configDir, name);

export const logFile = (paths: Paths, name: string): string => join(paths.logDir, name);

/** The lock every tool that must not overlap a backup takes: backup, restore, check, prune, init, restart. */
export const backupLockFile = (paths: Paths): string => join(paths.runDir, "backup.lock");
