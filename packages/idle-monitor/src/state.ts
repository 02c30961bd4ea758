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
    };
  } catch {
    return {};
  }
}

export function writeState(file: string, state: IdleState): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o600);
}
