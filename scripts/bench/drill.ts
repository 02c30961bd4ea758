import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { deflate, inflateSync } from "node:zlib";
import { readRecords } from "@mcops/core/events";
import { lastDrill } from "@mcops/core/records";
import { type BuiltWorld, buildWorld, resticVersions } from "@mcops/testkit";
import { TAG, walkNbt } from "@mcops/world/nbt-walk";
import {
  BACKUP_BIN,
  backedUp,
  closeRepo,
  describeRepo,
  fmt,
  MiB,
  makeWorld,
  median,
  type Repo,
  ratio,
  run,
} from "./lib.ts";

/**
 * Issue 16: the restore drill, three ways, each a ratio against an anchor measured in the same run (rounds interleaved,
 * medians):
 *
 * 1. NBT validation throughput: the chunks of a bench world inflated once, then `zlib.inflateSync` of all their
 *    payloads (the anchor: the floor for zlib worlds) against the drill's NBT validator over the inflated bytes, in MB/s
 *    of inflated NBT; target >= 300 MB/s. Also both one chunk after the other, as a checker thread does. Twice: over
 *    the chunks of testkit's world (16 bodies of random light and block data, 150 KiB each), and over 1.18+ chunks
 *    generated here (palettes, packed block states, light, block entities) that zlib compresses as it does the game's.
 * 2. `backup drill` of a generated ~300 MiB world (testkit's, zlib chunks) against a plain `restic restore` of the same
 *    snapshot, through a local rclone remote; target at most 4x.
 * 3. The same through an rclone remote limited to 20 MiB/s, a cloud drive's speed, over a ~100 MiB world of the
 *    generated chunks (testkit's 16 chunk bodies deduplicate in restic's repository to a few MiB, too little for the
 *    limit to matter); target at most 1.3x. The limit is RCLONE_BWLIMIT in the environment of both: rclone reads it
 *    for --bwlimit, restic starts rclone with its environment and the backup tool hands restic its own. (restic's
 *    `-o rclone.args="serve restic --stdio --b2-hard-delete --bwlimit 20M"` limits a plain restic alike, but the
 *    backup tool takes no restic options.)
 */
/** rclone's --bwlimit 20M: 20 MiB/s, both ways. */
const BWLIMIT = "20M";
const BWLIMIT_BYTES = 20 * MiB;
const deflateAsync = promisify(deflate);

/**
 * A world of about `size` MiB whose overworld terrain is generated 1.18+ chunks, every one different: testkit's world
 * (a few small region files) for level.dat, the players, the other dimensions, entities/ and poi/, then
 * `world/region/r.<i>.0.mca` of the generated chunks.
 */
async function makeGeneratedWorld(worldDir: string, size: number): Promise<BuiltWorld> {
  writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
  const options = { chunksPerRegion: 16, sections: 24, variety: 4, compressions: [2] as const, players: 8 };
  const world = buildWorld(worldDir, { ...options, regions: 1 });
  const first = await generatedRegion(0, 0);
  const regions = Math.max(1, Math.round((size * MiB - world.bytes) / first.length));
  world.bytes -= statSync(join(worldDir, "world/region/r.0.0.mca")).size;
  world.chunks -= options.chunksPerRegion;
  for (let x = 0; x < regions; x++) {
    const file = x === 0 ? first : await generatedRegion(x, 0);
    writeFileSync(join(worldDir, `world/region/r.${x}.0.mca`), file);
    if (x > 0) world.regionFiles.push(`world/region/r.${x}.0.mca`);
    world.bytes += file.length;
    world.chunks += 1024;
  }
  world.files += regions - 1;
  return world;
}

// ---------------------------------------------------------------------------------------------------------------
// Generated 1.18+ chunks (the wiki's "Chunk format", data version 3953): 24 sections of paletted block states packed
// into longs (no entry across two longs), biomes, sky and block light, heightmaps, block entities, fluid ticks.
// Terrain is continuous across chunks (a height field of sines), with stone variants, ores, caves, lava, water, grass
// and trees, so the packed arrays have the runs and the noise of a real world and zlib makes of them what it makes of
// the game's (4 to 8x).
// ---------------------------------------------------------------------------------------------------------------

