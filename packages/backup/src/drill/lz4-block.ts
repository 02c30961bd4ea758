import { decompressBlock } from "lz4js";
import { hash as xxh32 } from "lz4js/xxh32.js";

/**
 * The game's LZ4 chunks (region-file-compression=lz4, 1.20.5+) are written by lz4-java's LZ4BlockOutputStream: a run
 * of blocks, each `LZ4Block` + a token (method 0x10 raw or 0x20 LZ4, low bits the block size level) + the compressed
 * and decompressed lengths and an xxHash32 of the decompressed bytes (seed 0x9747b28c, the low 28 bits), all little
 * endian, then the block; an empty block ends the stream. The block itself is decompressed by lz4js; this reads the
 * framing around it and checks each block's checksum.
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

function decodeBlock(data: Buffer, at: number, compressed: number, size: number): Buffer {
  const out = Buffer.alloc(size);
  const written = decompressBlock(data, out, at, compressed, 0);
  if (written !== size) throw new Lz4Error(`LZ4 block decompresses to ${written} bytes, not ${size}`);
  return out;
}
