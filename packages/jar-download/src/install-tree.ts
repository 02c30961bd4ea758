import { closeSync, constants, fstatSync, lstatSync, openSync, writeSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { kindOf, setOwnerAndMode, type VolumeDir } from "@mcops/core/volume";
import type { Owner } from "./install.ts";
import type { LoaderRecord } from "./versions.ts";

/**
 * What a loader's installer (Forge, NeoForge, Quilt: run in a container as the game's user, in a private staging
 * directory) leaves behind is put into the server's volume the way a jar is (docs/system.md 4.3): checked and given to
 * the container's user through descriptors while only root can reach it, then moved in by rename, what each entry
 * replaces moved aside first (kept for --rollback), the volume fsynced.
 *
 * The installer is the vendor's code, but its output is still checked like anything the game's user could have
 * written: only directories and regular files (a link, a FIFO or a device refuses the whole install), within bounds
 * (a real NeoForge install is a few hundred files and about 100 MiB), and only the top-level names the caller expects
 * are moved in: anything else the installer made stays in the staging directory and is removed with it.
 */

/** The most a loader's installer may leave: entries, bytes and directory depth. */
export interface TreeLimits {
  entries: number;
  bytes: number;
  depth: number;
}

/** Ten times a real NeoForge 1.21.1 server install (about 300 files, 110 MiB, 14 levels of libraries/). */
export const INSTALL_LIMITS: TreeLimits = { entries: 20_000, bytes: 2 * 2 ** 30, depth: 32 };

/** Where what an install replaced is kept (a directory only root can enter), for --rollback. */
export const KEEP_PREFIX = ".mcops-previous-install-";

/** The shape of what was checked. */
export interface TreeSummary {
  entries: number;
  bytes: number;
}

/**
 * Checks every entry below `dir` (the installer's output, in the private staging directory) and gives it to `owner`
 * through its descriptor: directories 755, files 644, or 755 when the installer made them executable (run.sh).
 * Anything that is not a directory or a regular file, or more than the limits, is a JobError naming it.
 */
export function checkTree(dir: VolumeDir, owner: Owner, limits: TreeLimits = INSTALL_LIMITS): TreeSummary {
  const summary: TreeSummary = { entries: 0, bytes: 0 };
  walk(dir, "", 0, owner, limits, summary);
  return summary;
}

function walk(dir: VolumeDir, rel: string, depth: number, owner: Owner, limits: TreeLimits, seen: TreeSummary): void {
  if (depth > limits.depth) {
    throw refused(dir, rel, `is more than ${limits.depth} directories deep`);
  }
  for (const name of dir.list()) {
    const path = rel ? `${rel}/${name}` : name;
    seen.entries += 1;
    if (seen.entries > limits.entries) throw refused(dir, path, `makes more than ${limits.entries} entries`);
    const stat = lstatSync(dir.at(name), { throwIfNoEntry: false });
    if (!stat) continue; // gone: nothing to move
    if (stat.isDirectory()) {
      const sub = dir.dir(name);
      try {
        setOwnerAndMode(sub.fd, owner, 0o755);
        walk(sub, path, depth + 1, owner, limits, seen);
      } finally {
        sub.close();
      }
    } else if (stat.isFile()) {
      seen.bytes += stat.size;
      if (seen.bytes > limits.bytes) throw refused(dir, path, `makes more than ${formatBytes(limits.bytes)}`);
      giveFile(dir, name, path, owner);
    } else {
      throw refused(dir, path, `is ${kindOf(stat)}, not a regular file or a directory`);
    }
  }
}

/** Opened without following a link or blocking, checked through the descriptor, then given to the owner. */
function giveFile(dir: VolumeDir, name: string, path: string, owner: Owner): void {
  const fd = openSync(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refused(dir, path, `is ${kindOf(stat)}, not a regular file`);
    setOwnerAndMode(fd, owner, stat.mode & 0o100 ? 0o755 : 0o644);
  } finally {
    closeSync(fd);
  }
}

function refused(dir: VolumeDir, rel: string, what: string): JobError {
  return new JobError(`the installer's output ${rel || "."} ${what}: nothing was installed`, {
    where: rel ? `${dir.path}/${rel}` : dir.path,
    hint: "run the installer again; if it does the same, install another loader version",
  });
}

/**
 * Removes the directory where an install kept what it replaced, once a newer install is recorded in its place (only the
 * last install can be rolled back: the older one's directory would stay in the volume, hidden, for good: a whole
 * libraries/ or mods/ each time). Only the very directory made (keptDir's checks); anything else is left alone.
 */
export function forgetKept(volume: VolumeDir, record: LoaderRecord): void {
  let kept: VolumeDir;
  try {
    kept = keptDir(volume, record);
  } catch {
    return; // gone already, or not ours
  }
  try {
    volume.removePrivateDir(kept);
  } catch {
    // Left for the operator to see: it is root's, hidden, and named in no record.
  } finally {
    kept.close();
  }
}

/** The directory the install kept what it replaced in: still the same one (inode), ours, mode 700. */
export function keptDir(volume: VolumeDir, record: LoaderRecord): VolumeDir {
  const gone = new JobError(`what ${record.what} replaced is no longer kept in the volume`, {
    where: volume.display(record.keep.name),
    hint: "install the version you want instead",
  });
  if (!record.keep.name.startsWith(KEEP_PREFIX)) throw gone;
  let kept: VolumeDir | undefined;
  try {
    kept = volume.tryDir(record.keep.name);
  } catch {
    throw gone;
  }
  if (!kept) throw gone;
  const stat = kept.stat();
  if (stat.ino !== record.keep.ino || stat.uid !== process.geteuid?.() || (stat.mode & 0o777) !== 0o700) {
    kept.close();
    throw gone;
  }
  return kept;
}

/** What moveInto did: the names put in place, and those of them that replaced an entry (now in the keep directory). */
export interface Moved {
  installed: string[];
  replaced: string[];
}

/**
 * Moves the top-level entries `names` of `from` into `volume`. What is in the volume under a name is first moved into
 * `keep` (a link is moved as the link, never followed); then the new entry is renamed in; the volume is fsynced. With
 * `clear`, a name `from` lacks is moved out of the volume too (a rollback: the volume becomes what `from` kept). If a
 * rename fails midway, what was done is undone as far as it can be, and the error is thrown.
 */
export function moveInto(
  from: VolumeDir,
  volume: VolumeDir,
  keep: VolumeDir,
  names: readonly string[],
  options: { clear?: boolean } = {},
): Moved {
  const replaced: string[] = [];
  const installed: string[] = [];
  try {
    for (const name of names) {
      const coming = from.lstat(name) !== undefined;
      if (!coming && !options.clear) continue;
      if (volume.lstat(name)) {
        volume.rename(name, keep);
        replaced.push(name);
      }
      if (!coming) continue;
      from.rename(name, volume);
      installed.push(name);
    }
  } catch (error) {
    undo(from, volume, keep, { installed, replaced });
    throw error;
  } finally {
    volume.sync();
    keep.sync();
  }
  return { installed, replaced };
}

/** Puts the volume back as it was before moveInto began: each installed entry back, each replaced one back in place. */
function undo(from: VolumeDir, volume: VolumeDir, keep: VolumeDir, moved: Moved): void {
  for (const name of moved.installed) {
    try {
      volume.rename(name, from);
    } catch {
      // Left in the volume: the entry it replaced stays in the keep directory.
    }
  }
  for (const name of moved.replaced) {
    try {
      if (!volume.lstat(name)) keep.rename(name, volume);
    } catch {
      // Stays in the keep directory, which is named in the error's log line by the caller.
    }
  }
}

/** What a modern Forge or NeoForge install (game 1.17 and later) must leave, and what of it goes into the volume. */
export interface LoaderLayout {
  /** The loader's JVM and program arguments, below libraries/ (run.sh reads it). */
  argsFile: string;
  /** Top-level names moved into the volume, in this order. */
  names: readonly string[];
}

/**
 * NeoForge writes libraries/net/neoforged/neoforge/<v>/unix_args.txt, Forge libraries/net/minecraftforge/forge/
 * <game>-<v>/unix_args.txt (neoforged/LegacyInstaller and MinecraftForge/Installer, ServerInstall; the processors'
 * EXTRACT_FILES), both with run.sh, run.bat and user_jvm_args.txt beside libraries/.
 */
export function loaderLayout(type: "neoforge" | "forge", game: string, loader: string): LoaderLayout {
  const args =
    type === "neoforge"
      ? `libraries/net/neoforged/neoforge/${loader}/unix_args.txt`
      : `libraries/net/minecraftforge/forge/${game}-${loader}/unix_args.txt`;
  return { argsFile: args, names: ["libraries", "run.sh", "run.bat", UNIX_ARGS, JVM_ARGS] };
}

/** The panel's Forge and NeoForge eggs start `java … @unix_args.txt` when this file is in the volume's top folder. */
export const UNIX_ARGS = "unix_args.txt";
/** The operator's memory settings for run.sh: never replaced once there (the installer itself does not either). */
export const JVM_ARGS = "user_jvm_args.txt";
/** An arguments file is a few KiB (a module path and some flags). */
export const ARGS_MAX_BYTES = 256 * 1024;

/**
 * Checks that the installer left what it must (an installer can end with 0 having written nothing: Forge's when its
 * certificate check fails), and puts a copy of the loader's unix_args.txt at the top of its output, where the eggs'
 * startup line reads it. Returns the names to move into the volume: user_jvm_args.txt only when the volume has none.
 */
export function prepareLoaderOutput(out: VolumeDir, volume: VolumeDir, layout: LoaderLayout, owner: Owner): string[] {
  for (const rel of ["run.sh", layout.argsFile]) {
    const stat = out.lstat(rel);
    if (!stat?.isFile()) {
      throw new JobError(
        `the installer ended without writing ${rel}${stat ? ` (it is ${kindOf(stat)})` : ""}: nothing was installed`,
        {
          where: out.path,
          hint: "look at its output in the log above; run it again, or install another loader version",
        },
      );
    }
  }
  writeNew(out, UNIX_ARGS, out.readFile(layout.argsFile, ARGS_MAX_BYTES) as Buffer, owner);
  return layout.names.filter((name) => name !== JVM_ARGS || !volume.lstat(JVM_ARGS));
}

/**
 * `name` in `out` written anew (whatever the installer left under it unlinked first, never opened through: created
 * O_EXCL|O_NOFOLLOW), given to the owner through its descriptor, 644.
 */
function writeNew(out: VolumeDir, name: string, bytes: Buffer, owner: Owner): void {
  out.unlink(name);
  const fd = openSync(
    out.at(name),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, bytes);
    setOwnerAndMode(fd, owner, 0o644);
  } finally {
    closeSync(fd);
  }
}