const {
  BYTE: TAG_BYTE,
  INT: TAG_INT,
  LONG: TAG_LONG,
  BYTE_ARRAY: TAG_BYTE_ARRAY,
  STRING: TAG_STRING,
  LIST: TAG_LIST,
  COMPOUND: TAG_COMPOUND,
  LONG_ARRAY: TAG_LONG_ARRAY,
} = TAG;

/** Big-endian NBT written straight into a growing buffer (names and strings are ASCII: modified UTF-8 as is). */
class NbtWriter {
  #buf = Buffer.alloc(256 * 1024);
  #pos = 0;

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = Buffer.alloc(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }
  u8(v: number): this {
    this.#room(1);
    this.#buf[this.#pos++] = v & 0xff;
    return this;
  }
  i32(v: number): this {
    this.#room(4);
    this.#pos = this.#buf.writeInt32BE(v | 0, this.#pos);
    return this;
  }
  /** A string's payload: its length, then its bytes. */
  text(s: string): this {
    this.#room(2 + s.length);
    this.#pos = this.#buf.writeUInt16BE(s.length, this.#pos);
    this.#pos += this.#buf.write(s, this.#pos, "latin1");
    return this;
  }
  #tag(type: number, name: string): this {
    return this.u8(type).text(name);
  }
  byte(name: string, v: number): this {
    return this.#tag(TAG_BYTE, name).u8(v);
  }
  int(name: string, v: number): this {
    return this.#tag(TAG_INT, name).i32(v);
  }
  /** Int tags, in the record's order. */
  ints(fields: Record<string, number>): this {
    for (const [name, v] of Object.entries(fields)) this.int(name, v);
    return this;
  }
  long(name: string, v: number): this {
    this.#tag(TAG_LONG, name).i32(Math.floor(v / 2 ** 32));
    return this.i32(v % 2 ** 32);
  }
  string(name: string, v: string): this {
    return this.#tag(TAG_STRING, name).text(v);
  }
  compound(name: string): this {
    return this.#tag(TAG_COMPOUND, name);
  }
  end(): this {
    return this.u8(0);
  }
  /** A list's head: `count` payloads of `element` follow (an empty list says TAG_End, as the game writes it). */
  list(name: string, element: number, count: number): this {
    this.#tag(TAG_LIST, name).u8(count ? element : 0);
    return this.i32(count);
  }
  bytes(name: string, data: Uint8Array): this {
    this.#tag(TAG_BYTE_ARRAY, name).i32(data.length);
    this.#room(data.length);
    this.#buf.set(data, this.#pos);
    this.#pos += data.length;
    return this;
  }
  /** A long array from 32-bit halves, high first. */
  longs(name: string, halves: Uint32Array): this {
    this.#tag(TAG_LONG_ARRAY, name).i32(halves.length / 2);
    this.#room(halves.length * 4);
    for (const half of halves) this.#pos = this.#buf.writeUInt32BE(half, this.#pos);
    return this;
  }
  /** What was written, copied out; the writer starts over. */
  take(): Buffer {
    const out = Buffer.from(this.#buf.subarray(0, this.#pos));
    this.#pos = 0;
    return out;
  }
}

/** mulberry32: the same world every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Block states by id (id 0 is air), as `name` or `name[key=value,...]`. */
const STATES: string[] = [];
const STATE_IDS = new Map<string, number>();
function state(s: string): number {
  let id = STATE_IDS.get(s);
  if (id === undefined) {
    id = STATES.push(s) - 1;
    STATE_IDS.set(s, id);
  }
  return id;
}
const B = {
  air: state("minecraft:air"),
  caveAir: state("minecraft:cave_air"),
  bedrock: state("minecraft:bedrock"),
  deepslate: state("minecraft:deepslate[axis=y]"),
  stone: state("minecraft:stone"),
  dirt: state("minecraft:dirt"),
  grass: state("minecraft:grass_block[snowy=false]"),
  sand: state("minecraft:sand"),
  water: state("minecraft:water[level=0]"),
  lava: state("minecraft:lava[level=0]"),
  shortGrass: state("minecraft:short_grass"),
  poppy: state("minecraft:poppy"),
  log: state("minecraft:oak_log[axis=y]"),
  leaves: [1, 2, 3].map((d) => state(`minecraft:oak_leaves[distance=${d},persistent=false,waterlogged=false]`)),
};
const STONE_BLOBS = ["andesite", "diorite", "granite", "gravel", "dirt", "coal_ore", "iron_ore", "copper_ore"].map(
  (n) => state(`minecraft:${n}`),
);
const DEEP_BLOBS = [
  "tuff",
  "deepslate_iron_ore",
  "deepslate_redstone_ore[lit=false]",
  "deepslate_gold_ore",
  "deepslate_lapis_ore",
  "deepslate_diamond_ore",
  "gravel",
].map((n) => state(`minecraft:${n}`));

