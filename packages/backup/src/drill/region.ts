import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { gunzipSync, inflateSync } from "node:zlib";
import { isErrno } from "@mcops/core/fs";
import { readRange } from "@mcops/core/volume";
import { type NbtField, readNbtFields, TAG } from "@mcops/world/nbt-walk";
import {
  HEADER_BYTES,
  headerEntries,
  headerOf,
  type Location,
  MAX_CHUNK_STREAM,
  SECTOR,
  spigotSpan,
  truncatedHeader,
} from "../region-file.ts";
import { decompressLz4Blocks } from "./lz4-block.ts";

/**
 * The Anvil region format as the game reads it (net.minecraft.world.level.chunk.storage.RegionFile): an 8 KiB header
 * of 1024 big-endian locations (the chunk's first 4 KiB sector << 8 | its sector count) and 1024 timestamps, then the
 * chunks, each a big-endian length (the bytes that follow, the compression byte included), a compression byte
 * (1 gzip, 2 zlib, 3 none, 4 LZ4; with 0x80 set the payload is in `c.<x>.<z>.mcc` beside the region file), the
 * payload.
 *
 * The game pads the file to whole sectors only when it closes it: a file saved while the server runs (every backup)
 * or after a kill ends inside its last sector, and the game reads it whole. So this reads as the game does: a chunk is
 * damaged when its header entry is one the game drops (into the header, no sectors, starting past the end of the
 * file), or when the bytes at its sectors cannot hold what its length declares; never for the file's size alone,
 * except a file cut inside its header (region-file.ts's truncatedHeader: no chunk of it can be read).
 *
 * Each chunk inflated is also checked against the slot it sits in: a terrain chunk's own position (1.18+ the root
 * `xPos`/`zPos`, before `Level.xPos`/`Level.zPos`) and an entities chunk's (the root `Position`, [x, z]) must be the
 * chunk coordinates of its header entry. The game reads a chunk by its slot and takes whatever is there: its
 * ChunkSerializer logs "Chunk file at {} is in the wrong location; relocating. (Expected {}, got {})" and loads that
 * data as the slot's chunk (before 1.14, AnvilChunkLoader rewrites xPos/zPos to the slot and loads it); its
 * EntityStorage logs "Chunk file at {} is in the wrong location. (Expected {}, got {})" and loads those entities with
 * the slot's chunk. Either way the slot's own chunk is lost, and another's shows where it does not belong. poi/ chunks
 * carry no position. A chunk without one (no game writes it) is not compared: nothing says where else it belongs.
 */
/** A chunk decompresses to at most this much: vanilla's biggest chunks are a few MiB. */
const MAX_CHUNK_BYTES = 64 * 1024 * 1024;
/** A region file up to this size is read in one go; a larger one chunk by chunk. */
const READ_WHOLE = 32 * 1024 * 1024;
/**
 * When sampling, one chunk in this many is decompressed and walked; every header entry is still checked. (Players'
 * files are sampled alike: world-check.ts.)
 */
export const SAMPLE_EVERY = 16;

export interface RegionJob {
  /** Region coordinates, from the file's name `r.<x>.<z>.mca`. */
  x: number;
  z: number;
  /** Decompress and walk one chunk in SAMPLE_EVERY only. */
  sample: boolean;
  /**
   * A terrain chunk (region/): the game skips one without level data (no `Status`, no `Level`) and makes it anew; its
   * `xPos`/`zPos` (`Level.xPos`/`Level.zPos` before 1.18) must be its slot's.
   */
  terrain?: boolean | undefined;
  /** An entities chunk (entities/, 1.17+): its `Position` [x, z] must be its slot's. */
  entities?: boolean | undefined;
  /**
   * When the time budget runs out (Date.now()): from then on one chunk in SAMPLE_EVERY, whatever file this is; from
   * `stopAt` on, the header only. A file built to be slow (1024 entries on a chunk that inflates to 64 MiB) cannot
   * hold the drill, and the backup lock with it, past the budget.
   */
  sampleAt?: number | undefined;
  stopAt?: number | undefined;
}

