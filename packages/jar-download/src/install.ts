import { closeSync, constants, copyFileSync, linkSync, openSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { isErrno } from "@mcops/core/fs";
import { setOwnerAndMode, type VolumeDir } from "@mcops/core/volume";
import { INSTALLED_JAR_MAX_BYTES } from "./download.ts";

export const JAR = "server.jar";
export const PREVIOUS = "server.jar.previous";
/** The private directory a download goes to: in the volume (the final rename is atomic), but only root can enter it. */
export const WORK_PREFIX = ".mcops-jar-download-";
/**
 * In the private directory: where a loader's installer runs (the container's working directory, given to the game's
 * user). Hidden, so that no world folder has its name (level-name cannot start with a dot): a directory of root's that
 * the game's user renamed to look like a download directory (restore's aside directory) never passes for one.
 */
export const INSTALL_DIR = ".installer";
/** In the private directory, beside INSTALL_DIR: where a modpack's files are staged. Hidden for the same reason. */
export const PACK_DIR = ".pack";
/** Where earlier versions downloaded to, beside server.jar: removed if an interrupted run left one. */
const OLD_TEMP_PREFIX = ".server.jar.download-";

/**
 * Removes what an interrupted earlier run left (it held the jar-download lock, so none is in use now): private
 * directories only root could have made (owned by this user, mode 700), and the temporary files of older versions
 * (unlinked, never followed).
 */
export function removeStaleTemps(volume: VolumeDir): void {
  for (const name of volume.list()) {
    if (name.startsWith(OLD_TEMP_PREFIX)) {
      const stat = volume.lstat(name);
      if (stat && !stat.isDirectory()) volume.unlink(name);
    } else if (name.startsWith(WORK_PREFIX)) {
      removeIfOwnWorkDir(volume, name);
    }
  }
}

/**
 * Removes a download directory an earlier run made: ours (owned by this user, mode 700) and holding nothing but what a
 * run puts there (server.jar, server.jar.previous, a loader installer's directory), checked and emptied through one
 * descriptor, then removed by name only if the name is still it. The game's user can rename any of root's directories
 * in its volume (restore's aside directory with the previous world, say) to look like one: those hold other things
 * and are left alone.
 */
function removeIfOwnWorkDir(volume: VolumeDir, name: string): void {
  let dir: VolumeDir | undefined;
  try {
    dir = volume.tryDir(name);
  } catch {
    return; // a link or something else that is not a directory: not ours
  }
  if (!dir) return;
  try {
    const stat = dir.stat();
    const ours =
      stat.uid === process.geteuid?.() &&
      (stat.mode & 0o777) === 0o700 &&
      dir
        .list()
        .every((entry) =>
          entry === INSTALL_DIR || entry === PACK_DIR
            ? dir?.lstat(entry)?.isDirectory()
            : (entry === JAR || entry === PREVIOUS) && dir?.lstat(entry)?.isFile(),
        );
    if (ours) volume.removePrivateDir(dir);
  } finally {
    dir.close();
  }
}

export interface Owner {
  uid: number;
  gid: number;
}

/**
 * Puts the verified download (`work`/server.jar, in a private directory of the volume) in place as server.jar
 * (docs/system.md 4.3, 2.6): it is given to the container's user first, through its descriptor (a failure leaves server.jar
 * untouched), the old jar becomes server.jar.previous (a hard link, so server.jar never goes missing; a link at
 * server.jar is linked as the link, never followed), then the new file is renamed over server.jar and the directory is
 * fsynced. Nothing here reaches a file through a name the game's user could have swapped.
 */
export function installJar(work: VolumeDir, volume: VolumeDir, owner: Owner): { previous: boolean } {
  const fd = openSync(work.at(JAR), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    setOwnerAndMode(fd, owner, 0o644);
  } catch (error) {
    if (!isErrno(error, "EPERM")) throw error;
    throw new JobError(`cannot give the new server.jar to ${owner.uid}:${owner.gid} (not allowed as this user)`, {
      where: volume.path,
      hint: "run jar-download as root, or set BACKUP_OWNER (or --owner) to your own uid:gid",
    });
  } finally {
    closeSync(fd);
  }
  const current = volume.lstat(JAR);
  if (current?.isDirectory()) {
    throw new JobError("server.jar is a directory", {
      where: volume.display(JAR),
      hint: "move it away, then run jar-download again",
    });
  }
  if (current) keepPrevious(work, volume);
  work.rename(JAR, volume);
  volume.sync();
  return { previous: current !== undefined };
}

/** server.jar.previous: a hard link to the current server.jar; where hard links are not possible, a copy of its bytes. */
function keepPrevious(work: VolumeDir, volume: VolumeDir): void {
  if (volume.lstat(PREVIOUS)?.isDirectory()) {
    throw new JobError(`${PREVIOUS} is a directory`, {
      where: volume.display(PREVIOUS),
      hint: "move it away, then run jar-download again",
    });
  }
  volume.unlink(PREVIOUS);
  try {
    linkSync(volume.at(JAR), volume.at(PREVIOUS));
    return;
  } catch (error) {
    if (!isErrno(error, "EPERM") && !isErrno(error, "EXDEV") && !isErrno(error, "ENOTSUP")) throw error;
  }
  // A file system without hard links: a copy of a regular server.jar only (a link or a FIFO is not read), made in the
  // private directory with the old jar's owner, then moved beside it.
  const old = volume.tryOpenFile(JAR);
  if (!old) return;
  if (old.stat.size > INSTALLED_JAR_MAX_BYTES) {
    closeSync(old.fd);
    return; // no server jar is that large: nothing worth keeping, and not read
  }
  try {
    copyFileSync(`/proc/self/fd/${old.fd}`, work.at(PREVIOUS));
    const copy = openSync(work.at(PREVIOUS), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      setOwnerAndMode(copy, { uid: old.stat.uid, gid: old.stat.gid }, old.stat.mode & 0o777);
    } finally {
      closeSync(copy);
    }
  } finally {
    closeSync(old.fd);
  }
  work.rename(PREVIOUS, volume);
}