const SEED = 0x5eed;
const phase = prng(SEED);
const PHASES = [phase() * 6.28, phase() * 6.28, phase() * 6.28];
function surface(gx: number, gz: number): number {
  const [a, b, c] = PHASES as [number, number, number];
  return Math.round(66 + 6 * Math.sin(gx / 23 + a) + 5 * Math.sin(gz / 17 + b) + 3 * Math.sin((gx + gz) / 11 + c));
}

/** Blocks of a chunk as state ids, index (y + 64) * 256 + z * 16 + x; and its surface heights, z * 16 + x. */
interface ChunkBlocks {
  blocks: Uint8Array;
  heights: Int16Array;
}

/** Single blocks of ore or another stone among stone and deepslate: with the blobs, zlib's ratio of a real world. */
const SPECKS = 0.06;
const at = (x: number, y: number, z: number) => (y + 64) * 256 + z * 16 + x;

function terrain(cx: number, cz: number, rand: () => number): ChunkBlocks {
  const blocks = new Uint8Array(24 * 4096);
  const heights = new Int16Array(256);
  for (let z = 0; z < 16; z++) {
    for (let x = 0; x < 16; x++) {
      const h = surface(cx * 16 + x, cz * 16 + z);
      heights[z * 16 + x] = h;
      for (let y = -64; y <= Math.max(h, 62); y++) {
        let id = B.stone;
        if (y === -64 || (y < -59 && rand() < (-59 - y) / 5)) id = B.bedrock;
        else if (y < 0 || (y < 8 && rand() < (8 - y) / 8)) id = B.deepslate;
        else if (y > h) id = B.water;
        else if (y === h) id = h < 63 ? B.sand : B.grass;
        else if (y > h - 4) id = h < 63 ? B.sand : B.dirt;
        if ((id === B.stone || id === B.deepslate) && rand() < SPECKS) {
          const kinds = id === B.stone ? STONE_BLOBS : DEEP_BLOBS;
          id = kinds[Math.floor(rand() * kinds.length)] as number;
        }
        blocks[at(x, y, z)] = id;
      }
    }
  }
  return { blocks, heights };
}

