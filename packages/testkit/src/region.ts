/// <reference path="./lz4js.d.ts" />
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gunzipSync, inflateSync } from "node:zlib";
import { decompressBlock } from "lz4js";
import { type Compression, compressChunk } from "./world.ts";

/**
 * Region files read and written for tests, independently of mcops's own code: a reader of the header and each chunk's
 * bytes, and a writer that changes a chunk the way the game's RegionFile.write does (net.minecraft.world.level.chunk.
 * storage.RegionFile, 1.14+): the payload compressed again, put in the first run of free sectors large enough (its
 * RegionBitmap) or appended at the end, the location and the timestamp updated, the old sectors left as they were
 * (free, never zeroed), the file not padded until the game closes it; a chunk of 256 sectors or more goes to its
 * `c.<x>.<z>.mcc` with a marker in the region file.
 */
export interface RawChunk {
  /** The chunk's bytes as the game reads them: the length, the compression byte and the payload (4 + length). */
  raw: Buffer;
  timestamp: number;
  /** The compression byte (0x80 set: the payload is in the `.mcc` file). */
  compression: number;
  sector: number;
  sectors: number;
}

/** Every present chunk of a region file, by index (x & 31) + (z & 31) * 32. */
export function regionChunks(file: Buffer): Map<number, RawChunk> {
  const chunks = new Map<number, RawChunk>();
  for (let index = 0; index < 1024; index++) {
    const location = file.length >= 4 * (index + 1) ? file.readUInt32BE(index * 4) : 0;
    if (location === 0) continue;
    const sector = location >>> 8;
    const start = sector * 4096;
    const length = file.readUInt32BE(start);
    chunks.set(index, {
      raw: file.subarray(start, start + 4 + length),
      timestamp: file.readUInt32BE(4096 + index * 4),
      compression: file[start + 4] as number,
      sector,
      sectors: location & 0xff,
    });
  }
  return chunks;
}

/**
 * Which server's RegionFile reads the file: vanilla's (Fabric and Forge run it unchanged), or Spigot's and its forks'
 * (Paper, Purpur), which read a chunk whose sector count is 255 as far as its length says (Spigot wrote chunks over
 * 255 sectors into the region file before 1.14) and reserve that many sectors when they open the file.
 */
export type RegionReader = "vanilla" | "spigot";

/** What the game reads for a chunk: the compression byte and the payload, or the compression of its `.mcc` file. */
export type GameRead = Buffer | { external: number } | "error" | undefined;

/**
 * What RegionFile.getChunkDataInputStream hands the decompressor for chunk `index` of the region file `file`, as its
 * source reads (net.minecraft.world.level.chunk.storage.RegionFile, 1.14+, and Spigot's patch of it): the constructor
 * zeroes an entry into the header, with no sectors, or starting past the end; a read takes `count` sectors (Spigot: a
 * count of 255 as its length says) from `sector * 4096` in Java ints, and gives no chunk (undefined: the game
 * generates it anew) for fewer than 5 bytes, a length of 0, a stream longer than what was read, or a negative one.
 * "error" where the game's read throws: a position from 2 GiB on overflows (negative, or wrapped to another place),
 * and so does Spigot's buffer of a length of 2 GiB or more.
 */
export function readChunkAsGame(file: Buffer, index: number, reader: RegionReader = "vanilla"): GameRead {
  const location = file.length >= 4 * (index + 1) ? file.readInt32BE(index * 4) : 0;
  if (location === 0) return undefined;
  const sector = (location >> 8) & 0xffffff;
  const start = sector * 4096;
  let count = location & 0xff;
  if (reader === "spigot" && count === 255) {
    // ByteBuffer.allocate(4), zeros where the file ends; (realLen + 4) / 4096 + 1 in ints.
    const realLen = Buffer.alloc(4);
    file.copy(realLen, 0, start, Math.min(file.length, start + 4));
    count = (Math.trunc(((realLen.readInt32BE(0) + 4) | 0) / 4096) + 1) | 0;
  }
  if (sector < 2 || count === 0 || start > file.length) return undefined;
  if (start > 0x7fffffff) return "error";
  const wanted = (count * 4096) | 0;
  if (wanted < 0) return "error";
  const bytes = file.subarray(start, Math.min(file.length, start + wanted));
  if (bytes.length < 5) return undefined;
  const length = bytes.readInt32BE(0);
  const version = bytes[4] as number;
  if (length === 0) return undefined;
  const stream = (length - 1) | 0;
  if (version & 0x80) return { external: version & 0x7f };
  if (stream > bytes.length - 5 || stream < 0) return undefined;
  return bytes.subarray(4, 5 + stream);
}

/** A chunk's uncompressed NBT. */
export function chunkNbt(chunk: RawChunk, mcc?: Buffer): Buffer {
  const payload = chunk.compression & 0x80 ? (mcc as Buffer) : chunk.raw.subarray(5);
  switch (chunk.compression & 0x7f) {
    case 1:
      return gunzipSync(payload);
    case 2:
      return inflateSync(payload);
    case 3:
      return payload;
    case 4:
      return unLz4Blocks(payload);
    default:
      throw new Error(`compression ${chunk.compression}`);
  }
}