export interface RegionResult {
  /** Chunks the header lists. */
  present: number;
  /** Chunks decompressed and walked. */
  checked: number;
  /** External chunk files read. */
  externals: number;
  /** Some chunks were not inflated: sampled, or the budget ran out twice over. */
  sampled: boolean;
  /** Payloads inflated and walked: fewer than `checked` when entries share their sectors. */
  inflated: number;
  /** The first reason the file is damaged. */
  damage?: string | undefined;
}

/** Opens `c.<x>.<z>.mcc` beside the region file without following a link: its descriptor, or why not. */
export type OpenExternal = (name: string) => { fd: number; size: number } | string;

/** Checks the region file open at `fd` (`size` bytes) as the game would read it. */
export function checkRegionFile(fd: number, size: number, job: RegionJob, openExternal: OpenExternal): RegionResult {
  const result: RegionResult = { present: 0, checked: 0, externals: 0, sampled: false, inflated: 0 };
  if (size === 0) return result; // the game makes empty region files and reads them as empty
  // A non-empty file shorter than its header holds no chunk the game can read, whatever entries survive the cut.
  const truncated = truncatedHeader(size);
  if (truncated) return { ...result, damage: truncated };
  const whole = size <= READ_WHOLE ? readRange(fd, 0, size) : undefined;
  const header = headerOf(whole ? whole.subarray(0, HEADER_BYTES) : readRange(fd, 0, HEADER_BYTES));
  const locations = headerEntries(header, size, job);
  // The first entry the game would drop (losing that chunk) is damage.
  if (locations.dropped[0]) return { ...result, damage: locations.dropped[0].problem };
  result.present = locations.list.length;
  // Entries that share a sector share their bytes: inflated and walked once (the game reads each; the result is one),
  // and each entry's slot compared with the position they hold.
  const payloads = new Map<number, PayloadRead>();
  for (const [n, location] of locations.list.entries()) {
    const now = job.sampleAt === undefined && job.stopAt === undefined ? 0 : Date.now();
    const sample = job.sample || (job.sampleAt !== undefined && now >= job.sampleAt);
    if ((sample && n % SAMPLE_EVERY !== 0) || (job.stopAt !== undefined && now >= job.stopAt)) {
      result.sampled = true;
      continue;
    }
    const start = location.sector * SECTOR;
    const head = whole ? whole.subarray(start, start + 4) : readRange(fd, start, 4);
    const length = Math.min(spanOf(location, head), size - start);
    const bytes = whole ? whole.subarray(start, start + length) : readRange(fd, start, length);
    const reason = checkChunk(bytes, location, openExternal, result, payloads, kindOf(job));
    if (reason) return { ...result, damage: `chunk ${location.x},${location.z}: ${reason}` };
    result.checked++;
  }
  return result;
}

/**
 * The bytes the game reads of a chunk from its first sector (`head`: the 4 bytes of its length, fewer at the end of
 * the file): its sectors, or as far as its length says where Spigot and Paper read it so (region-file.ts's
 * spigotSpan) — up to MAX_CHUNK_STREAM, past which a chunk is damage as vanilla reads it (and the area restore does
 * not carry it).
 */
function spanOf(location: Location, head: Buffer): number {
  const sectors = location.count * SECTOR;
  const spigot = head.length < 4 ? undefined : spigotSpan(location.count, head.readInt32BE(0));
  return spigot !== undefined && spigot <= MAX_CHUNK_STREAM ? spigot : sectors;
}

const NAMES: Record<number, string> = { 1: "gzip", 2: "zlib", 3: "uncompressed", 4: "LZ4" };

/** What a region folder's chunks are, for what is checked of them: terrain (region/), entities, or poi and others. */
type ChunkKind = "terrain" | "entities" | "other";

const kindOf = (job: RegionJob): ChunkKind => (job.terrain ? "terrain" : job.entities ? "entities" : "other");

/** A chunk's own position, and the fields that gave it (for the message). */
interface ChunkPosition {
  x: number;
  z: number;
  field: string;
}