/** Fills a ball with `id` where the block is one of `over` (undefined: anything but bedrock). */
function ball(c: ChunkBlocks, p: [number, number, number], r: number, id: number, over?: ReadonlySet<number>): void {
  const [px, py, pz] = p;
  for (let y = Math.max(-63, Math.floor(py - r)); y <= Math.min(319, py + r); y++) {
    for (let z = Math.max(0, Math.floor(pz - r)); z <= Math.min(15, pz + r); z++) {
      for (let x = Math.max(0, Math.floor(px - r)); x <= Math.min(15, px + r); x++) {
        if ((x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2 > r * r) continue;
        const i = at(x, y, z);
        const was = c.blocks[i] as number;
        if (was === B.bedrock || (over && !over.has(was))) continue;
        c.blocks[i] = id;
      }
    }
  }
}

const ROCK = new Set([B.stone, B.deepslate]);
const LEAF_ROOM = new Set([B.air, ...B.leaves]);

/** Stone variants and ores in blobs, four winding caves (lava at the bottom), grass, flowers and trees on top. */
function decorate(c: ChunkBlocks, rand: () => number): void {
  for (let n = 0; n < 220; n++) {
    const y = Math.floor(-60 + rand() * 120);
    const kinds = y < 0 ? DEEP_BLOBS : STONE_BLOBS;
    const id = kinds[Math.floor(rand() ** 1.5 * kinds.length)] as number;
    ball(c, [rand() * 16, y, rand() * 16], id === B.dirt || id >= (STONE_BLOBS[5] as number) ? 1.3 : 2.5, id, ROCK);
  }
  for (let worm = 0; worm < 4; worm++) {
    const p: [number, number, number] = [rand() * 16, -50 + rand() * 90, rand() * 16];
    let [dx, dy, dz] = [rand() - 0.5, (rand() - 0.5) / 3, rand() - 0.5];
    for (let step = 0; step < 30; step++) {
      ball(c, p, 1.5 + rand() * 1.5, p[1] < -54 ? B.lava : B.caveAir);
      [dx, dy, dz] = [dx + (rand() - 0.5) / 2, dy + (rand() - 0.5) / 4, dz + (rand() - 0.5) / 2];
      p[0] = (p[0] + dx * 2 + 16) % 16;
      p[1] = Math.min(40, Math.max(-58, p[1] + dy * 2));
      p[2] = (p[2] + dz * 2 + 16) % 16;
    }
  }
  for (let i = 0; i < 256; i++) {
    const h = c.heights[i] as number;
    const [x, z] = [i & 15, i >> 4];
    if (c.blocks[at(x, h, z)] !== B.grass) continue;
    const r = rand();
    if (r < 0.3) c.blocks[at(x, h + 1, z)] = r < 0.02 ? B.poppy : B.shortGrass;
  }
  for (let tree = Math.floor(rand() * 3); tree > 0; tree--) {
    const [x, z] = [2 + Math.floor(rand() * 12), 2 + Math.floor(rand() * 12)];
    const h = c.heights[z * 16 + x] as number;
    if (h < 63) continue;
    for (let y = h + 3; y <= h + 6; y++) {
      for (let d = 3; d >= 1; d--) ball(c, [x, y, z], d, B.leaves[d - 1] as number, LEAF_ROOM);
    }
    for (let y = h + 1; y <= h + 5; y++) c.blocks[at(x, y, z)] = B.log;
  }
}

/** `values` packed `bits` to an entry, as many as fit in a long and none across two (1.16+), in 32-bit halves. */
function pack(values: ArrayLike<number>, bits: number): Uint32Array {
  const perLong = Math.floor(64 / bits);
  const halves = new Uint32Array(Math.ceil(values.length / perLong) * 2);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    const long = Math.floor(i / perLong);
    const shift = (i % perLong) * bits;
    if (shift >= 32) halves[long * 2] = ((halves[long * 2] as number) | (v << (shift - 32))) >>> 0;
    else {
      halves[long * 2 + 1] = ((halves[long * 2 + 1] as number) | (v << shift)) >>> 0;
      if (shift + bits > 32) halves[long * 2] = ((halves[long * 2] as number) | (v >>> (32 - shift))) >>> 0;
    }
  }
  return halves;
}

/** A palette entry: Name, and Properties when the state has them. */
function paletteEntry(out: NbtWriter, id: number): void {
  const s = STATES[id] as string;
  const open = s.indexOf("[");
  out.string("Name", open < 0 ? s : s.slice(0, open));
  if (open >= 0) {
    out.compound("Properties");
    for (const pair of s.slice(open + 1, -1).split(",")) {
      const [key, value] = pair.split("=") as [string, string];
      out.string(key, value);
    }
    out.end();
  }
  out.end();
}

/** One section: its block states (palette, packed indices), biomes, and light where the game keeps it. */
function section(out: NbtWriter, c: ChunkBlocks, s: number, rand: () => number): void {
  const ids = c.blocks.subarray(s * 4096, (s + 1) * 4096);
  const palette: number[] = [];
  const index = new Int16Array(256).fill(-1);
  const entries = new Uint16Array(4096);
  for (let i = 0; i < 4096; i++) {
    const id = ids[i] as number;
    let p = index[id] as number;
    if (p < 0) {
      p = palette.push(id) - 1;
      index[id] = p;
    }
    entries[i] = p;
  }
  out.byte("Y", s - 4).compound("block_states");
  out.list("palette", TAG_COMPOUND, palette.length);
  for (const id of palette) paletteEntry(out, id);
  if (palette.length > 1) out.longs("data", pack(entries, Math.max(4, Math.ceil(Math.log2(palette.length)))));
  out.end().compound("biomes");
  const deep = s < 4;
  out.list("palette", TAG_STRING, deep ? 2 : 1).text(deep ? "minecraft:dripstone_caves" : "minecraft:plains");
  if (deep) {
    out.text("minecraft:lush_caves");
    const biomes = Array.from({ length: 64 }, (_, i) => ((i >> 3) + (rand() < 0.2 ? 1 : 0)) & 1);
    out.longs("data", pack(biomes, 1));
  }
  out.end();
  const top = Math.max(...c.heights);
  const sectionTop = (s - 4) * 16 + 15;
  if (sectionTop >= top - 16) out.bytes("SkyLight", skyLight(c, s));
  if (palette.includes(B.lava)) out.bytes("BlockLight", blockLight(ids));
  out.end();
}

