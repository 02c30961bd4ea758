/**
 * The Anvil region file's header as the game reads it (net.minecraft.world.level.chunk.storage.RegionFile): 1024
 * big-endian locations (the chunk's first 4 KiB sector << 8 | its sector count) in the first 4 KiB, then 1024
 * big-endian timestamps (seconds) in the next 4 KiB; chunk `index` is chunk (x & 31) + (z & 31) * 32 of the region.
 * Shared by the drill, which checks region files, and the area restore, which writes them.
 */
export const SECTOR = 4096;
export const HEADER_BYTES = 2 * SECTOR;
/** A sector count is one byte: a chunk longer than 255 sectors goes to its `c.<x>.<z>.mcc` file. */
export const MAX_SECTORS_PER_CHUNK = 255;
/** A chunk's first sector is 24 bits of the location. */
export const MAX_SECTOR = 0xff_ffff;
/**
 * The last sector the game can read a chunk from: it reads at `sector * 4096` in 32-bit ints, which from 2 GiB on is
 * negative (the read throws) or wraps around to another place in the file.
 */
export const MAX_READABLE_SECTOR = 2 ** 19 - 1;
/**
 * The longest chunk the tools take as one the game reads whole: the drill reads no chunk past it (a chunk that inflates
 * past 64 MiB is damage there, and the game's own are a few MiB). Spigot reads a chunk of 255 sectors as far as its
 * length says, up to 2 GiB: a length the game's user wrote over a sparse file would otherwise be copied whole.
 */
export const MAX_CHUNK_STREAM = 32 * 1024 * 1024;

/** A present chunk: its place in the file, from the header, and its world chunk coordinates. */
export interface Location {
  index: number;
  sector: number;
  count: number;
  x: number;
  z: number;
}

/** The header's present chunks, and the entries the game drops (the chunk is lost: generated anew), with why. */
export interface HeaderEntries {
  list: Location[];
  dropped: Array<{ index: number; problem: string }>;
}

/**
 * The first 8 KiB of a region file of `size` bytes, zeros where the file is shorter: the game reads a header cut short
 * the same way (what is missing holds no chunk). Such a file has lost chunks all the same (truncatedHeader).
 */
export function headerOf(read: Buffer): Buffer {
  if (read.length >= HEADER_BYTES) return read.subarray(0, HEADER_BYTES);
  return Buffer.concat([read, Buffer.alloc(HEADER_BYTES - read.length)]);
}

/**
 * Why a region file of `size` bytes has lost its chunks, when it is not empty and shorter than its header: the game
 * makes empty files (it opens a region file to look for a chunk), never a shorter header, and a chunk's data starts
 * after the header, so no chunk of such a file can be read. The game (1.14+ RegionFile) logs "Region file {} has
 * truncated header: {}" and reads the missing entries as zeros, entries that survive point past the end and are
 * dropped: every chunk the region held is generated anew. Before 1.14 it overwrote a file under 4 KiB with an empty
 * header, and failed to read a longer one.
 */
export function truncatedHeader(size: number): string | undefined {
  if (size === 0 || size >= HEADER_BYTES) return undefined;
  return `header truncated: ${size} bytes of ${HEADER_BYTES} (the game reads no chunk from it and generates them anew)`;
}

/** The chunk coordinates of entry `index` of region `region`. */
export function chunkAt(region: { x: number; z: number }, index: number): { x: number; z: number } {
  return { x: region.x * 32 + (index & 31), z: region.z * 32 + (index >> 5) };
}

/**
 * The header's entries as the game takes them: an entry pointing into the header, with no sectors, or starting past the
 * end of the file is dropped when it opens the file; one starting 2 GiB or more into the file when it reads it.
 */
export function headerEntries(header: Buffer, size: number, region: { x: number; z: number }): HeaderEntries {
  const entries: HeaderEntries = { list: [], dropped: [] };
  for (let index = 0; index < 1024; index++) {
    const entry = header.readUInt32BE(index * 4);
    if (entry === 0) continue;
    const sector = entry >>> 8;
    const count = entry & 0xff;
    const { x, z } = chunkAt(region, index);
    const at = `chunk ${x},${z}`;
    let problem: string | undefined;
    if (sector < 2) problem = `${at}: header points into the header (sector ${sector})`;
    else if (count === 0) problem = `${at}: header gives sector ${sector} with a sector count of 0`;
    else if (sector * SECTOR >= size) {
      problem = `${at}: header points past the end (sector ${sector}, the file ends in sector ${Math.ceil(size / SECTOR) - 1})`;
    } else if (sector > MAX_READABLE_SECTOR) {
      problem = `${at}: header points 2 GiB or more into the file (sector ${sector}), where the game cannot read`;
    }
    if (problem) entries.dropped.push({ index, problem });
    else entries.list.push({ index, sector, count, x, z });
  }
  return entries;
}

