import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readRange } from "@mcops/core/volume";
import type nbt from "prismarine-nbt";
import { MAX_SMALL_FILE } from "../world.ts";
import {
  checkPayload,
  chunkPrefix,
  HEADER_BYTES,
  type Location,
  MAX_CHUNK_BYTES,
  parseGzipNbt,
  readLocations,
  SECTOR,
} from "./region.ts";

/**
 * What the game reads of a restored world, checked (issue 16): level.dat, every region file of every dimension with
 * each present chunk decompressed and parsed, and the players' files. The tree comes from a snapshot of a volume the
 * game's user writes: it is walked without following a link, only regular files are opened (never a FIFO or a
 * device, never blocking), and every read is a bounded range.
 */
export interface WorldCheckOptions {
  /** The world's folders present in the restored tree: the level's first, then its `_nether` and `_the_end`. */
  worlds: readonly string[];
  /** Every chunk is checked for this long; after that every header still is, and one chunk in SAMPLE_EVERY. */
  budgetMs: number;
  now: () => number;
  signal?: AbortSignal | undefined;
}

export interface Damage {
  /** Relative to the restored WORLD_DIR: `world/region/r.0.0.mca`. */
  file: string;
  reason: string;
}

export interface WorldCheckReport {
  /** Files checked: level.dat, region files, external chunks, players. */
  files: number;
  /** Chunks decompressed and parsed. */
  chunks: number;
  /** Chunks the region headers list. */
  chunksPresent: number;
  /** The budget ran out and the rest of the chunks were sampled. */
  sampled: boolean;
  levelName: string | undefined;
  dataVersion: number | undefined;
  /** The damaged files, the first reason of each (at most MAX_DAMAGE). */
  damage: Damage[];
}

const SAMPLE_EVERY = 16;
const MAX_DAMAGE = 50;
/** Chunks in flight: their zlib runs on libuv's threads while this thread parses the NBT of the ones done. */
const IN_FLIGHT = 4;
const REGION_NAME = /^r\.(-?\d+)\.(-?\d+)\.mca$/;

/** One check, as its steps share it. */
class Check {
  readonly report: WorldCheckReport = {
    files: 0,
    chunks: 0,
    chunksPresent: 0,
    sampled: false,
    levelName: undefined,
    dataVersion: undefined,
    damage: [],
  };
  readonly #options: WorldCheckOptions;
  readonly #started: number;
  #seen = 0;

  constructor(options: WorldCheckOptions) {
    this.#options = options;
    this.#started = options.now();
  }

  damaged(file: string, reason: string): void {
    if (this.report.damage.length < MAX_DAMAGE) this.report.damage.push({ file, reason });
  }