/** Light levels of a section's 4096 blocks, two to a byte, low nibble first, as the game stores them. */
function nibbles(levels: Uint8Array): Uint8Array {
  const light = new Uint8Array(2048);
  for (let i = 0; i < 2048; i++) light[i] = ((levels[2 * i] as number) & 15) | ((levels[2 * i + 1] as number) << 4);
  return light;
}

/** 15 above the surface, fading below it. */
function skyLight(c: ChunkBlocks, s: number): Uint8Array {
  const levels = new Uint8Array(4096);
  for (let i = 0; i < 4096; i++) {
    const y = (s - 4) * 16 + (i >> 8);
    const h = c.heights[i & 255] as number;
    levels[i] = y > h ? 15 : Math.max(0, 14 - 2 * (h - y));
  }
  return nibbles(levels);
}

/** 15 at lava, 14 and 13 beside it along x. */
function blockLight(ids: Uint8Array): Uint8Array {
  const levels = new Uint8Array(4096);
  for (let i = 0; i < 4096; i++) {
    if (ids[i] !== B.lava) continue;
    levels[i] = 15;
    for (const [d, level] of [
      [1, 14],
      [2, 13],
    ] as const) {
      if ((i & 15) + d < 16) levels[i + d] = Math.max(levels[i + d] as number, level);
      if ((i & 15) - d >= 0) levels[i - d] = Math.max(levels[i - d] as number, level);
    }
  }
  return nibbles(levels);
}

const ITEMS = ["torch", "bread", "iron_ingot", "oak_planks", "cobblestone", "coal", "diamond", "arrow", "string"];

/** A chest with a few stacks, as a player's base or a structure has them. */
function chest(out: NbtWriter, p: [number, number, number], rand: () => number): void {
  out.string("id", "minecraft:chest").ints({ x: p[0], y: p[1], z: p[2] }).byte("keepPacked", 0);
  const items = 3 + Math.floor(rand() * 10);
  out.list("Items", TAG_COMPOUND, items);
  for (let i = 0; i < items; i++) {
    out.byte("Slot", i * 2).string("id", `minecraft:${ITEMS[Math.floor(rand() * ITEMS.length)]}`);
    out.int("count", 1 + Math.floor(rand() * 64));
    out.end();
  }
  out.end();
}

/** The chunk's NBT, uncompressed, as a 1.21 server saves a full chunk. */
function generatedChunk(out: NbtWriter, cx: number, cz: number, rand: () => number): Buffer {
  const c = terrain(cx, cz, rand);
  decorate(c, rand);
  out.compound("").ints({ DataVersion: 3953, xPos: cx, zPos: cz, yPos: -4 });
  out.string("Status", "minecraft:full");
  out.long("LastUpdate", 1_000_000 + Math.floor(rand() * 1e6));
  out.long("InhabitedTime", Math.floor(rand() * 50_000));
  out.byte("isLightOn", 1);
  out.list("sections", TAG_COMPOUND, 24);
  for (let s = 0; s < 24; s++) section(out, c, s, rand);
  out.compound("Heightmaps");
  const heights = Array.from(c.heights, (h) => h + 65);
  for (const name of ["MOTION_BLOCKING", "MOTION_BLOCKING_NO_LEAVES", "OCEAN_FLOOR", "WORLD_SURFACE"]) {
    out.longs(name, pack(name === "OCEAN_FLOOR" ? heights.map((h) => h - 1) : heights, 9));
  }
  out.end();
  const chests = rand() < 0.3 ? 1 + Math.floor(rand() * 3) : 0;
  out.list("block_entities", TAG_COMPOUND, chests);
  for (let i = 0; i < chests; i++) chest(out, [cx * 16 + i, 40, cz * 16 + i], rand);
  const ticks = Math.floor(rand() * 6);
  out.list("fluid_ticks", TAG_COMPOUND, ticks);
  for (let i = 0; i < ticks; i++) {
    out.string("i", "minecraft:water");
    out.ints({ p: 0, t: 1 + i, x: cx * 16 + i, y: 62, z: cz * 16 });
    out.end();
  }
  out.list("block_ticks", TAG_COMPOUND, 0).list("PostProcessing", TAG_LIST, 24);
  for (let s = 0; s < 24; s++) out.u8(0).i32(0); // an empty list of shorts per section, as TAG_End
  out.compound("structures").compound("References").end().compound("starts").end().end();
  return out.end().take();
}

