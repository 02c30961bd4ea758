/// <reference path="./lz4js.d.ts" />
import { randomBytes } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { compressBlock, compressBound } from "lz4js";
import { hash as xxh32 } from "lz4js/xxh32.js";
import nbt from "prismarine-nbt";

/**
 * A real Minecraft world on disk, for the restore drill's tests and benchmark: level.dat and players' files as gzip NBT
 * (prismarine-nbt), region files in the Anvil format the game writes (8 KiB header, 4 KiB sectors, each chunk's
 * length, compression byte and payload) with chunks in every compression the game knows (1 gzip, 2 zlib, 3 none, 4
 * LZ4 in lz4-java's LZ4Block framing), an oversized chunk kept in its `c.<x>.<z>.mcc`, and the dimensions in both
 * layouts: vanilla's DIM-1/DIM1 inside the level, Bukkit's `<level>_nether`/`<level>_the_end` beside it. Each chunk
 * says where it is, as the game's do: a terrain chunk's xPos and zPos, an entities chunk's Position.
 */
export type Compression = 1 | 2 | 3 | 4;

export interface WorldOptions {
  level?: string;
  /** "bukkit": `<level>_nether/DIM-1`, `<level>_the_end/DIM1`; "vanilla": both inside the level folder. */
  layout?: "bukkit" | "vanilla";
  /** Region files per dimension's region/ (entities/ and poi/ get one each). */
  regions?: number;
  chunksPerRegion?: number;
  /** Used in turn, chunk by chunk. */
  compressions?: readonly Compression[];
  /** Sections per chunk (24 in a 1.18+ overworld): the chunk's size. */
  sections?: number;
  /** Put one chunk of the first region in its `.mcc` file. */
  external?: boolean;
  players?: number;
  /** Different chunk bodies made, then reused (a big world for the benchmark is quick to write). */
  variety?: number;
  /** The game version level.dat says last saved the world (default 1.21, data version 3953). */
  savedBy?: { name: string; dataVersion: number };
}

export interface BuiltWorld {
  /** The folders made, the level's first. */
  worlds: string[];
  /** Relative to the directory given, e.g. `world/region/r.0.0.mca`. */
  regionFiles: string[];
  chunks: number;
  files: number;
  bytes: number;
}

const DATA_VERSION = 3953; // 1.21

export function buildWorld(dir: string, options: WorldOptions = {}): BuiltWorld {
  const level = options.level ?? "world";
  const layout = options.layout ?? "bukkit";
  const built: BuiltWorld = { worlds: [level], regionFiles: [], chunks: 0, files: 0, bytes: 0 };
  const write = (rel: string, data: Buffer) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), data);
    built.files++;
    built.bytes += data.length;
  };
  const saver = options.savedBy ?? { name: "1.21", dataVersion: DATA_VERSION };
  write(`${level}/level.dat`, levelDat(level, saver));
  const dimensions = [level];
  if (layout === "bukkit") {
    built.worlds.push(`${level}_nether`, `${level}_the_end`);
    dimensions.push(`${level}_nether/DIM-1`, `${level}_the_end/DIM1`);
    write(`${level}_nether/level.dat`, levelDat(level, saver));
    write(`${level}_the_end/level.dat`, levelDat(level, saver));
  } else dimensions.push(`${level}/DIM-1`, `${level}/DIM1`);
  const bodies = chunkBodies(options);
  const entityBodies = [entitiesChunk()];
  for (const [d, dimension] of dimensions.entries()) {
    for (const [kind, count] of [
      ["region", options.regions ?? 1],
      ["entities", 1],
      ["poi", 1],
    ] as const) {
      for (let r = 0; r < count; r++) {
        const rel = `${dimension}/${kind}/r.${r}.${-d}.mca`;
        const external = options.external === true && d === 0 && kind === "region" && r === 0;
        const region = regionFile(kind === "entities" ? entityBodies : bodies, options, { x: r, z: -d }, external);
        write(rel, region.file);
        if (region.mcc) write(`${dimension}/${kind}/${region.mcc.name}`, region.mcc.data);
        built.regionFiles.push(rel);
        built.chunks += region.chunks;
      }
    }
  }
  for (let p = 0; p < (options.players ?? 2); p++) {
    const uuid = `6f4b2c1e-0000-4000-8000-${String(p + 1).padStart(12, "0")}`;
    write(`${level}/playerdata/${uuid}.dat`, playerDat(p));
  }
  return built;
}

/** prismarine-nbt's builders type a root compound's name as optional, its writer wants it: the root is "" here. */
function nbtBytes(root: unknown): Buffer {
  return nbt.writeUncompressed(root as nbt.NBT, "big");
}

