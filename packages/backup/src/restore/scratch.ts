import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { BusyError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { isErrno } from "@mcops/core/fs";
import type { Logger } from "@mcops/core/log";

/**
 * The private scratch directory an area's dry run restores the snapshot's region files into, to count their chunks:
 * `<state>/restore/plan-<time>-<pid>-<random>`, mode 700. Dry runs take no lock, so several can run at once: one
 * removes the copy of a dry run whose process is gone (killed with -9), never a running one's. The copy is as large as
 * the snapshot's files say (a sparse file the game's user made is written out whole), on the state directory's disk,
 * which the game's user cannot otherwise fill: it is refused when it and a tenth more would not fit.
 */

const PREFIX = "plan-";
const SPACE_MARGIN = 1.1;

/** Makes the scratch directory in `parent` for a copy of `bytes` in `files` region files; returns its path. */
export function makeScratch(
  parent: string,
  stamp: string,
  copy: { bytes: number; files: number },
  logger: Logger,
): string {
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  removeLeftovers(parent, logger);
  const needed = Math.ceil(copy.bytes * SPACE_MARGIN);
  const stats = statfsSync(parent);
  const free = stats.bavail * stats.bsize;
  if (free < needed) {
    const files = `${copy.files} region file${copy.files === 1 ? "" : "s"}`;
    throw new BusyError(
      `not enough space in ${parent} for the dry run's copy of the snapshot's ${files}: it needs ${formatBytes(needed)} (and 10 %), ${formatBytes(free)} is free`,
      { hint: "free some space there; --whole-regions --dry-run lists the region files without copying them" },
    );
  }
  return mkdtempSync(join(parent, `${PREFIX}${stamp}-${process.pid}-`));
}

/** Scratch directories of dry runs that were killed before they could remove theirs. */
function removeLeftovers(parent: string, logger: Logger): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(/^plan-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && running(pid)) continue;
    const path = join(parent, name);
    if (!lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) continue;
    logger.warn(`removing ${path}, left by a dry run that was killed`);
    rmSync(path, { recursive: true, force: true });
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !isErrno(error, "ESRCH");
  }
}