/**
 * A full region file (1024 chunks, zlib at the game's level, 6) of generated chunks. zlib runs on libuv's threads
 * while this one makes the next chunks.
 */
async function generatedRegion(rx: number, rz: number): Promise<Buffer> {
  const out = new NbtWriter();
  const rand = prng(SEED ^ (rx * 7919 + rz * 104729));
  const deflating: Array<Promise<Buffer>> = [];
  for (let index = 0; index < 1024; index++) {
    deflating.push(deflateAsync(generatedChunk(out, rx * 32 + (index & 31), rz * 32 + (index >> 5), rand)));
  }
  const header = Buffer.alloc(8192);
  const sectors: Buffer[] = [header];
  let next = 2;
  for (const [index, payload] of (await Promise.all(deflating)).entries()) {
    const count = Math.ceil((payload.length + 5) / 4096);
    const chunk = Buffer.alloc(count * 4096);
    chunk.writeUInt32BE(payload.length + 1, 0);
    chunk[4] = 2;
    payload.copy(chunk, 5);
    header.writeUInt32BE(((next << 8) | count) >>> 0, index * 4);
    header.writeUInt32BE(1_700_000_000 + index, 4096 + index * 4);
    sectors.push(chunk);
    next += count;
  }
  return Buffer.concat(sectors);
}

// ---------------------------------------------------------------------------------------------------------------
// 1. NBT validation throughput
// ---------------------------------------------------------------------------------------------------------------

/** The zlib payloads of every chunk of the given region files (relative to `dir`). */
function zlibPayloads(dir: string, regionFiles: string[]): Buffer[] {
  const payloads: Buffer[] = [];
  for (const rel of regionFiles) {
    const data = readFileSync(join(dir, rel));
    for (let index = 0; index < 1024; index++) {
      const entry = data.readUInt32BE(index * 4);
      if (entry === 0) continue;
      const start = (entry >>> 8) * 4096;
      const length = data.readUInt32BE(start);
      if (data[start + 4] !== 2) continue; // the bench worlds are zlib; an external chunk (0x82) has no payload here
      payloads.push(data.subarray(start + 5, start + 4 + length));
    }
  }
  return payloads;
}

