import { promisify } from "node:util";
import { gunzip, inflate } from "node:zlib";
import nbt from "prismarine-nbt";
import { decompressLz4Blocks } from "./lz4-block.ts";
import { nbtShapeProblem } from "./nbt-shape.ts";

/**
 * The Anvil region format as the game reads it (net.minecraft.world.level.chunk.storage.RegionFile): an 8 KiB header
 * of 1024 big-endian locations (the chunk's first 4 KiB sector << 8 | its sector count) and 1024 timestamps, then the
 * chunks, each a big-endian length (the bytes that follow, the compression byte included), a compression byte
 * (1 gzip, 2 zlib, 3 none, 4 LZ4; with 0x80 set the payload is in `c.<x>.<z>.mcc` beside the region file), the
 * payload. The whole file is a multiple of 4 KiB.
 */
export const SECTOR = 4096;
export const HEADER_BYTES = 2 * SECTOR;

/** A chunk decompresses to at most this much: vanilla's biggest chunks are a few MiB. */
export const MAX_CHUNK_BYTES = 64 * 1024 * 1024;

/** A present chunk's place in the file, from the header. */
export interface Location {
  /** 0..1023: x + 32 z within the region. */
  index: number;
  sector: number;
  count: number;
}

/** The present chunks, or the first reason the header is not sane for a file of `size` bytes. */
export function readLocations(header: Buffer, size: number): { locations: Location[] } | { problem: string } {
  const sectors = size / SECTOR;
  const locations: Location[] = [];
  for (let index = 0; index < 1024; index++) {
    const entry = header.readUInt32BE(index * 4);
    if (entry === 0) continue;
    const sector = entry >>> 8;
    const count = entry & 0xff;
    const at = `chunk ${index & 31},${index >> 5}`;
    if (count === 0) return { problem: `${at}: header gives sector ${sector} with a sector count of 0` };
    if (sector < 2) return { problem: `${at}: header points into the header (sector ${sector})` };
    if (sector + count > sectors) {
      return { problem: `${at}: header points past the end (sectors ${sector}+${count} of ${sectors})` };
    }
    locations.push({ index, sector, count });
  }
  return { locations };
}

/** What stands before a chunk's payload: its length and compression byte, or why they cannot be right. */
export function chunkPrefix(
  bytes: Buffer,
  location: Location,
): { length: number; compression: number; external: boolean } | { problem: string } {
  const length = bytes.readUInt32BE(0);
  const compression = bytes[4] as number;
  const external = (compression & 0x80) !== 0;
  if (length === 0 || length + 4 > location.count * SECTOR) {
    return { problem: `length ${length} does not fit its ${location.count} sector(s)` };
  }
  if (external && length !== 1) return { problem: `an external chunk with ${length - 1} bytes in the region file` };
  const kind = compression & 0x7f;
  if (kind < 1 || kind > 4) return { problem: `unknown compression type ${kind}` };
  return { length, compression: kind, external };
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const NAMES: Record<number, string> = { 1: "gzip", 2: "zlib", 3: "uncompressed", 4: "LZ4" };

/**
 * Decompresses a payload the way its compression byte says and parses it as NBT; the reason when either fails. zlib
 * and gzip run on libuv's threads, so several chunks in flight keep both cores busy while this thread parses NBT.
 */
export async function checkPayload(payload: Buffer, compression: number): Promise<string | undefined> {
  let data: Buffer;
  try {
    if (compression === 1) data = await gunzipAsync(payload, { maxOutputLength: MAX_CHUNK_BYTES });
    else if (compression === 2) data = await inflateAsync(payload, { maxOutputLength: MAX_CHUNK_BYTES });
    else if (compression === 4) data = decompressLz4Blocks(payload, MAX_CHUNK_BYTES);
    else data = payload;
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? "it is over 64 MiB" : errorText(error);
    return `${NAMES[compression]} data does not decompress (${why})`;
  }
  return nbtProblem(data);
}

/** Why `data` is not one whole NBT compound, or undefined when it is. */
export function nbtProblem(data: Buffer): string | undefined {
  if (data[0] !== 10) return `not NBT (starts with tag ${data[0] ?? "nothing"}, not a compound)`;
  const shape = nbtShapeProblem(data);
  if (shape) return `not NBT (${shape})`;
  try {
    nbt.parseUncompressed(data, "big");
    return undefined;
  } catch (error) {
    return `not NBT (${errorText(error)})`;
  }
}

/** The NBT root of a gzip file (level.dat, playerdata), or why it is not one. */
export async function parseGzipNbt(data: Buffer): Promise<{ value: nbt.NBT } | { problem: string }> {
  let raw: Buffer;
  try {
    raw = await gunzipAsync(data, { maxOutputLength: MAX_CHUNK_BYTES });
  } catch (error) {
    return { problem: `not gzip (${errorText(error)})` };
  }
  const shape = nbtShapeProblem(raw);
  if (shape) return { problem: `not NBT (${shape})` };
  try {
    return { value: nbt.parseUncompressed(raw, "big") };
  } catch (error) {
    return { problem: `not NBT (${errorText(error)})` };
  }
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]?.slice(0, 200) ?? "";
}