/** Quilt's launcher, as its installer names it: a manifest-only jar whose Class-Path names libraries/. */
const QUILT_LAUNCH = "quilt-server-launch.jar";
/** Where Mojang's server goes: the panel's Quilt egg's name for it (the launcher becomes server.jar). */
export const QUILT_VANILLA = "vanilla.jar";
/** The launcher reads the game's jar's name here (QuiltServerLauncher, as Fabric's launcher reads its own file). */
export const QUILT_PROPERTIES = "quilt-server-launcher.properties";

/**
 * Quilt's installer (`install server … --download-server`) leaves quilt-server-launch.jar, libraries/ and Mojang's
 * server.jar, and exits 0 even when it failed (its errors are printed, never an exit code): both jars must be there.
 * Laid out as the panel's Quilt egg has it, so that the egg's `-jar {{SERVER_JARFILE}}` starts Quilt: the launcher
 * becomes server.jar (its Class-Path is relative to itself), Mojang's jar vanilla.jar, named in
 * quilt-server-launcher.properties. Returns the names to move into the volume.
 */
export function prepareQuiltOutput(out: VolumeDir, owner: Owner): string[] {
  for (const name of [QUILT_LAUNCH, "server.jar", "libraries"]) {
    const stat = out.lstat(name);
    if (!(name === "libraries" ? stat?.isDirectory() : stat?.isFile())) {
      throw new JobError(
        `the installer ended without writing ${name}${stat ? ` (it is ${kindOf(stat)})` : ""}: nothing was installed`,
        {
          where: out.path,
          hint: "look at its output in the log above (Quilt's installer prints its failures and still ends with 0)",
        },
      );
    }
  }
  out.rename("server.jar", out, QUILT_VANILLA);
  out.rename(QUILT_LAUNCH, out, "server.jar");
  const text = `# written by jar-download: the game's jar, which Quilt's launcher (server.jar) loads\nserverJar=${QUILT_VANILLA}\n`;
  writeNew(out, QUILT_PROPERTIES, Buffer.from(text), owner);
  return ["libraries", "server.jar", QUILT_VANILLA, QUILT_PROPERTIES];
}

