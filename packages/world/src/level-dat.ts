import { crc32, inflateRawSync } from "node:zlib";
import { isErrno } from "@mcops/core/fs";
import { readNbtFields } from "./nbt-walk.ts";

/** level.dat and a player's file are a few KiB inflated; anything near this is not the game's. */
export const MAX_SMALL_FILE = 16 * 1024 * 1024;

/** What level.dat says of its world, as read; each field undefined when it is missing (or not of its type). */
export interface LevelDat {
  levelName: string | undefined;
  /** Data.DataVersion: the number each game version writes (1.21.4 writes 4189). */
  dataVersion: number | undefined;
  /** Data.Version.Name, e.g. "1.21.4" (1.9 and later). */
  versionName: string | undefined;
}

/**
 * level.dat's name and version, read by the NBT walk that checks the whole file (nbt-walk.ts: no tree is built, so a
 * level.dat made to exhaust memory is only a reason); or why it is not a level.dat at all.
 */
export function readLevelDat(data: Buffer): LevelDat | { problem: string } {
  const inflated = gunzipNbt(data, MAX_SMALL_FILE);
  if ("problem" in inflated) return inflated;
  const read = readNbtFields(inflated.nbt, [
    ["Data", "LevelName"],
    ["Data", "DataVersion"],
    ["Data", "Version", "Name"],
  ]);
  if ("problem" in read) return { problem: `not NBT (${read.problem})` };
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const dataVersion = read.fields.get("Data.DataVersion");
  return {
    levelName: text(read.fields.get("Data.LevelName")),
    dataVersion: typeof dataVersion === "number" ? dataVersion : undefined,
    versionName: text(read.fields.get("Data.Version.Name")),
  };
}

/**
 * The NBT of a gzip file (level.dat, playerdata), inflated to at most `maxBytes`; or why it is not one. Only the first
 * gzip member is read and what follows it ignored, as Java's GZIPInputStream (the game's reader) does; the member's
 * CRC-32 and length are checked.
 */
export function gunzipNbt(data: Buffer, maxBytes: number): { nbt: Buffer } | { problem: string } {
  const start = gzipHeaderEnd(data);
  if (typeof start === "string") return { problem: `not gzip (${start})` };
  let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    inflated = inflateRawSync(data.subarray(start), { maxOutputLength: maxBytes, info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
  } catch (error) {
    if (isErrno(error, "ERR_BUFFER_TOO_LARGE")) return { problem: `more than ${maxBytes} bytes inflated` };
    return { problem: `not gzip (${errorText(error)})` };
  }
  const trailer = start + inflated.engine.bytesWritten;
  if (trailer + 8 > data.length) return { problem: "not gzip (it ends before its checksum)" };
  if (data.readUInt32LE(trailer) !== crc32(inflated.buffer)) return { problem: "not gzip (its CRC-32 does not match)" };
  if (data.readUInt32LE(trailer + 4) !== inflated.buffer.length % 2 ** 32) {
    return { problem: "not gzip (its length does not match)" };
  }
  return { nbt: inflated.buffer };
}

/** Where a gzip member's deflate data starts (RFC 1952: the header and its optional fields), or why it is not gzip. */
function gzipHeaderEnd(data: Buffer): number | string {
  if (data.length < 18 || data[0] !== 0x1f || data[1] !== 0x8b) return "incorrect header check";
  if (data[2] !== 8) return `compression method ${data[2]}`;
  const flags = data[3] as number;
  let at = 10;
  if (flags & 4) at += 2 + data.readUInt16LE(at); // at is 10 here, and data holds 18 bytes at least
  for (const bit of [8, 16]) {
    if (flags & bit) {
      const end = data.indexOf(0, at);
      if (end === -1) return "its header never ends";
      at = end + 1;
    }
  }
  if (flags & 2) at += 2;
  return at < data.length ? at : "its header never ends";
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]?.slice(0, 200) ?? "";
}
