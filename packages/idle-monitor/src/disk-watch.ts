import { isoSeconds } from "@mcops/core/clock";
import { type DiskLimits, type DiskSpace, describeSpace, diskLevel } from "@mcops/core/disk";
import type { IdleState } from "./decide.ts";

/**
 * Free space (issue 18), as a pure function like checkBackupAge(): the disk of the server volume and the disk of
 * restic's cache (one disk when they share a device), each tick. Below DISK_WARN a yellow post, below DISK_CRITICAL a
 * red one, each at most once a UTC day per disk and level; one green post when a disk that was posted about is above
 * DISK_WARN again.
 */
export type DiskKey = "volume" | "cache";

/** What was posted about a disk still below DISK_WARN: the UTC day of each level's last post. */
export interface DiskAlert {
  warn?: string | undefined;
  critical?: string | undefined;
}

export interface WatchedDisk {
  key: DiskKey;
  /** "the server volume's disk". */
  label: string;
  space: DiskSpace;
}

export interface DiskPost {
  kind: "warn" | "critical" | "recovered";
  title: string;
  description: string;
}

/** The disks to look at: the volume's, and restic's cache's unless it is on the same device. */
export function watchedDisks(volume: DiskSpace | undefined, cache: DiskSpace | undefined): WatchedDisk[] {
  const disks: WatchedDisk[] = [];
  const shared = volume && cache && volume.device === cache.device;
  if (volume) {
    disks.push({
      key: "volume",
      label: `the server volume's disk${shared ? " (also restic's cache)" : ""}`,
      space: volume,
    });
  }
  if (cache && !shared) disks.push({ key: "cache", label: "the disk of restic's cache", space: cache });
  return disks;
}

export function checkDisks(
  previous: IdleState,
  now: number,
  disks: readonly WatchedDisk[],
  limits: DiskLimits,
): { state: IdleState; posts: DiskPost[] } {
  const alerts: Partial<Record<DiskKey, DiskAlert>> = { ...previous.disks };
  const day = isoSeconds(now).slice(0, 10);
  const posts: DiskPost[] = [];
  for (const { key, label, space } of disks) {
    const level = diskLevel(space, limits);
    const alert = alerts[key];
    const free = `${(space.ratio * 100).toFixed(1)} % free on ${label}`;
    if (level === "ok") {
      if (alert)
        posts.push({ kind: "recovered", title: `Disk space back: ${free}`, description: describeSpace(space) });
      delete alerts[key];
      continue;
    }
    if (alert?.[level] === day) continue;
    alerts[key] = { ...alert, [level]: day };
    const limit = (ratio: number) => `${Math.round(ratio * 1000) / 10} %`;
    posts.push(
      level === "critical"
        ? {
            kind: level,
            title: `Disk almost full: ${free}`,
            description: `${describeSpace(space)}, below DISK_CRITICAL (${limit(limits.critical)}). Backups do not begin until there is room: a save on a full disk corrupts the world. Free space now (old crash reports, logs, restic's cache).`,
          }
        : {
            kind: level,
            title: `Disk filling up: ${free}`,
            description: `${describeSpace(space)}, below DISK_WARN (${limit(limits.warn)}). Below ${limit(limits.critical)} backups stop.`,
          },
    );
  }
  const state: IdleState = { ...previous, disks: Object.keys(alerts).length ? alerts : undefined };
  return { state, posts };
}
