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
 * the same way (what is missing holds no chunk).
 */
export function headerOf(read: Buffer): Buffer {
  if (read.length >= HEADER_BYTES) return read.subarray(0, HEADER_BYTES);
  return Buffer.concat([read, Buffer.alloc(HEADER_BYTES - read.length)]);
}

/** The chunk coordinates of entry `index` of region `region`. */
export function chunkAt(region: { x: number; z: number }, index: number): { x: number; z: number } {
  return { x: region.x * 32 + (index & 31), z: region.z * 32 + (index >> 5) };
}

/**
 * The header's entries as the game takes them when it opens the file: an entry pointing into the header, with no
 * sectors, or starting past the end of the file is dropped.
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
    }
    if (problem) entries.dropped.push({ index, problem });
    else entries.list.push({ index, sector, count, x, z });
  }
  return entries;
}

/** The timestamp of entry `index`. */
export const timestampOf = (header: Buffer, index: number): number => header.readUInt32BE(SECTOR + index * 4);

/** Region coordinates from a region file's name `r.<x>.<z>.mca`; undefined for any other name. */
export function regionOfName(name: string): { x: number; z: number } | undefined {
  const match = /^r\.(-?\d+)\.(-?\d+)\.mca$/.exec(name);
  return match ? { x: Number(match[1]), z: Number(match[2]) } : undefined;
}