/**
 * Forge before 1.17 (MinecraftForge/Installer ServerInstall): `forge-<mc>-<v>.jar` (1.7.10:
 * `forge-<mc>-<v>-<mc>-universal.jar`), Mojang's `minecraft_server.<mc>.jar` and `libraries/`, no run.sh. Laid out as
 * the panel's Forge egg has it for these versions: the Forge jar becomes server.jar (the egg's `-jar
 * {{SERVER_JARFILE}}`); it finds Mojang's jar by its name beside it. Returns the names to move into the volume.
 */
export function prepareLegacyForgeOutput(out: VolumeDir, game: string, loader: string): string[] {
  const vanilla = `minecraft_server.${game}.jar`;
  const forge = [
    `forge-${game}-${loader}.jar`,
    `forge-${game}-${loader}-${game}-universal.jar`,
    `forge-${game}-${loader}-universal.jar`,
  ].find((name) => out.lstat(name)?.isFile());
  for (const [name, there] of [
    [forge ?? `forge-${game}-${loader}.jar`, forge !== undefined],
    [vanilla, out.lstat(vanilla)?.isFile() === true],
    ["libraries", out.lstat("libraries")?.isDirectory() === true],
  ] as const) {
    if (!there) {
      throw new JobError(`the installer ended without writing ${name}: nothing was installed`, {
        where: out.path,
        hint: "look at its output in the log above; run it again, or install another loader version",
      });
    }
  }
  out.rename(forge as string, out, "server.jar");
  return ["libraries", "server.jar", vanilla];
}