function levelDat(level: string, saver: { name: string; dataVersion: number }): Buffer {
  return gzipSync(levelDatNbt(level, saver));
}

/**
 * Uncompressed NBT no game writes but a plugin can (issue 28): a compound holding the list `Bomb` of `count` empty
 * compounds, one byte each, so 60 MB of them gzip to ~60 KiB and a parser that builds objects builds tens of millions.
 * With `level`, it is a level.dat: the list sits in Data beside the real fields.
 */
export function compoundBomb(count: number, level?: { level?: string; name: string; dataVersion: number }): Buffer {
  const list = Buffer.alloc(1 + 2 + 4 + 1 + 4 + count);
  list[0] = 9;
  list.writeUInt16BE(4, 1);
  list.write("Bomb", 3, "latin1");
  list[7] = 10;
  list.writeInt32BE(count, 8);
  const root = level ? levelDatNbt(level.level ?? "world", level) : Buffer.from([10, 0, 0, 0]);
  const ends = level ? 2 : 1; // Data's end and the root's, or the root's
  return Buffer.concat([root.subarray(0, root.length - ends), list, root.subarray(root.length - ends)]);
}

/** level.dat's NBT, uncompressed: Data with the level's name and the version that saved it. */
export function levelDatNbt(level: string, saver: { name: string; dataVersion: number }): Buffer {
  const root = nbt.comp(
    {
      Data: nbt.comp({
        LevelName: nbt.string(level),
        DataVersion: nbt.int(saver.dataVersion),
        version: nbt.int(19133),
        GameType: nbt.int(0),
        SpawnX: nbt.int(0),
        SpawnY: nbt.int(64),
        SpawnZ: nbt.int(0),
        Version: nbt.comp({ Name: nbt.string(saver.name), Id: nbt.int(saver.dataVersion) }),
      }),
    },
    "",
  );
  return nbtBytes(root);
}

function playerDat(p: number): Buffer {
  const root = nbt.comp(
    {
      DataVersion: nbt.int(DATA_VERSION),
      Health: nbt.float(20),
      Pos: nbt.list(nbt.double([p, 64, -p])),
      Inventory: nbt.list(nbt.comp([{ Slot: nbt.byte(0), id: nbt.string("minecraft:torch"), count: nbt.int(64) }])),
    },
    "",
  );
  return gzipSync(nbtBytes(root));
}

/** Uncompressed chunk NBT as a 1.18+ game writes it: sections with block states, biomes and light. */
function chunkBodies(options: WorldOptions): Buffer[] {
  const sections = options.sections ?? 4;
  return Array.from({ length: options.variety ?? 4 }, (_, v) => {
    const list = Array.from({ length: sections }, (_, y) => {
      const noise = randomBytes(512);
      return {
        Y: nbt.byte(y - 4),
        block_states: nbt.comp({
          palette: nbt.list(
            nbt.comp([
              { Name: nbt.string("minecraft:stone") },
              { Name: nbt.string("minecraft:deepslate") },
              { Name: nbt.string("minecraft:grass_block"), Properties: nbt.comp({ snowy: nbt.string("false") }) },
            ]),
          ),
          data: nbt.longArray(
            Array.from({ length: 256 }, (_, i) => (BigInt(noise[i] ?? 0) << 32n) | BigInt(noise[i + 256] ?? v)),
          ),
        }),
        biomes: nbt.comp({ palette: nbt.list(nbt.string(["minecraft:plains"])) }),
        BlockLight: nbt.byteArray(Array.from({ length: 2048 }, (_, i) => (noise[i % 512] ?? 0) & 15)),
        SkyLight: nbt.byteArray(Array.from({ length: 2048 }, (_, i) => i % 15)),
      };
    });
    const root = nbt.comp(
      {
        DataVersion: nbt.int(DATA_VERSION),
        xPos: nbt.int(0), // each chunk's own, written where it is saved (regionFile)
        zPos: nbt.int(0),
        yPos: nbt.int(-4),
        Status: nbt.string("minecraft:full"),
        sections: nbt.list(nbt.comp(list)),
        Heightmaps: nbt.comp({ MOTION_BLOCKING: nbt.longArray(Array.from({ length: 37 }, () => 5n)) }),
      },
      "",
    );
    return nbtBytes(root);
  });
}

