import { mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { JobError, UsageError } from "@mcops/core/errors";
import { writeFileAtomic } from "@mcops/core/fs";
import type { Paths } from "@mcops/core/paths";
import type { VolumeDir } from "@mcops/core/volume";
import { levelName, type SavedBy, type SavedByFile, savedBy } from "@mcops/world/world";
import { DATA_VERSIONS } from "./data-versions.generated.ts";
import { type Downloaded, installedDigest } from "./download.ts";
import type { ChecksumAlgorithm } from "./service.ts";
import type { Artifact } from "./sources.ts";

/**
 * A world saved by a newer game version cannot be opened safely by an older one: the game converts data forwards
 * only, and an older server drops what it does not know, or refuses to start. jar-download refuses such a downgrade
 * before anything is fetched, comparing the world's level.dat DataVersion with the target version's data version
 * (from minecraft-data, data-versions.generated.ts; for a version it does not know, from the downloaded jar's own
 * version.json, before the server is stopped). Another build or type of the same version has the same data version,
 * and is allowed.
 */

/** A version's data version; undefined when minecraft-data does not know it (newer than this build of mcops). */
export function dataVersionOf(version: string): number | undefined {
  return DATA_VERSIONS.get(version);
}

/**
 * The data versions a game writes into level.dat: from 15w32a's (100; minecraft-data numbers the versions before it
 * too, down to -79, but none of them wrote a DataVersion) to a margin past the newest version minecraft-data knows (a
 * game newer than this build of mcops writes a few hundred more a year).
 */
export const WORLD_VERSIONS = {
  oldest: DATA_VERSIONS.get("15w32a") ?? 100,
  newest: Math.max(...DATA_VERSIONS.values()) + 1000,
} as const;

/** How to go on when level.dat's version cannot be believed; the pre-upgrade snapshot is still taken. */
const GO_ON = "--ignore-world-version (the world is still snapshotted first)";

/**
 * Which game version last saved the world, as savedBy reads level.dat (through the volume without following a link, at
 * most 16 MiB, the NBT walked under a budget; level.dat_old when there is no level.dat, as the game does); undefined
 * when there is no world yet. A level.dat that cannot be read, has no DataVersion, or says one no game version writes
 * (a negative one, 2147483647) is exit 2, one line naming the file, with the way past it: --ignore-world-version. Never
 * taken as "no world": that would turn the check off.
 */
export async function worldSaver(volume: VolumeDir): Promise<SavedBy | undefined> {
  // server.properties' own problems (a link, a level-name that leaves the volume) are said as they are.
  const file = volume.display(`${levelName(volume)}/level.dat`);
  let saved: SavedByFile | undefined;
  try {
    saved = await savedBy(volume);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    throw new UsageError(error.message, {
      where: error.where ?? (error.message.includes(file) ? undefined : file),
      hint: `${error.hint ?? "look at it"}; or go on without the world's version: ${GO_ON}`,
      cause: error,
    });
  }
  const version = saved?.dataVersion;
  if (
    saved !== undefined &&
    version !== undefined &&
    (!Number.isInteger(version) || version < WORLD_VERSIONS.oldest || version > WORLD_VERSIONS.newest)
  ) {
    throw new UsageError(`${basename(saved.file)} says data version ${version}, which no game version writes`, {
      where: volume.display(saved.file),
      hint: `the game did not write it; restore a snapshot whose world is whole, or go on without it: ${GO_ON}`,
    });
  }
  return saved;
}

/** What level.dat says, for the warning that --ignore-world-version does not check it. */
export async function ignoredWorldVersion(volume: VolumeDir): Promise<string> {
  let said: string;
  try {
    const saved = await worldSaver(volume);
    said = saved ? `it says ${describeSaver(saved)}` : "there is no level.dat";
  } catch (error) {
    said = (error as Error).message;
  }
  return `the world's version is not checked (--ignore-world-version): ${said}`;
}

/** "1.21.4 (data version 4189)": the world's saver in words. */
function describeSaver(saved: SavedBy): string {
  const name = saved.name ?? [...DATA_VERSIONS].find(([, data]) => data === saved.dataVersion)?.[0];
  return `${name ?? "a game version"} (data version ${saved.dataVersion})`;
}

/**
 * Exit 2 when the data version `target` (of `what`, e.g. "Paper 1.20.1") is older than the game that last saved the
 * world. An unknown target (a version newer than minecraft-data and with no version.json) is not refused.
 */
export function refuseDowngrade(saved: SavedBy | undefined, target: number | undefined, what: string): void {
  if (!saved || target === undefined || saved.dataVersion <= target) return;
  // A data version no version minecraft-data knows writes: a newer game's, or a forged one that refuses every version.
  const known = [...DATA_VERSIONS.values()].includes(saved.dataVersion);
  throw new UsageError(
    `the world was last saved by ${describeSaver(saved)}; ${what} (${target}) cannot open it safely`,
    {
      hint: `restore a snapshot from before the upgrade instead${known ? "" : `; if level.dat is wrong about it: ${GO_ON}`}`,
    },
  );
}

/** What jar-download installed, kept to know what server.jar.previous is when going back (--rollback). */
export interface JarRecord {
  /** "Paper 1.21.4 build 231". */
  what: string;
  version: string;
  /** The version's data version, when minecraft-data knows it. */
  dataVersion: number | undefined;
  /** The jar itself, to tell it is still the one in place (or kept as server.jar.previous). */
  size: number;
  algorithm: ChecksumAlgorithm;
  digest: string;
}

/**
 * A loader installed by its own installer (Forge, NeoForge): the top-level names it put into the volume, and the
 * private directory where what they replaced is kept (its inode too: a directory the game's user renamed to its name is
 * never taken for it), for --rollback.
 */
export interface LoaderRecord {
  /** "NeoForge 21.1.77 for 1.21.1". */
  what: string;
  /** The game version. */
  version: string;
  dataVersion: number | undefined;
  names: string[];
  keep: { name: string; ino: number };
  /**
   * sha256 of the marker put in place (unix_args.txt; a Fabric pack's server.jar): that it is still there tells the
   * install is still the one in place.
   */
  argsDigest: string;
  /** The marker's name, when it is not unix_args.txt. */
  marker?: string | undefined;
}

/** The jars of one server volume: the one in place, the one kept as server.jar.previous, the pre-upgrade snapshot. */
export interface JarHistory {
  /** The jar jar-download installed last (none when it only ever installed a loader). */
  installed?: JarRecord | undefined;
  /** The loader installed last, when that came after the jar. */
  loader?: LoaderRecord | undefined;
  previous?: JarRecord | undefined;
  /** The short id of the snapshot taken before `installed` went in. */
  preUpgrade?: string | undefined;
  /** The image the server was switched to with `installed` (it needed a newer Java); --rollback switches it back. */
  image?: string | undefined;
  /** The image the server ran before that switch, which --rollback puts back. */
  previousImage?: string | undefined;
}

const HISTORY_FILE = "jar-download.json";

export function recordOf(
  artifact: Artifact,
  what: string,
  jar: Downloaded,
  dataVersion: number | undefined,
): JarRecord {
  return {
    what,
    version: artifact.version,
    dataVersion,
    size: jar.size,
    algorithm: jar.algorithm,
    digest: jar.digest,
  };
}

/** The record of the jar named `name` in the volume, if the history has it and the file is still that jar. */
export async function recordedAs(
  volume: VolumeDir,
  name: string,
  record: JarRecord | undefined,
): Promise<JarRecord | undefined> {
  if (!record) return undefined;
  return (await installedDigest(volume, name, record.algorithm, record.size)) === record.digest ? record : undefined;
}

/** The history of the volume `worldDir`, from the state directory (root's, not the game's); undefined if none. */
export function readHistory(paths: Paths, worldDir: string): JarHistory | undefined {
  try {
    const all = JSON.parse(readFileSync(join(paths.stateDir, HISTORY_FILE), "utf8")) as Record<string, unknown>;
    const entry = all[worldDir] as JarHistory | undefined;
    return entry && (typeof entry.installed?.what === "string" || typeof entry.loader?.what === "string")
      ? entry
      : undefined;
  } catch {
    return undefined;
  }
}

export function writeHistory(paths: Paths, worldDir: string, history: JarHistory): void {
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(join(paths.stateDir, HISTORY_FILE), "utf8")) as Record<string, unknown>;
  } catch {
    // none yet, or unreadable: begun again
  }
  all[worldDir] = history;
  mkdirSync(paths.stateDir, { recursive: true });
  writeFileAtomic(join(paths.stateDir, HISTORY_FILE), `${JSON.stringify(all, null, 2)}\n`, 0o644);
}
