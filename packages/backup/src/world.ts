import { statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { JobError } from "@mcops/core/errors";
import { checkVolumeName, kindOf, UnsafePathError, type VolumeDir } from "@mcops/core/volume";
import { MAX_SMALL_FILE, readLevelDat } from "./drill/level-dat.ts";

/** server.properties is a few kilobytes; anything near this is not the game's. */
const SERVER_PROPERTIES_MAX_BYTES = 1 << 20;

/**
 * Which directories make up the world (issue: level-name from server.properties, default "world", with its _nether
 * and _the_end siblings when present; Bukkit-style servers keep the dimensions there, vanilla keeps them inside).
 * server.properties is the game's file: read without following a link, at most 1 MiB, and its level-name must be one
 * folder name (no `/`, `..`, leading dot), else exit 78 naming the file.
 */
export function levelName(volume: VolumeDir): string {
  const text = volume.readFile("server.properties", SERVER_PROPERTIES_MAX_BYTES)?.toString("utf8");
  if (text === undefined) return "world";
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*level-name\s*[=:]\s*(.*?)\s*$/.exec(line);
    // server.properties is a Java properties file: \: and \= are escapes.
    if (match) {
      const name = (match[1] ?? "").replace(/\\(.)/g, "$1") || "world";
      return checkVolumeName(name, { field: "level-name", file: volume.display("server.properties") });
    }
  }
  return "world";
}

/** What level.dat says of the game that last saved the world. */
export interface SavedBy {
  /** Data.DataVersion: the number each game version writes (1.21.4 writes 4189). */
  dataVersion: number;
  /** Data.Version.Name, e.g. "1.21.4", when level.dat has it (1.9 and later). */
  name: string | undefined;
}

/**
 * Which game version last saved the world, from the level's level.dat (gzip NBT, read through the volume without
 * following a link, at most 16 MiB, walked without building a tree); undefined when there is no world yet. A level.dat that is not gzip NBT, or has no
 * DataVersion (a world older than 1.9), is an error that says so.
 */
export async function savedBy(volume: VolumeDir): Promise<SavedBy | undefined> {
  const file = `${levelName(volume)}/level.dat`;
  const data = volume.readFile(file, MAX_SMALL_FILE);
  if (!data) return undefined;
  const read = readLevelDat(data);
  if ("problem" in read) {
    throw new JobError(`cannot tell which version saved the world: level.dat is ${read.problem}`, {
      where: volume.display(file),
      hint: "restore a snapshot whose world is whole (backup drill checks them)",
    });
  }
  if (read.dataVersion === undefined) {
    throw new JobError(
      "cannot tell which version saved the world: level.dat has no Data.DataVersion that is a number",
      {
        where: volume.display(file),
        hint: "a world from before 1.9 has none: upgrade it with a release first",
      },
    );
  }
  return { dataVersion: read.dataVersion, name: read.versionName };
}

/** The world's directories that are there, by name: the main one must be, and none may be a link. */
function worldNames(volume: VolumeDir): string[] {
  const level = levelName(volume);
  const names = [level, `${level}_nether`, `${level}_the_end`].filter((name) => isDirectory(volume, name));
  if (names[0] !== level) {
    throw new JobError(`the world "${level}" is not in the server volume`, {
      where: volume.display(level),
      hint: "check WORLD_DIR in backup.env (the server's volume, /var/lib/pterodactyl/volumes/<uuid>) and level-name in server.properties",
    });
  }
  return names;
}

export function worldDirectories(volume: VolumeDir): string[] {
  return worldNames(volume).map((name) => join(volume.path, name));
}

/**
 * The world's directories and the extra paths. An extra path relative to the volume is walked without following
 * links (restic would follow a link on the way); an absolute one is the operator's own choice.
 */
export function backupPaths(volume: VolumeDir, extra: readonly string[] = []): string[] {
  const paths = worldDirectories(volume);
  for (const path of extra) {
    const inside = !isAbsolute(path);
    const full = inside ? join(volume.path, path) : path;
    if (inside && path.split("/").includes("..")) {
      throw new JobError(`the extra path "${path}" leaves the server volume`, {
        where: full,
        hint: "fix BACKUP_EXTRA_PATHS or --extra-path: give a path inside the volume, or an absolute one",
      });
    }
    // An absolute path is the operator's, taken as written (links in it included); restic reads the volume's part of
    // it with no link followed anyway (see isolate.ts).
    const there = inside ? volume.lstat(path) : statOrUndefined(full);
    if (!there) {
      throw new JobError(`the extra path "${path}" does not exist`, {
        where: full,
        hint: "fix BACKUP_EXTRA_PATHS or --extra-path",
      });
    }
    if (there.isSymbolicLink()) {
      throw new UnsafePathError(`the extra path "${path}" is a symbolic link`, {
        where: full,
        hint: "links inside the server volume are never followed; name what it points to instead",
      });
    }
    if (!paths.includes(full)) paths.push(full);
  }
  return paths;
}

function isDirectory(volume: VolumeDir, name: string): boolean {
  const stat = volume.lstat(name);
  if (stat?.isSymbolicLink()) {
    throw new UnsafePathError(`${volume.display(name)} is ${kindOf(stat)}, not a world directory`, {
      hint: "links inside the server volume are never followed; remove it",
    });
  }
  return stat?.isDirectory() ?? false;
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
