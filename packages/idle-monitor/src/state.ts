import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isErrno, writeFileAtomic } from "@mcops/core/fs";
import type { IdleState } from "./decide.ts";

/** The state file: written whole to a temporary file and renamed, so a crash never leaves half of it. */

export function readState(file: string): IdleState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return {};
    throw error;
  }
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const time = (key: string) => (typeof value[key] === "number" ? (value[key] as number) : undefined);
    return {
      lastActivity: time("lastActivity"),
      idleSince: time("idleSince"),
      lastIdleBackup: time("lastIdleBackup"),
      lastBackupOk: time("lastBackupOk"),
      idleStop: time("idleStop"),
      activeSince: time("activeSince"),
      lastPlayBackup: time("lastPlayBackup"),
      watchingSince: time("watchingSince"),
      staleAlarm: time("staleAlarm"),
      memoryHighSince: time("memoryHighSince"),
      tpsCommand: ["tps", "tick query", "none"].includes(value.tpsCommand as string)
        ? (value.tpsCommand as IdleState["tpsCommand"])
        : undefined,
      tpsAskedAt: time("tpsAskedAt"),
      lastTps: time("lastTps"),
      lowSamples: Array.isArray(value.lowSamples)
        ? (value.lowSamples as unknown[]).filter((v): v is number => typeof v === "number").slice(-3)
        : undefined,
      lagAlert: time("lagAlert"),
      health:
        typeof value.health === "object" && value.health !== null ? (value.health as IdleState["health"]) : undefined,
      memoryAlert: time("memoryAlert"),
      heartbeatAt: time("heartbeatAt"),
      hibernateAsked: time("hibernateAsked"),
      certsCheckedDay:
        typeof value.certsCheckedDay === "string" && /^\d{4}-\d\d-\d\d$/.test(value.certsCheckedDay)
          ? value.certsCheckedDay
          : undefined,
      disks: diskAlerts(value.disks),
    };
  } catch {
    return {};
  }
}

/** The disk alerts as written: only UTC days ("2026-11-25") under the two keys; anything else is dropped. */
function diskAlerts(value: unknown): IdleState["disks"] {
  if (!value || typeof value !== "object") return undefined;
  const day = (v: unknown) => (typeof v === "string" && /^\d{4}-\d\d-\d\d$/.test(v) ? v : undefined);
  const alerts: NonNullable<IdleState["disks"]> = {};
  for (const key of ["volume", "cache"] as const) {
    const alert = (value as Record<string, { warn?: unknown; critical?: unknown } | undefined>)[key];
    if (alert && typeof alert === "object") alerts[key] = { warn: day(alert.warn), critical: day(alert.critical) };
  }
  return Object.keys(alerts).length ? alerts : undefined;
}

export function writeState(file: string, state: IdleState): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o600);
}
