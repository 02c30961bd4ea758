import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { readRange, setOwnerAndMode } from "@mcops/core/volume";
import {
  chunkAt,
  chunkStream,
  HEADER_BYTES,
  headerEntries,
  headerOf,
  type Location,
  MAX_READABLE_SECTOR,
  MAX_SECTOR,
  SECTOR,
  sectorsOf,
  timestampOf,
} from "../region-file.ts";

/**
 * An area restored chunk by chunk (issue 36): for a region file the area touches, a new region file holding the
 * snapshot's version of every chunk in the area and the live version of every other chunk. Each chunk is carried as
 * the game reads it (chunkStream: its length, compression byte and payload, an external chunk's marker; a chunk Spigot
 * wrote over 255 sectors whole), with its own timestamp; the header is written anew for the new places, so that
 * vanilla and Paper read every chunk of the new file as they read it from its source. A chunk in the area the snapshot
 * lacks (not generated then) is left out; an entry no game reads a chunk from (into the header, no sectors, past the
 * end, past 2 GiB, a length of 0, a stream longer than the file or its sectors) is not carried: the game makes that
 * chunk anew either way.
 */

/** Two corners on the x/z plane, ordered: x1 <= x2, z1 <= z2 (in blocks, chunks or regions). */
export interface Corners {
  x1: number;
  z1: number;
  x2: number;
  z2: number;
}

/** An area in block coordinates (what F3 shows). */
export type Area = Corners;
/** The chunks of an area, in chunk coordinates. */
export type ChunkBounds = Corners;

/** The cells of `size` blocks (16 a chunk, 512 a region) that `area` touches, in their own coordinates. */
export function cellsOf(area: Area, size: number): Corners {
  const cell = (block: number) => Math.floor(block / size);
  return { x1: cell(area.x1), z1: cell(area.z1), x2: cell(area.x2), z2: cell(area.z2) };
}

export const chunkBounds = (area: Area): ChunkBounds => cellsOf(area, 16);

export const cellCount = (cells: Corners): number => (cells.x2 - cells.x1 + 1) * (cells.z2 - cells.z1 + 1);

export const inCells = (cells: Corners, x: number, z: number): boolean =>
  x >= cells.x1 && x <= cells.x2 && z >= cells.z1 && z <= cells.z2;

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

/** The files a new region file is made from: the live one, the snapshot's; either may be missing. */
export interface Sources {
  live?: RegionSource | undefined;
  snapshot?: RegionSource | undefined;
}

/** One chunk of the new file: where its bytes are read from. */
interface Carried {
  index: number;
  /** Its chunk coordinates. */
  x: number;
  z: number;
  from: "live" | "snapshot";
  sector: number;
  /** What the game reads of it, from its first sector on (chunkStream). */
  bytes: number;
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
    const inArea = inCells(bounds, x, z);
    const [side, from, source] = inArea ? [theirs, "snapshot" as const, snapshot] : [ours, "live" as const, live];
    const found = side.at.get(index);
    const stream = found && source ? streamOf(source, found) : undefined;
    const dropped = side.dropped.get(index) ?? (stream && "problem" in stream ? stream.problem : undefined);
    if (dropped) merge.dropped.push(`${from} ${dropped}`);
    const carried = stream && "bytes" in stream ? stream.bytes : undefined;
    if (inArea) {
      if (found || ours.at.has(index) || dropped || ours.dropped.has(index)) merge.touches = true;
      if (carried) merge.restored++;
      else if (ours.at.has(index)) merge.removed++;
    } else if (carried) merge.kept++;
    if (found && source && carried) {
      const timestamp = timestampOf(source.header, index);
      merge.chunks.push({ index, x, z, from, sector: found.sector, bytes: carried, timestamp });
    }
  }
  return merge;
}

/** What the game reads of the chunk at `location` of `source` (chunkStream), from its first 5 bytes. */
function streamOf(source: RegionSource, location: Location): ReturnType<typeof chunkStream> {
  const start = location.sector * SECTOR;
  return chunkStream(location, readRange(source.fd, start, 5), source.size - start);
}

/**
 * Writes the new region file into `out` (an empty file): the header, then each chunk's bytes in the order of the
 * sources' files, each from the start of a sector, whole sectors (what the game reads: a last sector left unpadded, or
 * a chunk's sectors past its length, are zeros). Entries sharing their first sector share it in the new file too.
 * The new file is never larger than both sources together (as far as the game reads them): entries built to overlap
 * (no game writes them) would multiply a small file, and are refused before anything is written.
 */
