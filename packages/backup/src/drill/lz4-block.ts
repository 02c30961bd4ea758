import { hash as xxh32 } from "lz4js/xxh32.js";

/**
 * The game's LZ4 chunks (region-file-compression=lz4, 1.20.5+) are written by lz4-java's LZ4BlockOutputStream: a run
 * of blocks, each `LZ4Block` + a token (method 0x10 raw or 0x20 LZ4, low bits the block size level) + the compressed
 * and decompressed lengths and an xxHash32 of the decompressed bytes (seed 0x9747b28c, the low 28 bits), all little
 * endian, then the block; an empty block ends the stream. This reads the framing, decodes each block with every bound
 * lz4-java's safe decompressor keeps (no literal or match past either end, no match before the block's start, the
 * exact size), in time linear in the bytes, and checks each block's xxHash32 (lz4js's).
 */
const MAGIC = Buffer.from("LZ4Block");
const HEADER = MAGIC.length + 13;
const SEED = 0x9747b28c;
const METHOD_RAW = 0x10;
const METHOD_LZ4 = 0x20;

export class Lz4Error extends Error {}

/** The stream's bytes; throws Lz4Error when the framing, a block or a checksum is wrong, or it would exceed `maxBytes`. */
export function decompressLz4Blocks(data: Buffer, maxBytes: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  let at = 0;
  for (;;) {
    if (at + HEADER > data.length) throw new Lz4Error("LZ4 stream ends before its end block");
    if (!data.subarray(at, at + MAGIC.length).equals(MAGIC)) throw new Lz4Error(`no LZ4Block header at byte ${at}`);
    const token = data[at + 8] as number;
    const method = token & 0xf0;
    const blockMax = 1 << (10 + (token & 0x0f));
    const compressed = data.readInt32LE(at + 9);
    const size = data.readInt32LE(at + 13);
    const check = data.readInt32LE(at + 17);
    at += HEADER;
    if (size === 0 && compressed === 0) {
      if (check !== 0) throw new Lz4Error("LZ4 end block with a checksum");
      return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
    }
    if ((method !== METHOD_RAW && method !== METHOD_LZ4) || size < 0 || compressed < 0 || size > blockMax) {
      throw new Lz4Error(`bad LZ4 block header at byte ${at - HEADER}`);
    }
    if (method === METHOD_RAW && compressed !== size) throw new Lz4Error("raw LZ4 block with two lengths");
    if (at + compressed > data.length) throw new Lz4Error("LZ4 block runs past the end of the chunk");
    total += size;
    if (total > maxBytes) throw new Lz4Error(`decompresses to more than ${maxBytes} bytes`);
    const block = method === METHOD_RAW ? data.subarray(at, at + size) : decodeBlock(data, at, compressed, size);
    if ((xxh32(SEED, block, 0, size) & 0x0fffffff) !== (check & 0x0fffffff)) {
      throw new Lz4Error(`LZ4 block checksum does not match at byte ${at - HEADER}`);
    }
    parts.push(block);
    at += compressed;
  }
}

/** One LZ4 block of `compressed` bytes at `at`, which must decode to exactly `size` bytes. */
function decodeBlock(src: Buffer, at: number, compressed: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  const end = at + compressed;
  let s = at;
  let d = 0;
  const length = (base: number): number => {
    let n = base;
    if (base !== 15) return n;
    for (;;) {
      if (s >= end) throw new Lz4Error("LZ4 block ends inside a length");
      const b = src[s++] as number;
      n += b;
      if (b !== 255) return n;
    }
  };
  while (s < end) {
    const token = src[s++] as number;
    const literals = length(token >>> 4);
    if (literals > end - s || literals > size - d) throw new Lz4Error("LZ4 literals run past the block");
    src.copy(out, d, s, s + literals);
    s += literals;
    d += literals;
    if (s === end) break; // the last sequence is literals only
    if (s + 2 > end) throw new Lz4Error("LZ4 block ends inside a match offset");
    const offset = (src[s] as number) | ((src[s + 1] as number) << 8);
    s += 2;
    if (offset === 0 || offset > d) throw new Lz4Error("an LZ4 match reaches before the start of the block");
    const match = length(token & 15) + 4;
    if (match > size - d) throw new Lz4Error(`LZ4 block decompresses to more than ${size} bytes`);
    let from = d - offset;
    if (offset >= match) {
      out.copy(out, d, from, from + match);
      d += match;
    } else for (let i = 0; i < match; i++) out[d++] = out[from++] as number;
  }
  if (d !== size) throw new Lz4Error(`LZ4 block decompresses to ${d} bytes, not ${size}`);
  return out;
}
