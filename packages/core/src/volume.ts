import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
} from "node:fs";
import { ConfigError, JobError } from "./errors.ts";
import { formatBytes } from "./format.ts";
import { isErrno } from "./fs.ts";

/**
 * The server volume (WORLD_DIR) is written by the game and by every plugin and mod in it, while the tools run as root:
 * a symbolic link, a FIFO, a device or a name with `..` in it is an attacker steering a root process. Everything the
 * tools do inside the volume goes through this module:
 *
 * - The volume's own directory (from backup.env, the operator's word) is opened once and kept as a descriptor. Every
 *   path inside it is walked one component at a time from a directory descriptor, each opened with O_NOFOLLOW
 *   (`/proc/self/fd/<fd>/<name>` is openat() for a language without it: the kernel resolves the magic link to the open
 *   directory itself, wherever it has been moved since). A link anywhere on the way is refused with one line.
 * - Names that come from the volume (level-name) must be single path components.
 * - Files are opened O_NOFOLLOW|O_NONBLOCK, then fstat'ed: only a regular file is read (a FIFO never blocks, a device is
 *   never read), and never more than a cap.
 * - Private directories (staging, aside, downloads) are made with an exclusive mkdir under an unpredictable name,
 *   checked to be ours through their descriptor, and mode 700: the game's user cannot enter them.
 * - Ownership and modes are changed on descriptors, or with lchown on a name whose directory is pinned by a descriptor:
 *   never by a path that a link could redirect.
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/** Something inside the volume is not what it must be: a link, a FIFO, a device, a directory, a file too large. */
export class UnsafePathError extends JobError {}

