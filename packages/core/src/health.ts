import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { isErrno } from "./fs.ts";
import type { Paths } from "./paths.ts";
import { type HealthFigures, IdleStateFile } from "./records.ts";

export type { HealthFigures } from "./records.ts";

/** The idle monitor's state file in the state directory. */
export const IDLE_STATE_FILE = "idle-monitor.json";

const MAX_STATE_BYTES = 256 * 1024;

/**
 * The idle monitor's state file parsed with its schema (records.ts): a field of the wrong shape is dropped, a file
 * that is not JSON or not an object is an empty state. {} when it does not exist; read without blocking, a regular
 * file only, at most 256 KiB.
 */
export function readIdleState(file: string): IdleStateFile {
  let text: string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return {};
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return {};
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_STATE_BYTES));
    text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  const parsed = IdleStateFile.safeParse(value);
  return parsed.success ? parsed.data : {};
}

/** The figures as the idle monitor last wrote them (issue 18); undefined when there are none or it cannot be read. */
export function readHealthFigures(paths: Paths): HealthFigures | undefined {
  try {
    return readIdleState(join(paths.stateDir, IDLE_STATE_FILE)).health;
  } catch {
    return undefined;
  }
}
