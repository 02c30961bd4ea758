import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Writes `text` to `file` so that a reader sees the old content or the new, never half of it: a temporary file beside
 * it, created with `mode` (never wider, whatever the umask), flushed to disk, renamed over the file, then the directory
 * flushed. A failure leaves the old file as it was and no temporary file behind.
 */
export function writeFileAtomic(file: string, text: string, mode: number, options: { exactMode?: boolean } = {}): void {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  const fd = openSync(tmp, "wx", mode);
  try {
    try {
      // exactMode: that mode whatever the umask (a certificate others must read), set on the descriptor.
      if (options.exactMode) fchmodSync(fd, mode);
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself has happened.
  }
}

/** Whether `error` is a Node system error with this code (ENOENT, EACCES, ...). */
export function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as NodeJS.ErrnoException).code === code;
}