/** What an entry is, for a message: "a symbolic link", "a FIFO", "a directory", ... */
export function kindOf(stat: Stats): string {
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "a regular file";
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a world folder name with a control character in it is refused
const CONTROL_CHARACTER = /[\u0001-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A name read from the volume (level-name) used as one entry of the volume: refused unless it is a single path
 * component, not hidden, with no NUL (exit 78, naming the file it came from).
 */
export function checkVolumeName(name: string, options: { field: string; file: string }): string {
  const problem =
    name === ""
      ? "is empty"
      : name.includes("/") || name.includes("\\")
        ? "has a path separator in it"
        : name === "." || name === ".." || name.startsWith(".")
          ? "starts with a dot"
          : name.includes("\0")
            ? "has a NUL character in it"
            : CONTROL_CHARACTER.test(name)
              ? "has a control character in it"
              : Buffer.byteLength(name) > 255
                ? "is longer than a file name can be"
                : undefined;
  if (problem) {
    throw new ConfigError(`${options.field} ${JSON.stringify(name)} ${problem}: it must be one folder name`, {
      where: options.file,
      hint: `set ${options.field} to the world folder's own name, e.g. world`,
    });
  }
  return name;
}

/** A directory inside (or the root of) the volume, held open: its place can change, what it is cannot. */
export class VolumeDir {
  readonly fd: number;
  /** Where it was when opened, for messages only: never used to reach it. */
  readonly path: string;
  #closed = false;

  private constructor(fd: number, path: string) {
    this.fd = fd;
    this.path = path;
  }

  /**
   * Opens a directory the operator named (WORLD_DIR from backup.env, a --dir): the operator's own path is trusted
   * as written, links in it included; everything below it is not.
   */
  static open(path: string, what = "the server volume"): VolumeDir {
    try {
      return new VolumeDir(openSync(path, O_RDONLY | O_DIRECTORY), path);
    } catch (error) {
      if (isErrno(error, "ENOENT")) throw new JobError(`${what} does not exist`, { where: path });
      if (isErrno(error, "ENOTDIR")) throw new JobError(`${what} is not a directory`, { where: path });
      throw error;
    }
  }

  /**
   * The path that reaches `name` inside this directory through its descriptor. `name` must be one component; the
   * caller decides whether the last component may be followed (rename, lchown, mkdir and unlink never follow it).
   */
  at(name: string): string {
    if (name === "" || name.includes("/") || name === "." || name === "..") {
      throw new Error(`not a single path component: ${JSON.stringify(name)}`);
    }
    return `/proc/self/fd/${this.fd}/${name}`;
  }

  /** The directory itself through its descriptor (for a child process such as restic, use `forChild`). */
  get self(): string {
    return `/proc/self/fd/${this.fd}`;
  }

  /** The directory as another process reaches it: through this process's descriptor, for as long as it is open. */
  get forChild(): string {
    return `/proc/${process.pid}/fd/${this.fd}`;
  }

  /**
   * Where `rel` is, for messages. Joined, not normalized: a walk 20,000 directories deep names each level, and
   * normalizing a path that long at every level made the walk quadratic (seconds per 10,000 levels).
   */
  display(rel: string): string {
    if (!rel) return this.path;
    return this.path.endsWith("/") ? `${this.path}${rel}` : `${this.path}/${rel}`;
  }

  /** The entry `rel` (slash-separated, below this directory) without following any link; undefined if absent. */
  lstat(rel: string): Stats | undefined {
    const { parent, name } = this.#parentOf(rel);
    if (!parent) return undefined;
    try {
      return lstatSync(parent.at(name));
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return undefined;
      throw error;
    } finally {
      if (parent !== this) parent.close();
    }
  }

  /** Opens the directory `rel` below this one, walking it without following links; undefined if it is absent. */
  tryDir(rel: string): VolumeDir | undefined {
    let dir: VolumeDir = this;
    const parts = splitRel(rel);
    for (const [i, part] of parts.entries()) {
      let next: VolumeDir | undefined;
      try {
        next = new VolumeDir(openSync(dir.at(part), DIR_FLAGS), this.display(parts.slice(0, i + 1).join("/")));
      } catch (error) {
        const problem = this.#problem(dir, part, error, "a directory", parts.slice(0, i + 1).join("/"));
        if (dir !== this) dir.close();
        if (problem) throw problem;
        return undefined;
      }
      if (dir !== this) dir.close();
      dir = next;
    }
    return dir === this ? new VolumeDir(openSync(this.self, O_RDONLY | O_DIRECTORY), this.path) : dir;
  }

  /** Like tryDir, but an absent directory is an error. */
  dir(rel: string): VolumeDir {
    const dir = this.tryDir(rel);
    if (!dir) throw new UnsafePathError(`${this.display(rel)} does not exist`);
    return dir;
  }

  /**
   * Opens the regular file `rel` for reading without following any link and without ever blocking (a FIFO, a device,
   * a socket or a directory is refused with one line); undefined if it is absent.
   */
  tryOpenFile(rel: string): { fd: number; stat: Stats } | undefined {
    const { parent, name } = this.#parentOf(rel);
    if (!parent) return undefined;
    try {
      // Looked at before it is opened: opening a device can itself do something. What is opened is checked again.
      const seen = lstatSync(parent.at(name), { throwIfNoEntry: false });
      if (!seen) return undefined;
      if (!seen.isFile()) throw this.#notRegular(rel, seen);
      let fd: number;
      try {
        fd = openSync(parent.at(name), FILE_FLAGS);
      } catch (error) {
        const problem = this.#problem(parent, name, error, "a regular file", rel);
        if (problem) throw problem;
        return undefined;
      }
      const stat = fstatSync(fd);
      if (!stat.isFile()) {
        closeSync(fd);
        throw this.#notRegular(rel, stat);
      }
      return { fd, stat };
    } finally {
      if (parent !== this) parent.close();
    }
  }

  /**
   * The whole regular file `rel`, refused when larger than `maxBytes` (and never more than that read, however it
   * grows meanwhile); undefined if it is absent.
   */
  readFile(rel: string, maxBytes: number): Buffer | undefined {
    const file = this.tryOpenFile(rel);
    if (!file) return undefined;
    try {
      if (file.stat.size > maxBytes) {
        throw new UnsafePathError(
          `${this.display(rel)} is ${formatBytes(file.stat.size)}, more than the ${formatBytes(maxBytes)} such a file can be`,
          { hint: "something in the server volume wrote it; look at it and remove it" },
        );
      }
      return readRange(file.fd, 0, file.stat.size);
    } finally {
      closeSync(file.fd);
    }
  }

  /**
   * Makes a new directory here that only this process's user can enter: an exclusive mkdir under `prefix` and six
   * random characters, opened without following links and checked through its descriptor to be the one just made.
   */
  makePrivateDir(prefix: string): VolumeDir {
    const made = mkdtempSync(this.at(prefix));
    const name = made.slice(made.lastIndexOf("/") + 1);
    let fd: number;
    try {
      fd = openSync(made, DIR_FLAGS);
    } catch (error) {
      throw new UnsafePathError(`${this.display(name)} was replaced as soon as it was made`, { cause: error });
    }
    const stat = fstatSync(fd);
    if (stat.uid !== process.geteuid?.()) {
      closeSync(fd);
      throw new UnsafePathError(`${this.display(name)} was replaced as soon as it was made`);
    }
    fchmodSync(fd, 0o700);
    return new VolumeDir(fd, this.display(name));
  }

  /**
   * Opens the directory `rel` below this one, making each missing component (mode 755, given to `owner` through its
   * descriptor when one is named): like tryDir, a link or anything else on the way is refused, never followed.
   */
  ensureDir(rel: string, owner?: { uid: number; gid: number }): VolumeDir {
    let dir: VolumeDir = new VolumeDir(openSync(this.self, O_RDONLY | O_DIRECTORY), this.path);
    for (const part of splitRel(rel)) {
      let made = false;
      try {
        mkdirSync(dir.at(part), 0o755);
        made = true;
      } catch (error) {
        if (!isErrno(error, "EEXIST")) {
          dir.close();
          throw error;
        }
      }
      let next: VolumeDir;
      try {
        next = dir.dir(part);
      } finally {
        dir.close();
      }
      if (made && owner) fchownSync(next.fd, owner.uid, owner.gid);
      dir = next;
    }
    return dir;
  }

  /** The names in this directory. */
  list(): string[] {
    return readdirSync(this.self);
  }

  /** Moves the entry `name` (whatever it is: a link is moved, never followed) to `to`/`toName`, replacing a file. */
  rename(name: string, to: VolumeDir, toName = name): void {
    renameSync(this.at(name), to.at(toName));
  }

  /** Removes the entry `name` if it is not a directory (a link is removed, never followed). */
  unlink(name: string): void {
    try {
      unlinkSync(this.at(name));
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
  }

  /**
   * Removes the directory `name` and everything in it, walking through descriptors: a link inside is removed, never
   * followed, and a directory swapped for a link while this runs is not entered. However deep the tree (the game's
   * user can nest directories far past PATH_MAX), the walk is a loop holding at most TREE_OPEN_DEPTH directories
   * open: a directory deeper than that is first moved up into the top one and removed from there.
   */
  removeTree(name: string): void {
    const top = this.tryDirNoThrow(name);
    if (!top) {
      this.unlink(name);
      return;
    }
    const open: { dir: VolumeDir; name: string; entries: string[] }[] = [{ dir: top, name, entries: top.list() }];
    let movedUp = 0;
    const names = { next: 1 };
    try {
      while (open.length > 0) {
        const frame = open.at(-1) as (typeof open)[number];
        const entry = frame.entries.pop();
        if (entry === undefined) {
          if (frame.dir === top && movedUp > 0) {
            movedUp = 0;
            frame.entries = top.list(); // what was moved up meanwhile
            continue;
          }
          open.pop();
          frame.dir.close();
          rmdirSync((open.at(-1)?.dir ?? this).at(frame.name));
          continue;
        }
        const stat = lstatSync(frame.dir.at(entry), { throwIfNoEntry: false });
        if (!stat) continue;
        if (!stat.isDirectory()) {
          frame.dir.unlink(entry);
          continue;
        }
        if (open.length >= TREE_OPEN_DEPTH) {
          frame.dir.rename(entry, top, unusedName(top, names));
          movedUp += 1;
          continue;
        }
        const sub = frame.dir.tryDirNoThrow(entry);
        if (!sub) {
          frame.dir.unlink(entry); // no longer a directory
          continue;
        }
        open.push({ dir: sub, name: entry, entries: sub.list() });
      }
    } finally {
      for (const frame of open) frame.dir.close();
    }
  }

  /**
   * chown -R of the entry `name` that never follows a link: each entry is changed with lchown on its name in a
   * directory held open, and each directory is entered through O_NOFOLLOW. A loop holding one directory open, going
   * back up through `..`: a tree the game's user nested 20,000 deep overflowed the stack (a restore's ownership fix-up
   * failed). Only for a tree nobody else can reach while it runs (a restore's private staging directory), since `..`
   * is where the directory is now.
   */
  chownTree(name: string, uid: number, gid: number): void {
    lchownSync(this.at(name), uid, gid);
    const top = this.tryDirNoThrow(name);
    if (!top) return;
    let dir: VolumeDir = top;
    const pending: string[][] = [dir.list()];
    try {
      while (pending.length > 0) {
        const entry = (pending.at(-1) as string[]).pop();
        if (entry === undefined) {
          pending.pop();
          if (pending.length === 0) break;
          const parent: VolumeDir = new VolumeDir(openSync(`${dir.self}/..`, DIR_FLAGS), dir.path);
          dir.close();
          dir = parent;
          continue;
        }
        lchownSync(dir.at(entry), uid, gid);
        const sub = dir.tryDirNoThrow(entry);
        if (!sub) continue;
        dir.close();
        dir = sub;
        pending.push(sub.list());
      }
    } finally {
      dir.close();
    }
  }

  /**
   * Removes a private directory made here (makePrivateDir): emptied through its own descriptor, then removed by its
   * name only if that name is still the same directory (the game's user may have renamed it meanwhile).
   */
  removePrivateDir(dir: VolumeDir): void {
    for (const entry of dir.list()) dir.removeTree(entry);
    const name = dir.path.slice(dir.path.lastIndexOf("/") + 1);
    const there = this.lstat(name);
    if (there?.isDirectory() && there.ino === dir.stat().ino && there.dev === dir.stat().dev) rmdirSync(this.at(name));
  }

  /** What the directory is (fstat of its descriptor). */
  stat(): Stats {
    return fstatSync(this.fd);
  }

  /** fsync of the directory: its renames are on disk. */
  sync(): void {
    fsyncSync(this.fd);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.fd);
  }

  /** The entry `name` as a directory, or undefined when it is anything else (a link included) or gone. */
  private tryDirNoThrow(name: string): VolumeDir | undefined {
    try {
      return new VolumeDir(openSync(this.at(name), DIR_FLAGS), this.display(name));
    } catch {
      return undefined;
    }
  }

  /** The directory holding `rel` (walked without following links) and the last component; parent undefined if absent. */
  #parentOf(rel: string): { parent: VolumeDir | undefined; name: string } {
    const parts = splitRel(rel);
    const name = parts.pop();
    if (name === undefined) throw new Error("an empty path inside the volume");
    return { parent: parts.length ? this.tryDir(parts.join("/")) : this, name };
  }

  #notRegular(rel: string, stat: Stats): UnsafePathError {
    return new UnsafePathError(`${this.display(rel)} is ${kindOf(stat)}, not a regular file`, {
      hint: stat.isSymbolicLink()
        ? "links inside the server volume are never followed; remove it"
        : "something in the server volume replaced it; remove it (the game writes it again)",
    });
  }

  /** Turns a failed open into the line that says what is there instead, or undefined when nothing is there. */
  #problem(dir: VolumeDir, name: string, error: unknown, wanted: string, rel: string): UnsafePathError | undefined {
    if (isErrno(error, "ENOENT")) return undefined;
    if (isErrno(error, "EAGAIN") || isErrno(error, "EWOULDBLOCK")) {
      // A lease taken by the game's user: opening would wait for it to let go.
      return new UnsafePathError(`${this.display(rel)} is held by another process (a file lease), not opened`, {
        hint: "something in the server volume holds it; try again, or restart the server",
      });
    }
    if (!isErrno(error, "ELOOP") && !isErrno(error, "ENOTDIR")) throw error;
    const stat = lstatSync(dir.at(name), { throwIfNoEntry: false });
    if (!stat) return undefined;
    return new UnsafePathError(`${this.display(rel)} is ${kindOf(stat)}, not ${wanted}`, {
      hint: stat.isSymbolicLink()
        ? "links inside the server volume are never followed; remove it"
        : "something in the server volume replaced it; remove it",
    });
  }
}

/** The most directories removeTree holds open at once. */
const TREE_OPEN_DEPTH = 64;

/** A name not in `dir` for a directory moved up into it: short (the moved one's own may be 255 bytes already). */
function unusedName(dir: VolumeDir, counter: { next: number }): string {
  for (;;) {
    const candidate = `.up-${counter.next}`;
    counter.next += 1;
    if (!dir.lstat(candidate)) return candidate;
  }
}

function splitRel(rel: string): string[] {
  const parts = rel.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw new Error(`a path inside the volume cannot go up: ${rel}`);
  return parts;
}

/** Up to `maxBytes` of an open file from `start` (less at its end). */
export function readRange(fd: number, start: number, maxBytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(maxBytes);
  let read = 0;
  while (read < maxBytes) {
    const n = readSync(fd, buffer, read, maxBytes - read, start + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read);
}

/** fchown and fchmod of an open file: what it is cannot change between the check and the change. */
export function setOwnerAndMode(fd: number, owner: { uid: number; gid: number }, mode: number): void {
  fchownSync(fd, owner.uid, owner.gid);
  fchmodSync(fd, mode);
}