export function writeMerge(merge: RegionMerge, sources: Sources, out: number, what: string): void {
  const { placed, end } = layOut(merge, sources, what);
  const header = Buffer.alloc(HEADER_BYTES);
  const written = new Set<number>();
  for (const chunk of merge.chunks) {
    const at = placed.get(`${chunk.from}:${chunk.sector}`) as number;
    if (!written.has(at)) {
      copyChunk(sources[chunk.from] as RegionSource, chunk, out, at, what);
      written.add(at);
    }
    header.writeUInt32BE(((at << 8) | sectorsOf(chunk.bytes).count) >>> 0, chunk.index * 4);
    header.writeUInt32BE(chunk.timestamp, SECTOR + chunk.index * 4);
  }
  writeAll(out, header, 0);
  ftruncateSync(out, end * SECTOR);
}

/**
 * Each chunk's first sector in the new file (by `from:sector`), in the order of the sources' files, and the file's
 * end; refused when that would be larger than both sources, each as far as the game can read it (a chunk starts below
 * 2 GiB and is shorter than 2 GiB): a sparse file says it is larger than it is.
 */
function layOut(merge: RegionMerge, sources: Sources, what: string): { placed: Map<string, number>; end: number } {
  const readable = (source: RegionSource | undefined) =>
    source ? Math.min(Math.ceil(source.size / SECTOR), 2 * (MAX_READABLE_SECTOR + 1)) : 0;
  const limit = Math.min(MAX_SECTOR, 2 + readable(sources.live) + readable(sources.snapshot));
  const placed = new Map<string, number>();
  let end = 2;
  const ordered = [...merge.chunks].sort((a, b) => a.from.localeCompare(b.from) || a.sector - b.sector);
  for (const chunk of ordered) {
    const key = `${chunk.from}:${chunk.sector}`;
    if (placed.has(key)) continue;
    const { reserved } = sectorsOf(chunk.bytes);
    if (end > MAX_READABLE_SECTOR) {
      // Only chunks kept from the live file can take this much room: laid out further, a chunk would be lost.
      throw new JobError(
        `${what}: the chunks it keeps would put chunk ${chunk.x},${chunk.z} 2 GiB or more into the new file, where the game cannot read it; nothing was changed`,
        {
          hint: "look at the file (backup drill names what is wrong in it); restore its region files whole with --whole-regions",
        },
      );
    }
    if (end + reserved > limit) {
      throw new JobError(`${what}: its chunks' sectors overlap, which no game writes; nothing was changed`, {
        hint: "look at the file; restore its region files whole with --whole-regions",
      });
    }
    placed.set(key, end);
    end += reserved;
  }
  return { placed, end };
}

/** The most of a chunk read into memory at once: a chunk Spigot wrote can be far longer than 1 MiB. */
const PIECE = 1024 * 1024;
const ZEROS = Buffer.alloc(SECTOR);

/**
 * Copies the bytes of `chunk` from its source to sector `at` of `out` (a new file), a piece at a time; a sector of
 * zeros is not written, so that a hole of the source stays a hole (the new file's size is set at the end).
 */
function copyChunk(source: RegionSource, chunk: Carried, out: number, at: number, what: string): void {
  const start = chunk.sector * SECTOR;
  for (let done = 0; done < chunk.bytes; ) {
    const piece = readRange(source.fd, start + done, Math.min(PIECE, chunk.bytes - done));
    if (piece.length === 0) {
      throw new JobError(`${what} changed while its chunks were read: is the server running again?`, {
        hint: "stop it from the panel and run the restore again",
      });
    }
    writeData(out, piece, at * SECTOR + done);
    done += piece.length;
  }
}

/** Writes `data` at `position` of a new file but for its sectors of zeros, which stay holes. */
function writeData(fd: number, data: Buffer, position: number): void {
  let from = 0;
  for (let at = 0; at < data.length; at += SECTOR) {
    const sector = data.subarray(at, at + SECTOR);
    if (!sector.equals(ZEROS.subarray(0, sector.length))) continue;
    if (at > from) writeAll(fd, data.subarray(from, at), position + from);
    from = at + sector.length;
  }
  if (from < data.length) writeAll(fd, data.subarray(from), position + from);
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
  sources: Sources,
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