/** An entities chunk's NBT, uncompressed, as 1.17+ writes it to entities/: its Position [x, z] (set per chunk) and mobs. */
function entitiesChunk(): Buffer {
  const mob = (id: string, i: number) => ({
    id: nbt.string(id),
    Pos: nbt.list(nbt.double([i + 0.5, 64, 0.5])),
    Health: nbt.float(20),
    UUID: nbt.intArray([0x6f4b2c1e, i, 7, 11]),
  });
  const root = nbt.comp(
    {
      DataVersion: nbt.int(DATA_VERSION),
      Position: nbt.intArray([0, 0]),
      Entities: nbt.list(nbt.comp([mob("minecraft:cow", 0), mob("minecraft:sheep", 1)])),
    },
    "",
  );
  return nbtBytes(root);
}

/**
 * Where a chunk body says it is, as the game writes it (a terrain chunk's root xPos and zPos ints, an entities chunk's
 * Position ints): the offsets of the two ints in `body`.
 */
function positionAt(body: Buffer): [number, number] {
  const tag = (type: number, name: string) =>
    Buffer.concat([Buffer.from([type, 0, name.length]), Buffer.from(name, "latin1")]);
  const position = body.indexOf(tag(11, "Position"));
  if (position !== -1) return [position + 11 + 4, position + 11 + 8];
  const x = body.indexOf(tag(3, "xPos"));
  const z = body.indexOf(tag(3, "zPos"));
  if (x === -1 || z === -1) throw new Error("a chunk body without its position");
  return [x + 7, z + 7];
}

/** A chunk's payload in the given compression. */
export function compressChunk(body: Buffer, compression: Compression): Buffer {
  if (compression === 1) return gzipSync(body);
  if (compression === 2) return deflateSync(body);
  if (compression === 4) return lz4Blocks(body);
  return body;
}

/** lz4-java's LZ4BlockOutputStream as the game uses it: 64 KiB blocks, xxHash32 checksums, an empty end block. */
export function lz4Blocks(data: Buffer): Buffer {
  const level = 6; // 1 << (10 + 6) = 64 KiB blocks
  const header = (method: number, compressed: number, size: number, check: number) => {
    const bytes = Buffer.alloc(21);
    bytes.write("LZ4Block", 0, "latin1");
    bytes[8] = method | level;
    bytes.writeInt32LE(compressed, 9);
    bytes.writeInt32LE(size, 13);
    bytes.writeInt32LE(check, 17);
    return bytes;
  };
  const parts: Buffer[] = [];
  for (let at = 0; at < data.length; at += 1 << 16) {
    const block = data.subarray(at, Math.min(data.length, at + (1 << 16)));
    const out = Buffer.alloc(compressBound(block.length));
    const written = compressBlock(block, out, 0, block.length, new Uint32Array(1 << 16));
    const check = xxh32(0x9747b28c, block, 0, block.length) & 0x0fffffff;
    if (written > 0 && written < block.length)
      parts.push(header(0x20, written, block.length, check), out.subarray(0, written));
    else parts.push(header(0x10, block.length, block.length, check), block);
  }
  parts.push(header(0x10, 0, 0, 0));
  return Buffer.concat(parts);
}

function regionFile(
  bodies: Buffer[],
  options: WorldOptions,
  region: { x: number; z: number },
  external: boolean,
): { file: Buffer; chunks: number; mcc?: { name: string; data: Buffer } } {
  const compressions = options.compressions ?? [1, 2, 3, 4];
  const count = Math.min(1024, options.chunksPerRegion ?? 8);
  const header = Buffer.alloc(8192);
  const body: Buffer[] = [];
  let next = 2;
  let mcc: { name: string; data: Buffer } | undefined;
  for (let c = 0; c < count; c++) {
    // Spread over the region: chunk index c * 37 mod 1024 (37 is prime to 1024, so no two chunks share a slot).
    const index = (c * 37) % 1024;
    const compression = compressions[c % compressions.length] as Compression;
    const x = region.x * 32 + (index & 31);
    const z = region.z * 32 + (index >> 5);
    // The body says where the chunk is, as the game's do: written in place, compressed before the next chunk's.
    const nbtBody = bodies[c % bodies.length] as Buffer;
    const [xAt, zAt] = positionAt(nbtBody);
    nbtBody.writeInt32BE(x, xAt);
    nbtBody.writeInt32BE(z, zAt);
    const payload = compressChunk(nbtBody, compression);
    let chunk: Buffer;
    if (external && c === 0) {
      mcc = { name: `c.${x}.${z}.mcc`, data: payload };
      chunk = Buffer.from([0, 0, 0, 1, compression | 0x80]);
    } else {
      chunk = Buffer.concat([Buffer.alloc(5), payload]);
      chunk.writeUInt32BE(payload.length + 1, 0);
      chunk[4] = compression;
    }
    const sectors = Math.ceil(chunk.length / 4096);
    const padded = Buffer.alloc(sectors * 4096);
    chunk.copy(padded);
    header.writeUInt32BE(((next << 8) | sectors) >>> 0, index * 4);
    header.writeUInt32BE(1_700_000_000 + c, 4096 + index * 4);
    body.push(padded);
    next += sectors;
  }
  return { file: Buffer.concat([header, ...body]), chunks: count, ...(mcc ? { mcc } : {}) };
}

