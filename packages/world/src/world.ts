import { statSync } from "node:fs";
import { basename, isAbsolute, join } from "node:path";
import { ConfigError, JobError } from "@mcops/core/errors";
import { checkVolumeName, kindOf, UnsafePathError, type VolumeDir } from "@mcops/core/volume";
import { MAX_SMALL_FILE, readLevelDat } from "./level-dat.ts";

/** server.properties is a few kilobytes; anything near this is not the game's. */
const SERVER_PROPERTIES_MAX_BYTES = 1 << 20;

/**
 * Which directories make up the world (issue: level-name from server.properties, default "world", with its _nether
 * and _the_end siblings when present; Bukkit-style servers keep the dimensions there, vanilla keeps them inside).
 * server.properties is the game's file: read without following a link, at most 1 MiB, as the game reads it
 * (javaProperty: the last level-name line wins), and its level-name must be one folder name (no `/`, `..`, leading
 * dot), else exit 78 naming the file.
 */
export function levelName(volume: VolumeDir): string {
  const bytes = volume.readFile("server.properties", SERVER_PROPERTIES_MAX_BYTES);
  if (bytes === undefined) return "world";
  const file = volume.display("server.properties");
  const name = javaProperty(propertiesText(bytes), "level-name", file);
  if (!name) return "world";
  return checkVolumeName(name, { field: "level-name", file });
}

/** The game reads server.properties as UTF-8, and as ISO-8859-1 when it is not (Settings.loadFromFile). */
function propertiesText(bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString("latin1");
  }
}

/** Java properties' white space (java.util.Properties.load): space, tab and form feed. */
const PROPERTY_SPACE = /^[ \t\f]*/;

/**
 * The value of `key` in a properties text as java.util.Properties.load reads it, which the game reads
 * server.properties with: a line ends at \n, \r or \r\n and goes on past an odd number of backslashes before its end
 * (the next line's leading white space skipped); a line whose first character is # or ! is a comment, never
 * continued; the key ends at the first unescaped =, : or white space; \uXXXX, \t, \n, \r, \f and \<any> are escapes
 * in key and value; the last line with the key wins. White space ending the value is kept, as Java keeps it and the
 * game does not trim it (Settings.get): `level-name=world ` is the folder "world ", not "world". Undefined when no line
 * has the key; exit 78 naming `file` for a malformed \uXXXX, which keeps the game from
 * reading the file.
 */
export function javaProperty(text: string, key: string, file: string): string | undefined {
  let value: string | undefined;
  for (const line of logicalLines(text)) {
    const body = line.replace(PROPERTY_SPACE, "");
    if (body === "") continue;
    let end = 0;
    while (end < body.length && !"=: \t\f".includes(body[end] as string)) end += body[end] === "\\" ? 2 : 1;
    let rest = body.slice(end).replace(PROPERTY_SPACE, "");
    if (rest.startsWith("=") || rest.startsWith(":")) rest = rest.slice(1).replace(PROPERTY_SPACE, "");
    // Every key and value is read: a malformed escape anywhere keeps the game from reading any of the file.
    const read = unescapeProperty(rest, file);
    if (unescapeProperty(body.slice(0, end), file) === key) value = read;
  }
  return value;
}

/**
 * The logical lines of a properties text: natural lines joined where one ends in an odd number of backslashes, but
 * for a comment line, which ends where its natural line does.
 */
function logicalLines(text: string): string[] {
  const lines: string[] = [];
  let current: string | undefined;
  for (const natural of text.split(/\r\n|\r|\n/)) {
    if (current === undefined && /^[ \t\f]*[#!]/.test(natural)) continue;
    const line = current === undefined ? natural : current + natural.replace(PROPERTY_SPACE, "");
    if (backslashesBefore(line, line.length) % 2 === 1) current = line.slice(0, -1);
    else {
      lines.push(line);
      current = undefined;
    }
  }
  if (current !== undefined) lines.push(current);
  return lines;
}

/** How many backslashes come right before `end` in `text` (counted: a line can be a megabyte of them). */
function backslashesBefore(text: string, end: number): number {
  let at = end;
  while (at > 0 && text[at - 1] === "\\") at--;
  return end - at;
}

const PROPERTY_ESCAPES: Record<string, string> = { t: "\t", n: "\n", r: "\r", f: "\f" };

function unescapeProperty(text: string, file: string): string {
  return text.replace(/\\(u(.{0,4})|[\s\S]?)/g, (sequence, body: string, hex: string | undefined) => {
    if (hex === undefined) return PROPERTY_ESCAPES[body] ?? body;
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
      throw new ConfigError(`server.properties has a malformed \\u escape (${JSON.stringify(sequence)})`, {
        where: file,
        hint: "the game cannot read it either; write the character itself, or \\u and four hex digits",
      });
    }
    return String.fromCharCode(Number.parseInt(hex, 16));
  });
}

/** What level.dat says of the game that last saved the world. */
export interface SavedBy {
  /** Data.DataVersion: the number each game version writes (1.21.4 writes 4189). */
  dataVersion: number;
  /** Data.Version.Name, e.g. "1.21.4", when level.dat has it (1.9 and later). */
  name: string | undefined;
}

/** savedBy's answer: what level.dat says, and the file that said it. */
export interface SavedByFile extends SavedBy {
  /** The level's level.dat, or its level.dat_old when the game would start from that; relative to the volume. */
  file: string;
}

/**
 * Which game version last saved the world, from the level's level.dat (gzip NBT, read through the volume without
 * following a link, at most 16 MiB, walked without building a tree), or from level.dat_old when there is no level.dat:
 * the game starts from that (a save cut between its renames of level.dat to level.dat_old and of the new file to
 * level.dat leaves only level.dat_old). Undefined when there is neither (no world yet). A file that is not gzip NBT,
 * or has no DataVersion (a world older than 1.9), is an error that says so.
 */
export async function savedBy(volume: VolumeDir): Promise<SavedByFile | undefined> {
  const level = levelName(volume);
  let file = `${level}/level.dat`;
  let data = volume.readFile(file, MAX_SMALL_FILE);
  if (!data) {
    file = `${level}/level.dat_old`;
    data = volume.readFile(file, MAX_SMALL_FILE);
  }
  if (!data) return undefined;
  const name = basename(file);
  const read = readLevelDat(data);
  if ("problem" in read) {
    throw new JobError(`cannot tell which version saved the world: ${name} is ${read.problem}`, {
      where: volume.display(file),
      hint: "restore a snapshot whose world is whole (backup drill checks them)",
    });
  }
  if (read.dataVersion === undefined) {
    throw new JobError(`cannot tell which version saved the world: ${name} has no Data.DataVersion that is a number`, {
      where: volume.display(file),
      hint: "a world from before 1.9 has none: upgrade it with a release first",
    });
  }
  return { dataVersion: read.dataVersion, name: read.versionName, file };
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