/** What one payload gave: why it would not load, or the position it says it is at (undefined: none). */
interface PayloadRead {
  reason?: string | undefined;
  position?: ChunkPosition | undefined;
}

/** Why the chunk in `bytes` (its sectors, as far as the file has them) would not load; undefined when it would. */
function checkChunk(
  bytes: Buffer,
  location: Location,
  openExternal: OpenExternal,
  result: RegionResult,
  payloads: Map<number, PayloadRead>,
  kind: ChunkKind,
): string | undefined {
  if (bytes.length < 5) return `truncated: ${bytes.length} bytes where its length and compression should be`;
  const length = bytes.readInt32BE(0);
  const version = bytes[4] as number;
  if (length === 0) return "allocated, but its data is missing (length 0)";
  let payload: Buffer;
  if ((version & 0x80) !== 0) {
    // The game reads the external file whatever the region file holds after the compression byte.
    const external = readExternal(openExternal, `c.${location.x}.${location.z}.mcc`);
    if (typeof external === "string") return external;
    result.externals++;
    payload = external;
  } else {
    if (length < 0) return `its length is negative (${length})`;
    if (length - 1 > bytes.length - 5) {
      return `truncated: its length says ${length - 1} bytes, the file has ${bytes.length - 5}`;
    }
    payload = bytes.subarray(5, 4 + length);
    const known = payloads.get(location.sector);
    if (known) return known.reason ?? misplaced(location, known.position);
  }
  const read = checkPayload(payload, version & 0x7f, kind);
  result.inflated++;
  if ((version & 0x80) === 0) payloads.set(location.sector, read);
  return read.reason ?? misplaced(location, read.position);
}

/** Why a chunk whose data says it is at `position` is lost where it sits; undefined when it sits in its own slot. */
function misplaced(location: Location, position: ChunkPosition | undefined): string | undefined {
  if (!position || (position.x === location.x && position.z === location.z)) return undefined;
  const own = `${location.x},${location.z}`;
  return `holds chunk ${position.x},${position.z}'s data (its ${position.field}): the game would load that there and ${own}'s own is lost`;
}

function readExternal(openExternal: OpenExternal, name: string): Buffer | string {
  const opened = openExternal(name);
  if (typeof opened === "string") return `its ${name}: ${opened}`;
  try {
    if (opened.size > MAX_CHUNK_BYTES) return `its ${name}: ${opened.size} bytes, more than a chunk can be`;
    return readRange(opened.fd, 0, opened.size);
  } finally {
    closeSync(opened.fd);
  }
}

/** The fields a chunk's position is read from, by kind. */
const WANTED: Record<ChunkKind, string[][]> = {
  terrain: [["xPos"], ["zPos"], ["Level", "xPos"], ["Level", "zPos"]],
  entities: [["Position"]],
  other: [],
};

type Fields = ReadonlyMap<string, NbtField>;

/**
 * A coordinate as the game's CompoundTag.getInt reads it: any number tag (a byte, a short, an int; a long cut to its
 * low 32 bits; a float or a double rounded down, Mth.floor); undefined for what it reads as 0 (no such field, another
 * type), which is not compared: nothing says where such a chunk belongs.
 */
function asInt(value: NbtField | undefined): number | undefined {
  if (typeof value === "bigint") return Number(BigInt.asIntN(32, value));
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const floor = Math.floor(value);
  return floor >= -(2 ** 31) && floor < 2 ** 31 ? floor : undefined;
}

const ints = (x: NbtField | undefined, z: NbtField | undefined): [number, number] | undefined => {
  const [ix, iz] = [asInt(x), asInt(z)];
  return ix === undefined || iz === undefined ? undefined : [ix, iz];
};

/** Where a chunk says it is, by kind: the first of its fields that give both coordinates. */
const POSITIONS: Record<
  ChunkKind,
  ReadonlyArray<{ field: string; at: (fields: Fields, root: RootTypes) => [number, number] | undefined }>