  /** Whether this chunk is checked: all of them within the budget, one in SAMPLE_EVERY after it. */
  takes(): boolean {
    this.#seen++;
    if (this.#options.now() - this.#started <= this.#options.budgetMs) return true;
    if (this.#seen % SAMPLE_EVERY === 0) return true;
    this.report.sampled = true;
    return false;
  }

  stopIfAborted(): void {
    const { signal } = this.#options;
    if (signal?.aborted) throw new Error(`interrupted by ${String(signal.reason)}`);
  }
}

export async function checkWorld(root: string, options: WorldCheckOptions): Promise<WorldCheckReport> {
  const check = new Check(options);
  const [level] = options.worlds;
  if (level) await checkLevelDat(check, root, level);
  for (const world of options.worlds) {
    for (const dimension of dimensionsOf(root, world)) {
      for (const kind of ["region", "entities", "poi"]) await checkRegionDir(check, root, join(dimension, kind));
    }
    await checkPlayers(check, root, join(world, "playerdata"));
  }
  return check.report;
}

/** A world folder's dimensions: the folder itself, DIM-1 and DIM1 inside it, and datapacks' dimensions/<ns>/<name>. */
function dimensionsOf(root: string, world: string): string[] {
  const found = [world];
  for (const name of ["DIM-1", "DIM1"]) if (isDirectory(root, join(world, name))) found.push(join(world, name));
  for (const namespace of directories(root, join(world, "dimensions"))) {
    for (const name of directories(root, join(world, "dimensions", namespace))) {
      found.push(join(world, "dimensions", namespace, name));
    }
  }
  return found;
}

async function checkLevelDat(check: Check, root: string, level: string): Promise<void> {
  const file = join(level, "level.dat");
  const data = readSmallFile(check, root, file, "level.dat is missing");
  if (!data) return;
  const parsed = await parseGzipNbt(data);
  if ("problem" in parsed) return check.damaged(file, parsed.problem);
  const fields = (parsed.value.value.Data as nbt.Compound | undefined)?.value;
  const levelName = fields?.LevelName?.value;
  const dataVersion = fields?.DataVersion?.value;
  if (typeof levelName !== "string") return check.damaged(file, "has no Data.LevelName");
  if (typeof dataVersion !== "number") return check.damaged(file, "has no Data.DataVersion");
  Object.assign(check.report, { levelName, dataVersion });
}

async function checkPlayers(check: Check, root: string, dir: string): Promise<void> {
  for (const entry of entries(root, dir)) {
    if (!entry.name.endsWith(".dat")) continue;
    check.stopIfAborted();
    const file = join(dir, entry.name);
    const data = readSmallFile(check, root, file);
    if (!data) continue;
    const parsed = await parseGzipNbt(data);
    if ("problem" in parsed) check.damaged(file, parsed.problem);
  }
}

async function checkRegionDir(check: Check, root: string, dir: string): Promise<void> {
  for (const entry of entries(root, dir)) {
    const name = REGION_NAME.exec(entry.name);
    if (!name) continue;
    check.stopIfAborted();
    const file = join(dir, entry.name);
    if (!entry.isFile()) {
      check.damaged(file, `is ${kind(entry)}, not a region file`);
      continue;
    }
    const region = { file, dir, x: Number(name[1]), z: Number(name[2]) };
    const reason = await withFile(root, file, (fd, size) => checkRegion(check, root, region, fd, size));
    if (reason) check.damaged(file, reason);
  }
}

interface Region {
  file: string;
  dir: string;
  x: number;
  z: number;
}

/** The region file's header, then its chunks, a few in flight; the first reason it is damaged. */
async function checkRegion(
  check: Check,
  root: string,
  region: Region,
  fd: number,
  size: number,
): Promise<string | undefined> {
  check.report.files++;
  if (size === 0) return undefined; // the game makes empty region files and reads them as empty
  if (size < HEADER_BYTES) return `truncated: ${size} bytes, shorter than the 8 KiB header`;
  if (size % SECTOR !== 0) return `truncated: ${size} bytes, not a multiple of 4096`;
  const header = readLocations(readRange(fd, 0, HEADER_BYTES), size);
  if ("problem" in header) return header.problem;
  check.report.chunksPresent += header.locations.length;
  let problem: string | undefined;
  const inFlight = new Set<Promise<void>>();
  for (const location of header.locations) {
    if (problem) break;
    check.stopIfAborted();
    if (!check.takes()) continue;
    const task = checkChunk(check, root, region, fd, location).then((reason) => {
      problem ??= reason;
    });
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return problem;
}

async function checkChunk(
  check: Check,
  root: string,
  region: Region,
  fd: number,
  location: Location,
): Promise<string | undefined> {
  const x = region.x * 32 + (location.index & 31);
  const z = region.z * 32 + (location.index >> 5);
  const at = `chunk ${x},${z}`;
  const bytes = readRange(fd, location.sector * SECTOR, location.count * SECTOR);
  const prefix = chunkPrefix(bytes, location);
  if ("problem" in prefix) return `${at}: ${prefix.problem}`;
  let payload = bytes.subarray(5, 4 + prefix.length);
  if (prefix.external) {
    const external = join(region.dir, `c.${x}.${z}.mcc`);
    const data = readBoundedFile(root, external, MAX_CHUNK_BYTES);
    if (typeof data === "string") return `${at}: its ${external}: ${data}`;
    check.report.files++;
    payload = data;
  }
  const reason = await checkPayload(payload, prefix.compression);
  check.report.chunks++;
  return reason === undefined ? undefined : `${at}: ${reason}`;
}

/** A small file's bytes, or undefined after recording why it cannot be read (`missing`: what to say when it is absent). */
function readSmallFile(check: Check, root: string, file: string, missing?: string): Buffer | undefined {
  const data = readBoundedFile(root, file, MAX_SMALL_FILE);
  if (typeof data === "string") {
    if (data !== "missing" || missing) check.damaged(file, data === "missing" ? (missing as string) : data);
    return undefined;
  }
  check.report.files++;
  return data;
}

/** A regular file of at most `max` bytes, whole; otherwise why not ("missing" when it is not there). */
function readBoundedFile(root: string, file: string, max: number): Buffer | string {
  const opened = openRegular(root, file);
  if (typeof opened === "string") return opened;
  try {
    return opened.size > max
      ? `${opened.size} bytes, more than this file can be`
      : readRange(opened.fd, 0, opened.size);
  } finally {
    closeSync(opened.fd);
  }
}

async function withFile<T>(
  root: string,
  file: string,
  use: (fd: number, size: number) => Promise<T>,
): Promise<T | string> {
  const opened = openRegular(root, file);
  if (typeof opened === "string") return opened;
  try {
    return await use(opened.fd, opened.size);
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * Opens `file` below `root` without following a link at its end (the directories on the way were listed, not
 * followed, and the scratch directory is root's alone) and without blocking on a FIFO; anything but a regular file
 * is a reason, not a read ("missing" when there is nothing).
 */
function openRegular(root: string, file: string): { fd: number; size: number } | string {
  let fd: number;
  try {
    fd = openSync(join(root, file), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    if (code === "ELOOP") return "is a symbolic link, not a file";
    if (code === "ENXIO") return "is a socket or FIFO, not a file";
    throw error;
  }
  const stat = fstatSync(fd);
  if (stat.isFile()) return { fd, size: stat.size };
  closeSync(fd);
  return "is not a regular file";
}

/** A directory's entries (none when it is not a directory: a link to one is not followed). */
function entries(root: string, dir: string): Dirent[] {
  try {
    return readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}

function directories(root: string, dir: string): string[] {
  return entries(root, dir)
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** Whether `dir` below `root` is a directory itself (lstat: a link to one is not). */
function isDirectory(root: string, dir: string): boolean {
  const parent = dir.split("/").slice(0, -1).join("/");
  const name = dir.split("/").at(-1);
  return entries(root, parent).some((entry) => entry.name === name && entry.isDirectory());
}

function kind(entry: Dirent): string {
  if (entry.isSymbolicLink()) return "a symbolic link";
  if (entry.isFIFO()) return "a FIFO";
  if (entry.isDirectory()) return "a directory";
  return "not a regular file";
}