/**
 * What of a present chunk the game reads, from the 5 bytes at its first sector (`head`, fewer where the file ends) and
 * the `available` bytes from there to the end of the file: its length, compression byte and payload (4 + length
 * bytes; for a chunk in its `c.<x>.<z>.mcc`, the 5 bytes of the marker), or why no game reads a chunk there (it makes
 * the chunk anew). Vanilla reads `count` sectors; Spigot and its forks (Paper, Purpur) read a chunk whose count is 255
 * as far as its length says (Spigot wrote chunks over 255 sectors into the region file before 1.14), below 2 GiB.
 */
export function chunkStream(
  location: Location,
  head: Buffer,
  available: number,
): { bytes: number } | { problem: string } {
  const at = `chunk ${location.x},${location.z}`;
  if (head.length < 5) return { problem: `${at}: the file ends ${head.length} bytes into it` };
  const length = head.readInt32BE(0);
  if (length === 0) return { problem: `${at}: allocated, but its data is missing (length 0)` };
  if (((head[4] as number) & 0x80) !== 0) return { bytes: 5 };
  if (length < 0) return { problem: `${at}: its length is negative (${length})` };
  const bytes = 4 + length;
  if (bytes > available) {
    return { problem: `${at}: truncated: its length says ${length - 1} bytes, the file has ${available - 5}` };
  }
  if (bytes > location.count * SECTOR && spigotSpan(location.count, length) === undefined) {
    return { problem: `${at}: its length says ${length - 1} bytes, more than its ${location.count} sectors hold` };
  }
  if (bytes > MAX_CHUNK_STREAM) {
    return { problem: `${at}: its length says ${length - 1} bytes, more than a chunk can be (32 MiB)` };
  }
  return { bytes };
}

/**
 * How far Spigot and its forks (Paper) read a chunk past its `count` sectors: a count of 255 with a `length` beyond
 * them is read as far as the length says (Spigot wrote chunks over 255 sectors before 1.14), below 2 GiB. Undefined
 * where they read its sectors only, as vanilla does.
 */
export function spigotSpan(count: number, length: number): number | undefined {
  const bytes = 4 + length;
  return count === MAX_SECTORS_PER_CHUNK && bytes > count * SECTOR && bytes < 2 ** 31 - SECTOR ? bytes : undefined;
}

/**
 * Where a chunk of `bytes` (chunkStream) goes in a new file: the sectors it takes, the count its header entry gives
 * (at most 255), and the sectors the game reserves for it when it opens the file (Spigot: the length's for a count of
 * 255, a sector more than it takes when the length fills its last sector), which no other chunk may share.
 */
export function sectorsOf(bytes: number): { count: number; reserved: number } {
  const taken = Math.ceil(bytes / SECTOR);
  if (taken < MAX_SECTORS_PER_CHUNK) return { count: taken, reserved: taken };
  return { count: MAX_SECTORS_PER_CHUNK, reserved: Math.floor(bytes / SECTOR) + 1 };
}

/** The timestamp of entry `index`. */
export const timestampOf = (header: Buffer, index: number): number => header.readUInt32BE(SECTOR + index * 4);

/**
 * A region file's name `r.<x>.<z>.mca` or an external chunk's `c.<x>.<z>.mcc`, as the game makes them ("r." + x + "."
 * + z + ".mca"): integers as Java writes them, so `r.00.0.mca` and `r.-0.0.mca` are names the game never reads.
 */
export const GAME_FILE_NAME = /^(r|c)\.(0|-?[1-9]\d*)\.(0|-?[1-9]\d*)\.(mca|mcc)$/;

/** Region coordinates from a region file's name `r.<x>.<z>.mca`; undefined for any other name. */
export function regionOfName(name: string): { x: number; z: number } | undefined {
  const match = GAME_FILE_NAME.exec(name);
  return match?.[1] === "r" && match[4] === "mca" ? { x: Number(match[2]), z: Number(match[3]) } : undefined;
}