> = {
  // A chunk of 1.18 on (a root Status) is read by its root xPos/zPos; an older one (a Level compound) by Level's only.
  terrain: [
    { field: "xPos/zPos", at: (f, root) => (isOld(root) ? undefined : ints(f.get("xPos"), f.get("zPos"))) },
    {
      field: "Level.xPos/zPos",
      at: (f, root) => (isOld(root) ? ints(f.get("Level.xPos"), f.get("Level.zPos")) : undefined),
    },
  ],
  entities: [
    {
      field: "Position",
      // EntityStorage reads the first two ints (a shorter array: "Failed to parse chunk {} position info").
      at: (f) => {
        const position = f.get("Position");
        return Array.isArray(position) && position.length >= 2 ? ints(position[0], position[1]) : undefined;
      },
    },
  ],
  other: [],
};

/** The root compound's entries by name and tag type (readNbtFields' rootTypes). */
type RootTypes = ReadonlyMap<string, number> | undefined;

/** A chunk from before 1.18: a Level compound and no root Status. */
const isOld = (root: RootTypes): boolean => root?.get("Level") === TAG.COMPOUND && root.get("Status") !== TAG.STRING;

/**
 * Decompresses a payload the way its compression byte says and walks it as NBT, reading its position on the way; the
 * reason when either fails, or when a terrain chunk has no level data (the game's ChunkMap skips it: "missing level
 * data" — 1.18+ chunks carry a root `Status`, older ones a `Level` compound).
 */
function checkPayload(payload: Buffer, compression: number, kind: ChunkKind): PayloadRead {
  const reason = (text: string): PayloadRead => ({ reason: text });
  const name = NAMES[compression];
  if (!name) return reason(`unknown compression type ${compression}`);
  let data: Buffer;
  try {
    if (compression === 1) data = gunzipSync(payload, { maxOutputLength: MAX_CHUNK_BYTES });
    else if (compression === 2) data = inflateSync(payload, { maxOutputLength: MAX_CHUNK_BYTES });
    else if (compression === 4) data = decompressLz4Blocks(payload, MAX_CHUNK_BYTES);
    else data = payload;
  } catch (error) {
    const why = isErrno(error, "ERR_BUFFER_TOO_LARGE") ? "it is over 64 MiB" : errorText(error);
    return reason(`${name} data does not decompress (${why})`);
  }
  const root = kind === "terrain" ? new Map<string, number>() : undefined;
  const read = readNbtFields(data, WANTED[kind], undefined, root);
  if ("problem" in read) return reason(`not NBT (${read.problem})`);
  if (root && root.get("Status") !== TAG.STRING && root.get("Level") !== TAG.COMPOUND) {
    return reason("has no level data (no Status, no Level): the game skips it and generates the chunk anew");
  }
  return { position: positionOf(read.fields, root, kind) };
}

/** The position a chunk's fields give (POSITIONS), or undefined: it is not compared. */
function positionOf(fields: Fields, root: RootTypes, kind: ChunkKind): ChunkPosition | undefined {
  for (const { field, at } of POSITIONS[kind]) {
    const position = at(fields, root);
    if (position) return { x: position[0], z: position[1], field };
  }
  return undefined;
}

/**
 * Opens `name` in the directory held by `dirFd` without following a link and without blocking: a regular file's
 * descriptor and size, or what is there instead ("missing" when nothing is).
 */
export function openRegularAt(dirFd: number, name: string): { fd: number; size: number } | string {
  let fd: number;
  try {
    fd = openSync(
      `/proc/self/fd/${dirFd}/${name}`,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
  } catch (error) {
    if (isErrno(error, "ENOENT")) return "missing";
    if (isErrno(error, "ELOOP")) return "is a symbolic link, not a file";
    if (isErrno(error, "ENXIO")) return "is a socket or FIFO, not a file";
    if (isErrno(error, "EAGAIN") || isErrno(error, "EWOULDBLOCK")) return "is held by a file lease, not opened";
    throw error;
  }
  const stat = fstatSync(fd);
  if (stat.isFile()) return { fd, size: stat.size };
  closeSync(fd);
  return stat.isFIFO()
    ? "is a FIFO, not a file"
    : stat.isDirectory()
      ? "is a directory, not a file"
      : "is not a regular file";
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]?.slice(0, 200) ?? "";
}
