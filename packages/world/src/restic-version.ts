import { ConfigError } from "@mcops/core/errors";

/**
 * Which restic the tools run, and what each version gives them. Operators run the restic of their release: Debian 11
 * ships 0.11.0, Ubuntu 22.04 0.12.1, Debian 12 0.14.0, Ubuntu 24.04 0.16.4, Debian 13 0.18.0, and `restic self-update`
 * brings the newest. The test suite runs 0.11.0, 0.14.0 and 0.18.0 (packages/backup/README.md, "Versions").
 *
 * | version | what it changes for the tools                                                                          |
 * | ------- | ------------------------------------------------------------------------------------------------------ |
 * | 0.11    | the floor: `backup --json` with `snapshot_id` in its summary, `--exclude-larger-than`, `ls --json`,    |
 * |         | `stats --json`; every fatal error exits 1 and is read from stderr                                      |
 * | 0.12    | `check --read-data-subset` takes a percentage (0.11 only `n/t`)                                        |
 * | 0.14    | repository format 2 (compression) by default: a repository `init` makes can no longer be read by 0.13  |
 * |         | and older; `stats` and `ls` add fields (`snapshots_count`, `permissions`)                              |
 * | 0.16    | `forget` also keeps the oldest snapshot of a group while a `--keep-daily`/`--keep-weekly` span is not |
 * |         | filled (restic pull request 4366)                                                                      |
 * | 0.17    | `restore --json` reports its errors as JSON (each file apart from its reason); restore removes         |
 * |         | what stands at the target if it is not a directory (so never a `/proc/<pid>/fd/<n>` link: see         |
 * |         | Restic.restoreInto); exit codes 10 (no repository), 11 (locked), 12 (wrong password); a repository it  |
 * |         | cannot open is retried for 15 minutes                                                                  |
 * | 0.18    | `backup --json`'s summary names the snapshot by its whole 64-character id (shown short: `shortId`)     |
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
