import { ConfigError } from "@mcops/core/errors";

/**
 * Which restic the tools run, and what each version gives them. Operators run the restic of their release: Debian 11
 * ships 0.11.0, Ubuntu 22.04 0.12.1, Debian 12 0.14.0, Ubuntu 24.04 0.16.4, Debian 13 0.18.0, and `restic self-update`
 * brings the newest. What each version from the floor on changes, and what the tools do with it, is the table of
 * packages/world/README.md ("restic versions"); the test suite runs 0.11.0, 0.14.0 and 0.18.0 (packages/backup/README.md,
 * "Versions").
 */
export interface ResticVersion {
  major: number;
  minor: number;
  patch: number;
  /** As restic said it, e.g. "0.18.0" or "0.17.3-dev". */
  text: string;
}

/** The oldest restic the tools run with: Debian 11's. */
export const RESTIC_FLOOR = "0.11.0";

/** What a restic version offers beyond the floor. */
export interface ResticFeatures {
  /** `check --read-data-subset=<n>%` (0.12). */
  readDataPercent: boolean;
  /** `restore --json` says its errors as JSON messages, each file apart from its reason (0.17). */
  restoreJson: boolean;
  /** `restore --sparse` leaves runs of zeros as holes, not written (0.15; restic's changelog, issue 79). */
  restoreSparse: boolean;
  /**
   * `restore <snapshot>:<folder>` restores what is in the folder straight into the target, without the folder's own
   * path (0.16; restic's pull request 4334); `--include` is then relative to the folder.
   */
  restoreSubfolder: boolean;
}

/** The version in `restic version`'s line ("restic 0.18.0 compiled with go1.24.4 on linux/amd64"), or undefined. */
export function parseResticVersion(output: string): ResticVersion | undefined {
  const match = /^restic (\d+)\.(\d+)\.(\d+)(\S*)/m.exec(output);
  if (!match) return undefined;
  const [, major, minor, patch, rest] = match;
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    text: `${major}.${minor}.${patch}${rest}`,
  };
}

function atLeast(version: ResticVersion, major: number, minor: number, patch = 0): boolean {
  if (version.major !== major) return version.major > major;
  if (version.minor !== minor) return version.minor > minor;
  return version.patch >= patch;
}

const FLOOR = parseResticVersion(`restic ${RESTIC_FLOOR}`) as ResticVersion;

/**
 * What `version` offers. An unknown version (a restic whose `version` answered nothing readable) is taken as the
 * floor: the tools then use nothing a newer restic adds, and restic itself says what it cannot do.
 */
export function featuresOf(version: ResticVersion | undefined): ResticFeatures {
  const v = version ?? FLOOR;
  return {
    readDataPercent: atLeast(v, 0, 12),
    restoreJson: atLeast(v, 0, 17),
    restoreSparse: atLeast(v, 0, 15),
    restoreSubfolder: atLeast(v, 0, 16),
  };
}

/** A restic older than the floor: refused before it is given anything to do (exit 78). */
export class ResticTooOld extends ConfigError {}

/** Refuses a restic below the floor, naming the version found and the floor. */
export function checkFloor(version: ResticVersion | undefined, path = "restic"): void {
  if (!version || atLeast(version, FLOOR.major, FLOOR.minor, FLOOR.patch)) return;
  throw new ResticTooOld(`restic ${version.text} is older than ${RESTIC_FLOOR}, the oldest the tools run with`, {
    where: path,
    hint: `install restic ${RESTIC_FLOOR} or newer (Debian 11 and later ship one; or: restic self-update)`,
  });
}

/**
 * A snapshot id as the tools show it: its first 8 characters, as restic's `short_id`. restic 0.18 reports whole ids
 * where older versions reported short ones; both name the same snapshot.
 */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** Whether two snapshot ids, each short or whole, name the same snapshot. */
export function sameSnapshot(a: string, b: string): boolean {
  if (a === "" || b === "") return false;
  return a.length <= b.length ? b.startsWith(a) : a.startsWith(b);
}
