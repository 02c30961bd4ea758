import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, readSync } from "node:fs";
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
      bootId: typeof value.bootId === "string" && BOOT_ID.test(value.bootId) ? value.bootId : undefined,
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

/** A kernel boot id is a UUID; anything of that alphabet up to 64 characters is taken (the Worker takes the same). */
const BOOT_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * The kernel's boot id (BOOT_ID_FILE, /proc/sys/kernel/random/boot_id): a new one at every boot, so a VM revived from
 * a snapshot, whose state file is the one the snapshot kept, knows it is not the VM that went to sleep. undefined
 * when it cannot be read (not Linux) or is not one.
 */
export function readBootId(file: string): string | undefined {
  let fd: number | undefined;
  try {
    // Without blocking (a FIFO there would hold every decision), a regular file only (procfs's is one), 128 bytes at
    // most (a huge file, or /dev/zero behind a link, is not read whole).
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(128);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const id = buffer.subarray(0, length).toString("utf8").trim();
    return BOOT_ID.test(id) ? id : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The state on this boot. Another boot than the one the state was saved on is a VM that was revived or rebooted: what
 * the idle clock counted before does not hold on it. The idle period and a session of play start again at the next
 * poll, a hibernation asked by the old boot is forgotten, and the heartbeat is due at once (a revive may be waiting
 * for it). Backups, alerts and the rest are kept. An unknown boot id changes nothing; a state that has none yet
 * (written before the boot was kept: the monitor was just upgraded, on this boot) takes this one as it is.
 */
export function onBoot(state: IdleState, bootId: string | undefined): { state: IdleState; newBoot: boolean } {
  if (bootId === undefined || state.bootId === bootId) return { state, newBoot: false };
  if (state.bootId === undefined) return { state: { ...state, bootId }, newBoot: false };
  return {
    state: {
      ...state,
      bootId,
      idleSince: undefined,
      activeSince: undefined,
      hibernateAsked: undefined,
      heartbeatAt: undefined,
    },
    newBoot: true,
  };
}

export function writeState(file: string, state: IdleState): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o600);
}