/** Damage done to a built world, as a disk, a bad copy or a crash would do it. */
export const damage = {
  /** Cuts the file in the middle of its last chunk's data, as a copy or a disk that ran out would. */
  truncate(file: string): void {
    const last = lastChunk(readFileSync(file));
    truncateSync(file, last.start + 5 + Math.floor((last.length - 1) / 2));
  },
  /**
   * Takes off the zeros after the last chunk's data, as the game leaves a region file it has not closed (it pads the
   * last sector only when it closes it): a file every backup of a running server holds, and the game reads whole.
   */
  unpad(file: string): void {
    const last = lastChunk(readFileSync(file));
    truncateSync(file, last.start + 4 + last.length);
  },
  /** The header's first present entry points `sectors` past the end of the file. */
  pointPastEnd(file: string, sectors = 8): void {
    const data = readFileSync(file);
    const index = firstPresent(data);
    const total = data.length / 4096;
    const count = data.readUInt32BE(index * 4) & 0xff;
    data.writeUInt32BE((((total + sectors) << 8) | count) >>> 0, index * 4);
    writeFileSync(file, data);
  },
  /** Overwrites the middle of the first present chunk's compressed payload (its length and compression stay). */
  corruptChunk(file: string): void {
    const data = readFileSync(file);
    const index = firstPresent(data);
    const at = (data.readUInt32BE(index * 4) >>> 8) * 4096;
    const length = data.readUInt32BE(at);
    const fd = openSync(file, "r+");
    try {
      writeSync(
        fd,
        Buffer.alloc(Math.max(1, Math.floor(length / 2)), 0x5a),
        0,
        undefined,
        at + 5 + Math.floor(length / 4),
      );
    } finally {
      closeSync(fd);
    }
  },
  /** Puts `payload` (compressed as `compression` says) in new sectors at the end and points the first chunk at it. */
  replaceChunk(file: string, payload: Buffer, compression: Compression): void {
    const data = readFileSync(file);
    const sectors = Math.ceil((payload.length + 5) / 4096);
    const chunk = Buffer.alloc(sectors * 4096);
    chunk.writeUInt32BE(payload.length + 1, 0);
    chunk[4] = compression;
    payload.copy(chunk, 5);
    const start = Math.ceil(data.length / 4096);
    const padded = Buffer.concat([data, Buffer.alloc(start * 4096 - data.length)]);
    padded.writeUInt32BE(((start << 8) | sectors) >>> 0, firstPresent(data) * 4);
    writeFileSync(file, Buffer.concat([padded, chunk]));
  },
  /**
   * Points header entry `slot` at entry `from`'s sectors (by default, the first two present entries), as a tool that
   * wrote the wrong entry would: the game reads `from`'s chunk in `slot`'s place, and `slot`'s own is lost. Returns
   * both entries' indices.
   */
  misplaceChunk(file: string, which?: { slot: number; from: number }): { slot: number; from: number } {
    const data = readFileSync(file);
    const present = [...Array(1024).keys()].filter((i) => data.readUInt32BE(i * 4) !== 0);
    const chosen = which ?? { slot: present[0] as number, from: present[1] as number };
    if (data.readUInt32BE(chosen.from * 4) === 0) throw new Error(`no chunk at entry ${chosen.from} of ${file}`);
    data.writeUInt32BE(data.readUInt32BE(chosen.from * 4), chosen.slot * 4);
    writeFileSync(file, data);
    return chosen;
  },
  removeLevelDat(worldDir: string, level = "world"): void {
    unlinkSync(join(worldDir, level, "level.dat"));
  },
};

/** The chunk that lies last in the file: where it starts and its declared length. */
function lastChunk(data: Buffer): { start: number; length: number } {
  let start = 0;
  for (let index = 0; index < 1024; index++) start = Math.max(start, (data.readUInt32BE(index * 4) >>> 8) * 4096);
  if (start === 0) throw new Error("no chunk in this region file");
  return { start, length: data.readUInt32BE(start) };
}

function firstPresent(data: Buffer): number {
  for (let index = 0; index < 1024; index++) if (data.readUInt32BE(index * 4) !== 0) return index;
  throw new Error("no chunk in this region file");
}
