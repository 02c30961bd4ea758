import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SavedBy } from "@mcops/backup/world";
import { UsageError } from "@mcops/core/errors";
import { writeFileAtomic } from "@mcops/core/fs";
import type { Paths } from "@mcops/core/paths";
import type { VolumeDir } from "@mcops/core/volume";
import { DATA_VERSIONS } from "./data-versions.generated.ts";
import { type Downloaded, installedDigest } from "./download.ts";
import type { Artifact, ChecksumAlgorithm } from "./sources.ts";

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
  throw new UsageError(
    `the world was last saved by ${describeSaver(saved)}; ${what} (${target}) cannot open it safely`,
    { hint: "restore a snapshot from before the upgrade instead" },
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

/** The jars of one server volume: the one in place, the one kept as server.jar.previous, the pre-upgrade snapshot. */
export interface JarHistory {
  installed: JarRecord;
  previous?: JarRecord | undefined;
  /** The short id of the snapshot taken before `installed` went in. */
  preUpgrade?: string | undefined;
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
    return entry && typeof entry.installed?.what === "string" ? entry : undefined;
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
