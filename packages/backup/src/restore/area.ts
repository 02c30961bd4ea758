import { closeSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { JobError } from "@mcops/core/errors";
import type { Logger } from "@mcops/core/log";
import type { VolumeDir } from "@mcops/core/volume";
import { truncatedHeader } from "../region-file.ts";
import {
  type ChunkBounds,
  planMerge,
  type RegionMerge,
  type RegionSource,
  regionSource,
  type Sources,
  writeMergedFile,
} from "./chunks.ts";
import type { Target } from "./select.ts";

/**
 * The region files of an area restore, merged chunk by chunk (chunks.ts) where a restore's staging directory holds
 * the snapshot's copies: what each file gets, and the counts the plan and the message give.
 */
export interface AreaMerge {
  /** The targets left to swap: region files the area has nothing in, on either side, are not touched. */
  targets: Target[];
  /** Per region file (relative path): what comes back, what goes, what stays. */
  files: MergedFile[];
  /**
   * The live region files read, as they were (undefined: there was none): a change before they are moved aside, or
   * one made where there was none, stops the restore.
   */
  seen: Map<string, Seen | undefined>;
}

/**
 * Plans the merge of every region target: the live file from the volume (a link, a FIFO or anything but a file is
 * refused), the snapshot's from `restored`. With `write`, each merged file is made in `restored` in place of the
 * snapshot's copy, owned like the world, so that the swap puts it in.
 */
export function mergeArea(
  volume: VolumeDir,
  restored: VolumeDir | undefined,
  targets: Target[],
  bounds: ChunkBounds,
  logger: Logger,
  write?: { owner: { uid: number; gid: number } },
): AreaMerge {
  const result: AreaMerge = { targets: [], files: [], seen: new Map() };
  for (const target of targets) {
    if (!target.region) {
      result.targets.push(target);
      continue;
    }
    const live = volume.tryOpenFile(target.rel);
    const theirs = target.inSnapshot ? restored?.tryOpenFile(target.rel) : undefined;
    try {
      if (target.inSnapshot && !theirs) {
        throw new JobError(`restic did not restore ${target.rel}`, {
          hint: "the snapshot may be damaged; try an older one",
        });
      }
      const sources = { live: open(live), snapshot: open(theirs) };
      refuseCutSnapshot(target.rel, sources.snapshot);
      const cut = sources.live && truncatedHeader(sources.live.size);
      if (cut) logger.warn(`${target.rel}: the live file is damaged (${cut}): no chunk outside the area to keep`);
      const merge = planMerge(target.region, bounds, sources.live, sources.snapshot);
      for (const dropped of merge.dropped) logger.warn(`${target.rel}: not carried, the game drops it: ${dropped}`);
      if (!merge.touches) continue;
      result.files.push({ rel: target.rel, merge });
      result.seen.set(target.rel, live && sources.live && { stat: live.stat, header: sources.live.header });
      result.targets.push({ rel: target.rel, inSnapshot: true, inVolume: live !== undefined });
      if (write && restored) {
        const mode = (live ?? theirs)?.stat.mode ?? 0o644;
        placeMerged(restored, target.rel, merge, sources, write.owner, mode & 0o777);
      }
    } finally {
      if (live) closeSync(live.fd);
      if (theirs) closeSync(theirs.fd);
    }
  }
  return result;
}

const open = (file: { fd: number } | undefined): RegionSource | undefined => (file ? regionSource(file.fd) : undefined);

/**
 * A snapshot's region file cut inside its header (truncatedHeader) is refused: read as the game reads it, it holds no
 * chunk, and the merge would take the area's live chunks out as "not in the snapshot" while nothing says the snapshot
 * lacked them; the drill calls that snapshot damaged. (A live file cut so holds no chunk either: there is nothing
 * outside the area to keep, and the merge writes a whole file.)
 */
function refuseCutSnapshot(rel: string, snapshot: RegionSource | undefined): void {
  const cut = snapshot && truncatedHeader(snapshot.size);
  if (!cut) return;
  throw new JobError(`the snapshot's ${rel} is damaged: ${cut}; nothing was changed`, {
    hint: "restore the area from an older snapshot (backup snapshots lists them)",
  });
}

/** The merged file, made under a new name beside the snapshot's copy and renamed over it. */
function placeMerged(
  restored: VolumeDir,
  rel: string,
  merge: RegionMerge,
  sources: Sources,
  owner: { uid: number; gid: number },
  mode: number,
): void {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  const dir = restored.ensureDir(dirname(rel));
  try {
    const temporary = `.${name}.merged`;
    writeMergedFile(dir.at(temporary), merge, sources, owner, mode, rel);
    dir.rename(temporary, dir, name);
  } finally {
    dir.close();
  }
}

/**
 * Before a merged region file's live copy is moved aside, or the merged file put where there was none: it must be the
 * file that was read, or still none. A server started meanwhile (from the panel) writes it, and those chunks would be
 * lost to the restored file.
 */
export function checkUnchanged(volume: VolumeDir, seen: Map<string, Seen | undefined>, rel: string): void {
  if (!seen.has(rel)) return;
  const before = seen.get(rel);
  seen.delete(rel);
  const changed = before ? !sameFile(volume, rel, before) : volume.lstat(rel) !== undefined;
  if (changed) {
    throw new JobError(`${rel} changed after its chunks were merged: is the server running again?`, {
      hint: "stop it from the panel and run the restore again",
    });
  }
}

/** A live region file as it was read: a save of a chunk changes its header (the chunk's place and timestamp). */
interface Seen {
  stat: Stats;
  header: Buffer;
}

/**
 * Whether `rel` is still the file that was read: the same inode, size and modification time (which moves only once per
 * clock tick), and the same header (which every chunk the game saves changes).
 */
function sameFile(volume: VolumeDir, rel: string, before: Seen): boolean {
  const file = volume.tryOpenFile(rel);
  if (!file) return false;
  try {
    const { ino, size, mtimeMs } = file.stat;
    if (ino !== before.stat.ino || size !== before.stat.size || mtimeMs !== before.stat.mtimeMs) return false;
    return regionSource(file.fd).header.equals(before.header);
  } finally {
    closeSync(file.fd);
  }
}

/** A region file of the area and its merge. */
interface MergedFile {
  rel: string;
  merge: RegionMerge;
}

/** A merged region file in words, for the plan and the log. */
export function describeMerge({ rel, merge }: MergedFile): string {
  const parts = [`${merge.restored} chunk${merge.restored === 1 ? "" : "s"} from the snapshot`];
  if (merge.removed) parts.push(`${merge.removed} removed (not in the snapshot)`);
  parts.push(`${merge.kept} kept`);
  return `${rel}: ${parts.join(", ")}`;
}

/** The chunks of the area that come back, and those that go, in all its region files. */
export function mergeTotals(merged: AreaMerge): { restored: number; removed: number } {
  const sum = (key: "restored" | "removed") => merged.files.reduce((n, { merge }) => n + merge[key], 0);
  return { restored: sum("restored"), removed: sum("removed") };
}
