import { lstatSync, statfsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { formatBytes } from "./format.ts";

/**
 * Free space on a filesystem (issue 18): a full disk during a save corrupts the world, and restic's cache on a full
 * disk fails every backup. The tools look at the filesystem of the server volume and of restic's cache: below
 * DISK_WARN (10 %) free a warning, below DISK_CRITICAL (5 %) critical (and `backup` does not begin).
 */
export interface DiskSpace {
  /** The path asked about. */
  path: string;
  /** Bytes an unprivileged writer (the game) can still use: statfs's f_bavail blocks. */
  freeBytes: number;
  totalBytes: number;
  /** freeBytes / totalBytes. */
  ratio: number;
  /** The filesystem's device (st_dev of the path): two paths on one device are one disk. */
  device: number;
}

export type DiskLevel = "ok" | "warn" | "critical";

/** What the free space is judged against: fractions of the filesystem (0.1 is 10 %). */
export interface DiskLimits {
  warn: number;
  critical: number;
}

/** statfs, replaceable in tests. */
export type StatFs = (path: string) => { bavail: number; blocks: number; bsize: number };

/**
 * The free space of the filesystem holding `path`; a path that does not exist (yet) is measured at its nearest
 * existing parent. Undefined when nothing can be measured (statfs fails).
 */
export function diskSpace(path: string, statfs: StatFs = statfsSync): DiskSpace | undefined {
  let at = path;
  for (let depth = 0; depth < 64; depth++) {
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat) {
      try {
        const fs = statfs(at);
        const totalBytes = fs.blocks * fs.bsize;
        const freeBytes = fs.bavail * fs.bsize;
        return { path, freeBytes, totalBytes, ratio: totalBytes > 0 ? freeBytes / totalBytes : 1, device: stat.dev };
      } catch {
        return undefined;
      }
    }
    if (dirname(at) === at) return undefined;
    at = dirname(at);
  }
  return undefined;
}

export function diskLevel(space: Pick<DiskSpace, "ratio">, limits: DiskLimits): DiskLevel {
  if (space.ratio < limits.critical) return "critical";
  return space.ratio < limits.warn ? "warn" : "ok";
}

/** "3.1 % free (120 MiB of 3.9 GiB)". */
export function describeSpace(space: DiskSpace): string {
  return `${(space.ratio * 100).toFixed(1)} % free (${formatBytes(space.freeBytes)} of ${formatBytes(space.totalBytes)})`;
}

/** restic's cache directory: RESTIC_CACHE_DIR, else $XDG_CACHE_HOME/restic, else ~/.cache/restic (restic's own rule). */
export function resticCacheDir(env: NodeJS.ProcessEnv): string {
  if (env.RESTIC_CACHE_DIR) return env.RESTIC_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "restic");
  return join(env.HOME || homedir(), ".cache", "restic");
}
