import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@mcops/core/fs";
import { readIdleState } from "@mcops/core/health";
import { BOOT_ID } from "@mcops/core/records";
import type { IdleState } from "./decide.ts";

/** The state file: written whole to a temporary file and renamed, so a crash never leaves half of it. */

/** The state as last saved, parsed with its schema (core's records.ts): a field of the wrong shape is dropped. */
export function readState(file: string): IdleState {
  return readIdleState(file);
}

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
