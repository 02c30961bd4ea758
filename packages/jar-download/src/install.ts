import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from "node:fs";
import { join } from "node:path";
import { isErrno } from "@mcops/core/env-file";
import { JobError } from "@mcops/core/errors";

export const JAR = "server.jar";
export const PREVIOUS = "server.jar.previous";
const TEMP_PREFIX = ".server.jar.download-";

/** The temporary file a download goes to: in the same directory, so that the final rename is atomic. */
export function tempPath(dir: string): string {
  return join(dir, `${TEMP_PREFIX}${process.pid}`);
}

/** Removes what an interrupted earlier run left (it held the jar-download lock, so none is in use now). */
export function removeStaleTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(TEMP_PREFIX)) rmSync(join(dir, name), { force: true });
  }
}

export interface Owner {
  uid: number;
  gid: number;
}

/**
 * Puts the verified download in place as server.jar (SPEC 4.3, 2.6): it is given to the container's user first (a
 * failure leaves server.jar untouched), the old jar becomes server.jar.previous (a hard link, so server.jar never goes
 * missing), then the new file is renamed over server.jar and the directory is fsynced.
 */
export function installJar(temp: string, dir: string, owner: Owner): { previous: boolean } {
  try {
    chownSync(temp, owner.uid, owner.gid);
  } catch (error) {
    if (!isErrno(error, "EPERM")) throw error;
    throw new JobError(`cannot give the new server.jar to ${owner.uid}:${owner.gid} (not allowed as this user)`, {
      where: dir,
      hint: "run jar-download as root, or set BACKUP_OWNER (or --owner) to your own uid:gid",
    });
  }
  chmodSync(temp, 0o644);
  const jar = join(dir, JAR);
  const previous = join(dir, PREVIOUS);
  const hadJar = existsSync(jar);
  if (hadJar) {
    if (lstatSync(jar).isDirectory()) {
      throw new JobError("server.jar is a directory", {
        where: jar,
        hint: "move it away, then run jar-download again",
      });
    }
    rmSync(previous, { force: true });
    try {
      linkSync(jar, previous);
    } catch {
      // A file system without hard links: a copy with the same owner does the same job.
      copyFileSync(jar, previous);
      const stat = lstatSync(jar);
      chownSync(previous, stat.uid, stat.gid);
    }
  }
  renameSync(temp, jar);
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { previous: hadJar };
}