/** lz4-java's LZ4Block framing, read back (no checksum check: a test's own reader). */
function unLz4Blocks(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ; ) {
    const method = (data[at + 8] as number) & 0xf0;
    const compressed = data.readInt32LE(at + 9);
    const size = data.readInt32LE(at + 13);
    at += 21;
    if (size === 0) return Buffer.concat(parts);
    if (method === 0x10) parts.push(data.subarray(at, at + size));
    else {
      const out = Buffer.alloc(size);
      decompressBlock(data, out, at, compressed, 0);
      parts.push(out);
    }
    at += compressed;
  }
}

/**
 * Writes chunk `index` of the region file at `path` as the game saves it: `nbt` compressed in `compression`, in the
 * first free run of sectors or at the end, header and timestamp updated in place.
 */
export function saveChunkAsGame(
  path: string,
  region: { x: number; z: number },
  index: number,
  nbt: Buffer,
  compression: Compression,
  timestamp = Math.floor(Date.now() / 1000),
): void {
  let file = readFileSync(path);
  if (file.length < 8192) file = Buffer.concat([file, Buffer.alloc(8192 - file.length)]);
  const payload = compressChunk(nbt, compression);
  let chunk = Buffer.alloc(5 + payload.length);
  chunk.writeUInt32BE(payload.length + 1, 0);
  chunk[4] = compression;
  payload.copy(chunk, 5);
  const mcc = join(dirname(path), `c.${region.x * 32 + (index & 31)}.${region.z * 32 + (index >> 5)}.mcc`);
  if (Math.ceil(chunk.length / 4096) >= 256) {
    writeFileSync(mcc, payload);
    chunk = Buffer.from([0, 0, 0, 1, compression | 0x80]);
  }
  const needed = Math.ceil(chunk.length / 4096);
  // The game's RegionBitmap: the header's two sectors and every chunk's sectors are used, this chunk's old ones too
  // (they are freed only once the new ones are written).
  const used = new Set<number>([0, 1]);
  for (let i = 0; i < 1024; i++) {
    const location = file.readUInt32BE(i * 4);
    if (location === 0) continue;
    for (let s = 0; s < (location & 0xff); s++) used.add((location >>> 8) + s);
  }
  let at = 2;
  for (;;) {
    let free = 0;
    while (free < needed && !used.has(at + free)) free++;
    if (free === needed) break;
    at += free + 1;
  }
  const end = Math.max(file.length, at * 4096 + chunk.length);
  const out = Buffer.alloc(end);
  file.copy(out);
  // Only the chunk's bytes are written: the rest of its last sector keeps what it had.
  chunk.copy(out, at * 4096);
  out.writeUInt32BE(((at << 8) | needed) >>> 0, index * 4);
  out.writeUInt32BE(timestamp, 4096 + index * 4);
  writeFileSync(path, out);
}

/**
 * Changes chunk `index` as a player's play would and saves it as the game does: its NBT gains a tag (before the root
 * compound's end), compressed as it was.
 */
export function changeChunkAsGame(path: string, region: { x: number; z: number }, index: number, mark: string): void {
  const chunk = regionChunks(readFileSync(path)).get(index);
  if (!chunk) throw new Error(`no chunk ${index} in ${path}`);
  const nbt = chunkNbt(chunk);
  // A TAG_String named "mcops" holding `mark`, put before the root compound's TAG_End.
  const name = Buffer.from("mcops");
  const value = Buffer.from(mark);
  const tag = Buffer.alloc(1 + 2 + name.length + 2 + value.length);
  tag[0] = 8;
  tag.writeUInt16BE(name.length, 1);
  name.copy(tag, 3);
  tag.writeUInt16BE(value.length, 3 + name.length);
  value.copy(tag, 5 + name.length);
  const changed = Buffer.concat([nbt.subarray(0, nbt.length - 1), tag, nbt.subarray(nbt.length - 1)]);
  saveChunkAsGame(path, region, index, changed, (chunk.compression & 0x7f) as Compression);
}

interface PrismarineRegion {
  initialize(): Promise<void>;
  hasChunk(x: number, z: number): boolean;
  read(x: number, z: number): Promise<unknown>;
  file: { close(): Promise<void> };
}
const requireHere = createRequire(import.meta.url);

/**
 * How many chunks of the region file at `path` prismarine-provider-anvil's RegionFile (a port of the game's reader,
 * gzip and zlib only) reads and parses as NBT. It opens the file to write and pads it: it reads a copy.
 */
export async function prismarineReadable(path: string): Promise<number> {
  const RegionFile = requireHere("prismarine-provider-anvil/src/region.js") as new (path: string) => PrismarineRegion;
  const copy = `${path}.prismarine`;
  copyFileSync(path, copy);
  const region = new RegionFile(copy);
  try {
    await region.initialize();
    let read = 0;
    for (let i = 0; i < 1024; i++) if (region.hasChunk(i & 31, i >> 5) && (await region.read(i & 31, i >> 5))) read++;
    await region.file.close();
    return read;
  } finally {
    rmSync(copy, { force: true });
  }
}
