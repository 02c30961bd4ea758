import { dirname, join } from "node:path";
import { JobError } from "@mcops/core/errors";
import type { Logger } from "@mcops/core/log";
import type { VolumeDir } from "@mcops/core/volume";
import type { Restic, Snapshot } from "@mcops/world/restic";
import type { Target } from "./select.ts";

/**
 * Putting a snapshot's files in place of the volume's, safely (docs/system.md 4.5's procedure, made safe): restic
 * restores them into a private staging directory inside WORLD_DIR (same filesystem, so every later move is an atomic
 * rename); they are checked and chowned there, while only root can reach them; the volume's entries are moved into a
 * private `.mcops-pre-restore-<time>-<random>/` under their own paths (nothing is deleted); the restored ones are
 * moved in. A failure at any step moves every entry back where it was.
 *
 * The volume is the game's: every step goes through descriptors (core's volume.ts). The staging and aside directories
 * are made by an exclusive mkdir under unpredictable names, mode 700, so the game's user can neither enter them nor
 * redirect them; restic writes into the staging directory through this process's descriptor of it; a link on the way
 * to a target is refused, never followed.
 */
export interface SwapWork {
  volume: VolumeDir;
  staging?: VolumeDir;
  /** The restored copy of WORLD_DIR inside the staging directory. */
  restored?: VolumeDir;
  aside?: VolumeDir;
  /** Targets moved aside, in order. */
  moved: string[];
  /** Targets put in place, in order. */
  placed: string[];
}

export interface Staging {
  restic: Restic;
  snapshot: Snapshot;
  worldDir: string;
  targets: Target[];
  stagingPrefix: string;
  owner: { uid: number; gid: number };
  /** A check of the restored copy before anything is moved (the whole world's level.dat). */
  check?: ((restored: VolumeDir) => void) | undefined;
}

/** restic restores the targets the snapshot holds into a new private staging directory; each is checked and chowned. */
export async function stage(work: SwapWork, job: Staging, logger: Logger): Promise<void> {
  const staging = work.volume.makePrivateDir(job.stagingPrefix);
  work.staging = staging;
  const wanted = job.targets.filter((t) => t.inSnapshot);
  // restic writes through this process's descriptor of the staging directory: renaming it, or putting a link in its
  // place, changes nothing for restic. When the snapshot holds none of the targets (an area it has no region file of:
  // the area's live chunks go), nothing is restored.
  const restored = await job.restic.restoreInto(
    job.snapshot.id,
    staging,
    job.worldDir,
    wanted.map((t) => join(job.worldDir, t.rel)),
  );
  work.restored = restored;
  for (const { rel } of wanted) {
    if (!restored.lstat(rel)) {
      throw new JobError(`restic did not restore ${rel}`, { hint: "the snapshot may be damaged; try an older one" });
    }
  }
  job.check?.(restored);
  logger.info(
    `snapshot ${job.snapshot.short_id}: ${wanted.length} entr${wanted.length === 1 ? "y" : "ies"} restored into ${staging.path}`,
  );
  // Chowned while only root can reach them: once in the volume, the game's user could put links in the tree.
  for (const { rel } of wanted)
    withParent(restored, rel, (dir, name) => dir.chownTree(name, job.owner.uid, job.owner.gid));
}

/**
 * The volume's targets into a new private aside directory (under their own paths), the restored ones into their
 * place (missing folders made, owned like the world); `beforeMove` runs before each move (a test's fault, a check).
 * Returns the aside directory's path.
 */
export function swapIn(
  work: SwapWork,
  job: { targets: Target[]; asidePrefix: string; owner: { uid: number; gid: number } },
  beforeMove?: (rel: string) => void,
): string {
  const { volume } = work;
  const aside = volume.makePrivateDir(job.asidePrefix);
  work.aside = aside;
  for (const { rel, inSnapshot } of job.targets) {
    // Looked at now, not at planning: a running server may have written the file since (a player's stats).
    if (volume.lstat(rel)) {
      beforeMove?.(rel);
      move(volume, aside, rel);
      work.moved.push(rel);
    }
    if (inSnapshot) {
      beforeMove?.(rel);
      move(work.restored as VolumeDir, volume, rel, job.owner);
      work.placed.push(rel);
    }
  }
  volume.sync();
  if (work.staging) volume.removePrivateDir(work.staging);
  return aside.path;
}

/** Puts every entry back where it was after a failure; says what it did. */
export function rollBack(work: SwapWork): string {
  const { volume, staging, aside, moved, placed } = work;
  try {
    for (const rel of [...placed].reverse()) move(volume, work.restored as VolumeDir, rel);
    for (const rel of [...moved].reverse()) move(aside as VolumeDir, volume, rel);
    if (staging) volume.removePrivateDir(staging);
    // Everything moved aside is back: what is left there are the folders made for it (the game's user cannot enter).
    if (aside) volume.removePrivateDir(aside);
    return moved.length || placed.length ? "everything replaced was put back" : "the world was not touched";
  } catch (error) {
    return `putting the replaced files back failed (${(error as Error).message}): they are in ${aside?.path}`;
  }
}

/** Closes what the work opened. */
export function closeWork(work: SwapWork): void {
  work.restored?.close();
  work.staging?.close();
  work.aside?.close();
}

/** Moves `rel` from one tree to the same path in another, making the folders on the way (given to `owner`). */
function move(from: VolumeDir, to: VolumeDir, rel: string, owner?: { uid: number; gid: number }): void {
  const parent = dirname(rel);
  const target = parent === "." ? undefined : to.ensureDir(parent, owner);
  try {
    withParent(from, rel, (dir, name) => dir.rename(name, target ?? to));
  } finally {
    target?.close();
  }
}

/** Runs `fn` with the directory holding `rel` (walked without following links) and its last component. */
function withParent<T>(root: VolumeDir, rel: string, fn: (dir: VolumeDir, name: string) => T): T {
  const parent = dirname(rel);
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  if (parent === ".") return fn(root, name);
  const dir = root.dir(parent);
  try {
    return fn(dir, name);
  } finally {
    dir.close();
  }
}
