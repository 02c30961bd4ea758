import { mkdirSync, mkdtempSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isHolderAlive } from "@mcops/core/lock";
import type { Logger } from "@mcops/core/log";
import { checkRoom, removeLeftovers } from "../job.ts";

/**
 * The private scratch directory an area's dry run restores the snapshot's region files into, to count their chunks:
 * `<state>/restore/plan-<time>-<pid>-<random>`, mode 700. Dry runs take no lock, so several can run at once: one
 * removes the copy of a dry run whose process is gone (killed with -9), never a running one's. The copy is as large as
 * the snapshot's files say (a sparse file the game's user made is written out whole), on the state directory's disk,
 * which the game's user cannot otherwise fill: it is refused when it and a tenth more would not fit.
 */

const PREFIX = "plan-";

/** Makes the scratch directory in `parent` for a copy of `bytes` in `files` region files; returns its path. */
export function makeScratch(
  parent: string,
  stamp: string,
  copy: { bytes: number; files: number },
  logger: Logger,
): string {
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  removeLeftovers(parent, PREFIX, "a dry run", logger, inUse);
  const files = `${copy.files} region file${copy.files === 1 ? "" : "s"}`;
  checkRoom(parent, copy.bytes, {
    for: `the dry run's copy of the snapshot's ${files}`,
    of: "the files",
    hint: "free some space there; --whole-regions --dry-run lists the region files without copying them",
  });
  return mkdtempSync(join(parent, `${PREFIX}${stamp}-${process.pid}-`));
}

/** Whether the dry run that made the scratch directory `name` still runs (its pid is in the name). */
function inUse(name: string): boolean {
  const pid = Number(/^plan-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-(\d+)-/.exec(name)?.[1]);
  return isHolderAlive({ pid, start: "", tool: "backup", host: hostname(), since: "" });
}
