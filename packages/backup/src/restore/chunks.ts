import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { readRange, setOwnerAndMode } from "@mcops/core/volume";
import {
  chunkAt,
  HEADER_BYTES,
  headerEntries,
  headerOf,
  type Location,
  MAX_SECTOR,
  SECTOR,
  timestampOf,
} from "../region-file.ts";

/**
 * An area restored chunk by chunk (issue 36): for a region file the area touches, a new region file holding the
 * snapshot's version of every chunk in the area and the live version of every other chunk. Each chunk's sectors are
 * carried as they are (length, compression byte, payload, an external chunk's marker), with its own timestamp; the
 * header is written anew for the new places. A chunk in the area the snapshot lacks (not generated then) is left out;
 * an entry the game drops when it opens the file (into the header, no sectors, past the end) is not carried.
 */

/** An area in block coordinates (what F3 shows), its corners ordered: x1 <= x2, z1 <= z2. */
export interface Area {
  x1: number;
  z1: number;
  x2: number;
  z2: number;
}

/** The chunks of an area: chunk coordinates, 16 blocks a chunk. */
export interface ChunkBounds {
  x1: number;
  z1: number;
  x2: number;
  z2: number;
}

export function chunkBounds(area: Area): ChunkBounds {
  const chunk = (block: number) => Math.floor(block / 16);
  return { x1: chunk(area.x1), z1: chunk(area.z1), x2: chunk(area.x2), z2: chunk(area.z2) };
}

export function chunkCount(bounds: ChunkBounds): number {
  return (bounds.x2 - bounds.x1 + 1) * (bounds.z2 - bounds.z1 + 1);
}

export const inChunks = (bounds: ChunkBounds, x: number, z: number): boolean =>
  x >= bounds.x1 && x <= bounds.x2 && z >= bounds.z1 && z <= bounds.z2;

/** A region file opened to be read: its header (8 KiB, zeros past a short file's end) and size. */
export interface RegionSource {
  fd: number;
  size: number;
  header: Buffer;
}

/** Reads the header of the region file open at `fd`. */
export function regionSource(fd: number): RegionSource {
  const size = fstatSync(fd).size;
  return { fd, size, header: headerOf(readRange(fd, 0, HEADER_BYTES)) };
}

/** One chunk of the new file: where its sectors are read from. */
interface Carried {
  index: number;
  from: "live" | "snapshot";
  sector: number;
  count: number;
  timestamp: number;
}

/** What the new file of one region holds, and what changed. */
export interface RegionMerge {
  chunks: Carried[];
  /** Chunks of the area the snapshot holds: they come back. */
  restored: number;
  /** Chunks of the area the live file holds and the snapshot does not: they go. */
  removed: number;
  /** Chunks outside the area the live file holds: they stay as they are. */
  kept: number;
  /** Entries not carried because the game drops them (the chunk is generated anew), with why. */
  dropped: string[];
  /** Whether the area has anything in this region, in the snapshot or in the live file. */
  touches: boolean;
}

/** Which chunks of region `region` the new file takes from where. */
export function planMerge(
  region: { x: number; z: number },
  bounds: ChunkBounds,
  live: RegionSource | undefined,
  snapshot: RegionSource | undefined,
): RegionMerge {
  const merge: RegionMerge = { chunks: [], restored: 0, removed: 0, kept: 0, dropped: [], touches: false };
  const entries = (source: RegionSource | undefined) => {
    const found = source ? headerEntries(source.header, source.size, region) : { list: [], dropped: [] };
    return {
      at: new Map<number, Location>(found.list.map((l) => [l.index, l])),
      dropped: new Map(found.dropped.map((d) => [d.index, d.problem])),
    };
  };
  const ours = entries(live);
  const theirs = entries(snapshot);
  for (let index = 0; index < 1024; index++) {
    const { x, z } = chunkAt(region, index);
    const inArea = inChunks(bounds, x, z);
    const [side, from, source] = inArea ? [theirs, "snapshot" as const, snapshot] : [ours, "live" as const, live];
    const dropped = side.dropped.get(index);
    if (dropped) merge.dropped.push(`${from} ${dropped}`);
    const location = side.at.get(index);
    if (inArea) {
      if (location || ours.at.has(index) || dropped || ours.dropped.has(index)) merge.touches = true;
      if (location) merge.restored++;
      else if (ours.at.has(index)) merge.removed++;
    } else if (location) merge.kept++;
    if (location && source) {
      const { sector, count } = location;
      merge.chunks.push({ index, from, sector, count, timestamp: timestampOf(source.header, index) });
    }
  }
  return merge;
}

/**
 * Writes the new region file into `out` (an empty file): the header, then each chunk's sectors in the order of the
 * sources' files, whole sectors (what the game reads: a last sector the game left unpadded is padded with zeros).
 * Entries sharing their first sector share it in the new file too. The new file is never larger than both sources
 * together: entries built to overlap (no game writes them) would multiply a small file, and are refused.
 */
export function writeMerge(
  merge: RegionMerge,
  sources: { live?: RegionSource | undefined; snapshot?: RegionSource | undefined },
  out: number,
  what: string,
): { bytes: number } {
  const header = Buffer.alloc(HEADER_BYTES);
  const sectorsOf = (source: RegionSource | undefined) => (source ? Math.ceil(source.size / SECTOR) : 0);
  const limit = Math.min(MAX_SECTOR, 2 + sectorsOf(sources.live) + sectorsOf(sources.snapshot));
  const placed = new Map<string, number>();
  let next = 2;
  const ordered = [...merge.chunks].sort((a, b) => a.from.localeCompare(b.from) || a.sector - b.sector);
  for (const chunk of ordered) {
    const source = sources[chunk.from] as RegionSource;
    const key = `${chunk.from}:${chunk.sector}:${chunk.count}`;
    let at = placed.get(key);
    if (at === undefined) {
      at = next;
      if (at + chunk.count > limit) {
        throw new JobError(`${what}: its chunks' sectors overlap, which no game writes; nothing was changed`, {
          hint: "look at the file; restore its region files whole with --whole-regions",
        });
      }
      const start = chunk.sector * SECTOR;
      const bytes = readRange(source.fd, start, Math.min(chunk.count * SECTOR, source.size - start));
      writeAll(out, bytes, at * SECTOR);
      placed.set(key, at);
      next += chunk.count;
    }
    header.writeUInt32BE(((at << 8) | chunk.count) >>> 0, chunk.index * 4);
    header.writeUInt32BE(chunk.timestamp, SECTOR + chunk.index * 4);
  }
  writeAll(out, header, 0);
  ftruncateSync(out, next * SECTOR);
  return { bytes: next * SECTOR };
}

function writeAll(fd: number, data: Buffer, position: number): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, position + done);
}

/**
 * Makes `path` (a new name in a directory only root can enter) with the merged file, fsynced, owned by `owner` with
 * `mode` through its descriptor.
 */
export function writeMergedFile(
  path: string,
  merge: RegionMerge,
  sources: { live?: RegionSource | undefined; snapshot?: RegionSource | undefined },
  owner: { uid: number; gid: number },
  mode: number,
  what: string,
): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeMerge(merge, sources, fd, what);
    setOwnerAndMode(fd, owner, mode);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