function elapsedMs(fn: () => void): number {
  const started = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/**
 * Over the same chunks, interleaved: inflateSync of every payload (the anchor), the validator over every chunk inflated
 * beforehand, and both one chunk after the other (what a checker thread does, the chunk still in the cache). The first
 * pass, which inflates the chunks kept and checks each is valid, warms both up.
 */
function timeNbt(payloads: Buffer[], rounds: number) {
  const inflated = payloads.map((p) => inflateSync(p));
  for (const [i, b] of inflated.entries()) {
    const problem = walkNbt(b);
    if (problem !== undefined) throw new Error(`walkNbt refuses chunk ${i}: ${problem}`);
  }
  const times = { inflate: [] as number[], walk: [] as number[], both: [] as number[] };
  let refused = 0;
  for (let round = 0; round < rounds; round++) {
    times.inflate.push(
      elapsedMs(() => {
        for (const p of payloads) inflateSync(p);
      }),
    );
    times.walk.push(
      elapsedMs(() => {
        for (const b of inflated) if (walkNbt(b) !== undefined) refused++;
      }),
    );
    times.both.push(
      elapsedMs(() => {
        for (const p of payloads) if (walkNbt(inflateSync(p)) !== undefined) refused++;
      }),
    );
  }
  if (refused) throw new Error(`walkNbt refused ${refused} chunks it had passed`);
  return {
    bytes: inflated.reduce((sum, b) => sum + b.length, 0),
    inflate: median(times.inflate),
    walk: median(times.walk),
    both: median(times.both),
  };
}

function benchNbt(label: string, payloads: Buffer[], rounds: number): void {
  const { bytes, inflate, walk, both } = timeNbt(payloads, rounds);
  const compressed = payloads.reduce((sum, b) => sum + b.length, 0);
  const mbps = (ms: number) => `${(bytes / 1e6 / (ms / 1000)).toFixed(0).padStart(5)} MB/s`;
  const ms = (t: number) => fmt(t).padStart(10);
  console.log(
    `  ${label}: ${payloads.length} chunks, ${(compressed / MiB).toFixed(1)} MiB zlib -> ${(bytes / MiB).toFixed(1)} MiB NBT, inflated/compressed ${(bytes / compressed).toFixed(2)}x, ${(bytes / payloads.length / 1024).toFixed(1)} KiB a chunk`,
  );
  console.log(`    zlib.inflateSync alone        ${ms(inflate)}   ${mbps(inflate)}`);
  console.log(
    `    NBT validator alone           ${ms(walk)}   ${mbps(walk)}   ratio ${ratio(walk, inflate)} of inflate's time (target >= 300 MB/s)`,
  );
  console.log(`    inflate, then validate        ${ms(both)}   ${mbps(both)}   ratio ${ratio(both, inflate)}`);
}

/** `sets`: a label, a directory, its region files. */
async function benchNbtThroughput(sets: Array<[string, string, string[]]>, rounds = 3): Promise<void> {
  console.log(`NBT validation throughput: walkNbt of nbt-walk.ts, ${rounds} rounds, medians, MB/s of inflated NBT`);
  for (const [label, dir, files] of sets) benchNbt(label, zlibPayloads(dir, files), rounds);
}

// ---------------------------------------------------------------------------------------------------------------
// 2 and 3. backup drill against restic restore alone
// ---------------------------------------------------------------------------------------------------------------

/** `restic restore` alone, then `backup drill`, `rounds` times (after `warmup` of each); medians. */
async function drillRounds(repo: Repo, rounds: number, warmup: number, extra: NodeJS.ProcessEnv = {}) {
  const restoreMs: number[] = [];
  const drillMs: number[] = [];
  for (let round = 0; round < rounds + warmup; round++) {
    const target = join(repo.root, `restore-${round}`);
    const restic = { ...repo.restic, ...extra };
    const plain = await run("restic", ["restore", repo.snapshot, "--target", target, ...repo.includes], restic);
    rmSync(target, { recursive: true, force: true });
    const drill = await run(BACKUP_BIN, ["drill", repo.snapshot], { ...repo.env, ...extra });
    if (round < warmup) continue; // the page cache and restic's own cache
    restoreMs.push(plain.ms);
    drillMs.push(drill.ms);
  }
  const records = readRecords({ stateDir: join(repo.root, "state"), logDir: join(repo.root, "log") }, "backup");
  const drilled = lastDrill(records);
  const chunks = drilled?.type === "drill.done" ? drilled.chunks : 0;
  return { restore: median(restoreMs), drill: median(drillMs), chunks };
}

/**
 * The drill against `restic restore` with Debian 12's restic (0.14: the check starts once the restore has ended) and
 * Debian 13's (0.18: each region file is checked as restic reports it restored), side by side, on the same repository
 * (made by the system's restic; format 2 opens in both). Each pair's restic and rclone come first in PATH.
 */
async function benchLocal(repo: Repo, rounds: number): Promise<void> {
  const results = [];
  for (const pair of benchPairs()) {
    const path = { PATH: `${pair.dir}:${process.env.PATH}` };
    results.push({ pair, ...(await drillRounds(repo, rounds, 1, path)) });
  }
  console.log(
    `backup drill of testkit's generated ${describeRepo(repo)}, local rclone remote, ${rounds} rounds, medians`,
  );
  const column = (text: string) => text.padEnd(30);
  console.log(
    `  ${column("")}${results.map((r) => column(`restic ${r.pair.restic} (Debian ${r.pair.debian})`)).join("")}`,
  );
  console.log(`  ${column("restic restore alone")}${results.map((r) => column(fmt(r.restore))).join("")}`);
  console.log(`  ${column("backup drill")}${results.map((r) => column(fmt(r.drill))).join("")}`);
  console.log(`  ${column("ratio (target <= 4x)")}${results.map((r) => column(ratio(r.drill, r.restore))).join("")}`);
  for (const { pair, drill, restore, chunks } of results) {
    console.log(
      `  restic ${pair.restic}: ${chunks} chunks checked, ${Math.round(chunks / (drill / 1000))} chunks/s over the whole drill, ${Math.round(chunks / ((drill - restore) / 1000))} chunks/s in the time it adds to the restore`,
    );
  }
}

/**
 * Restore and drill both with RCLONE_BWLIMIT in their environment (rclone reads it for --bwlimit; restic starts
 * `rclone serve restic --stdio` with its own environment, and the backup tool hands restic its). The warm-up round
 * runs both without the limit: what the limit adds to each shows it reached both, and either one faster than the
 * repository at that speed says it did not.
 */
async function benchLimited(repo: Repo, rounds: number): Promise<void> {
  const floor = (repo.repoBytes / BWLIMIT_BYTES) * 1000;
  console.log(
    `backup drill of a ${describeRepo(repo)} of generated 1.18+ chunks, rclone remote limited to 20 MiB/s (RCLONE_BWLIMIT=${BWLIMIT}), ${rounds} rounds, medians`,
  );
  console.log(`  the repository at 20 MiB/s    ${fmt(floor)}`);
  for (const pair of benchPairs()) {
    const path = { PATH: `${pair.dir}:${process.env.PATH}` };
    const free = await drillRounds(repo, 1, 0, path);
    const { restore, drill, chunks } = await drillRounds(repo, rounds, 0, { ...path, RCLONE_BWLIMIT: BWLIMIT });
    const added = (ms: number, before: number) =>
      `(+${fmt(ms - before)} by the limit${ms < floor * 0.9 ? "; FASTER than the limit allows: it did not apply" : ""})`;
    console.log(`  restic ${pair.restic} (Debian ${pair.debian})`);
    console.log(`    without the limit (warm-up) restic restore ${fmt(free.restore)}, backup drill ${fmt(free.drill)}`);
    console.log(`    restic restore alone        ${fmt(restore)}   ${added(restore, free.restore)}`);
    console.log(
      `    backup drill                ${fmt(drill)}   ratio ${ratio(drill, restore)} (target <= 1.3x)   ${added(drill, free.drill)}`,
    );
    console.log(`    chunks checked ${chunks}: ${Math.round(chunks / (drill / 1000))} chunks/s over the whole drill`);
  }
}

/** Debian 12's restic (0.14) and Debian 13's (0.18), on the same repository. */
function benchPairs() {
  return resticVersions().filter((pair) => pair.debian === 12 || pair.debian === 13);
}

export async function benchDrill(size = 300, rounds = 3, limitedSize = 100, limitedRounds = 2): Promise<void> {
  // Backed up by the newest restic: its snapshots keep the backup's summary, which restic 0.17+ drills read; restic
  // 0.14 opens the same repository (format 2) and reads past it.
  const newest = { PATH: `${benchPairs().at(-1)?.dir}:${process.env.PATH}` };
  const local = await backedUp("drill", (dir) => makeWorld(dir, size), newest);
  let limited: Repo | undefined;
  try {
    limited = await backedUp("drill-limited", (dir) => makeGeneratedWorld(dir, limitedSize), newest);
    const generated = limited.world.regionFiles.filter((file) => file.startsWith("world/region/"));
    await benchNbtThroughput([
      ["testkit's world (16 chunk bodies, random light and block data)", local.worldDir, local.world.regionFiles],
      ["generated 1.18+ chunks (palettes, light, block entities)", limited.worldDir, generated],
    ]);
    console.log("");
    await benchLocal(local, rounds);
    console.log("");
    await benchLimited(limited, limitedRounds);
  } finally {
    await closeRepo(local);
    if (limited) await closeRepo(limited);
  }
}
