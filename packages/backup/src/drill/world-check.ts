import { closeSync, lstatSync, type Stats } from "node:fs";
import { oneLine } from "@mcops/core/log";
import { kindOf, readRange, VolumeDir } from "@mcops/core/volume";
import { gunzipNbt, MAX_SMALL_FILE, readLevelDat } from "@mcops/world/level-dat";
import { walkNbt } from "@mcops/world/nbt-walk";
import {
  dimensionFolder,
  dimensionKey,
  isDimension,
  isFolderDimension,
  MAX_DIMENSION_DEPTH,
  REGION_FOLDERS,
} from "../dimensions.ts";
import { regionOfName } from "../region-file.ts";
import { CheckerPool, checkerEntry, threadsFor } from "./pool.ts";
import { openRegularAt, SAMPLE_EVERY } from "./region.ts";

/**
 * What the game reads of a restored world, checked (issues 16, 28 and 45): every level.dat (the level's, and each
 * Bukkit world's beside it), every region file of every dimension (dimensions.ts: the level's own, DIM<n> of any n,
 * datapacks' dimensions/<ns>/<path>, mods' named folders, Bukkit's `_nether`, `_the_end` and other worlds) with each
 * present chunk inflated and walked, and the players' files. The tree comes from a snapshot of a volume the
 * game's user writes, links included: it is walked through directory descriptors with O_NOFOLLOW at every level, a
 * link or anything else where a folder or file should be is damage by name, and only regular files are opened (never
 * blocking). Region files go to checker threads (pool.ts), one file at a time each, under a heap limit.
 */
export interface WorldCheckOptions {
  /** The world's folders in the restored tree (snapshotWorlds): the level's first, then its Bukkit worlds. */
  worlds: readonly string[];
  /**
   * The check's time budget: players' files are read whole for a quarter of it at most, and every chunk is checked for
   * the rest of it (three quarters at least, see PLAYERS_SHARE); past it, region files are sampled (every header still
   * whole).
   */
  budgetMs: number;
  now: () => number;
  signal?: AbortSignal | undefined;
  /**
   * Checker threads already started (the drill starts them while restic restores, so their start costs nothing);
   * the caller closes them. Without: started here, under DEFAULT_MEMORY_MIB.
   */
  pool?: CheckerPool | undefined;
}

export interface Damage {
  /** Relative to the restored WORLD_DIR: `world/region/r.0.0.mca`. */
  file: string;
  reason: string;
}

/** What one dimension holds: the chunks its region files' headers list. */
export interface DimensionCount {
  /** Where it is, relative to WORLD_DIR: `world/DIM-6`. */
  folder: string;
  chunks: number;
}

export interface WorldCheckReport {
  /** Files checked: level.dat, region files, external chunks, players. */
  files: number;
  /** Chunks inflated and walked. */
  chunks: number;
  /** Chunks the region headers list (region/, entities/ and poi/). */
  chunksPresent: number;
  /** The budget ran out and the rest of the chunks were sampled. */
  sampled: boolean;
  levelName: string | undefined;
  dataVersion: number | undefined;
  /** The terrain chunks (region/) of each dimension, by the name `backup restore --dimension` takes. */
  dimensions: Record<string, DimensionCount>;
  /** Players' files in the level's playerdata/. */
  players: number;
  /**
   * Players' files inflated and walked: fewer than `players` when their share of the budget ran out, and the rest were
   * sampled, then only opened and sized (a regular file, not larger than a player's file can be).
   */
  playersRead: number;
  /** The damaged files, the first reason of each (at most MAX_DAMAGE). */
  damage: Damage[];
}

const MAX_DAMAGE = 50;
/**
 * The share of the budget players' files are read whole in; for as long again, one in SAMPLE_EVERY is read whole and
 * the rest opened and sized; past that, all are only opened and sized. The chunks are what the budget is for: a player's
 * file the game wrote is a few KiB, and thousands of them are read in a second or two, well inside a quarter of any
 * budget; a folder of files built to be slow to read (each inflating to 16 MiB) cannot take more than half of it, and
 * the chunk check gets what is left of the budget after the players, never less than the other three quarters (the
 * players check first, on this thread: if they took the whole budget, every chunk would be sampled).
 */
const PLAYERS_SHARE = 1 / 4;
/** DRILL_MEMORY's default, for a check that starts its own threads (the tests). */
const DEFAULT_MEMORY_MIB = 512;

/** A folder of the restored tree, held open, and where it is (relative to WORLD_DIR, for messages). */
interface Folder {
  dir: VolumeDir;
  rel: string;
}

/** A region file to check. */
interface RegionFile {
  /** Its folder, relative to the top (`world/DIM-6/region`), opened again when the file is checked. */
  folder: string;
  name: string;
  x: number;
  z: number;
  /** The dimension it counts for; terrain only (region/). */
  dimension: string | undefined;
}

/** One check, as its steps share it. */
class Check {
  readonly report: WorldCheckReport = {
    files: 0,
    chunks: 0,
    chunksPresent: 0,
    sampled: false,
    levelName: undefined,
    dataVersion: undefined,
    dimensions: {},
    players: 0,
    playersRead: 0,
    damage: [],
  };
  readonly options: WorldCheckOptions;
  readonly #started: number;
  /** When the chunk check's budget ends (options.now()), set when the chunks' check starts. */
  #chunksUntil: number | undefined;

  constructor(options: WorldCheckOptions) {
    this.options = options;
    this.#started = options.now();
  }

  /**
   * When (options.now()) players' files stop being read whole, and when they stop being sampled (PLAYERS_SHARE).
   */
  playerDeadlines(): { sampleAt: number; stopAt: number } {
    const share = this.options.budgetMs * PLAYERS_SHARE;
    return { sampleAt: this.#started + share, stopAt: this.#started + 2 * share };
  }

  /** The chunks' check starts: its budget is what is left of the whole, and never less than all but the players' share. */
  startChunks(): void {
    const { budgetMs } = this.options;
    this.#chunksUntil = Math.max(this.#started + budgetMs, this.options.now() + budgetMs * (1 - PLAYERS_SHARE));
  }

  /** When the chunks' budget ends: as startChunks set it, or the whole budget from the start. */
  #chunkBudgetEnd(): number {
    return this.#chunksUntil ?? this.#started + this.options.budgetMs;
  }

  damaged(file: string, reason: string): void {
    if (this.report.damage.length < MAX_DAMAGE) this.report.damage.push({ file: oneLine(file), reason });
  }

  /** Whether the chunks' time budget is spent: region files started from now on are sampled. */
  budgetSpent(): boolean {
    return this.options.now() > this.#chunkBudgetEnd();
  }

  /**
   * When, on the checker threads' clock (Date.now()), a file under way switches to sampling (the chunks' budget's
   * end), and when it stops inflating at all (a whole budget later): no file holds the drill much past its budget.
   */
  deadlines(): { sampleAt: number; stopAt: number } {
    const left = this.#chunkBudgetEnd() - this.options.now();
    const sampleAt = Date.now() + Math.max(0, left);
    return { sampleAt, stopAt: sampleAt + this.options.budgetMs };
  }

  stopIfAborted(): void {
    const { signal } = this.options;
    if (signal?.aborted) throw new Error(`interrupted by ${String(signal.reason)}`);
  }

  /**
   * The entry `name` of `parent` as a folder: undefined when absent; damage by name, never followed, when it is a
   * link or anything else.
   */
  folder(parent: Folder, name: string): Folder | undefined {
    const rel = parent.rel ? `${parent.rel}/${name}` : name;
    const stat = lstatSync(parent.dir.at(name), { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (!stat.isDirectory()) {
      this.damaged(rel, `is ${kindOf(stat)}, not a folder`);
      return undefined;
    }
    let dir: VolumeDir | undefined;
    try {
      dir = parent.dir.tryDir(name);
    } catch (error) {
      this.damaged(rel, error instanceof Error ? error.message : String(error));
    }
    if (!dir) return undefined;
    return { dir, rel };
  }

  /** `use(folder)` on the entry `name` of `parent` as a folder (see folder()), closed afterwards; undefined if none. */
  inFolder<T>(parent: Folder, name: string, use: (folder: Folder) => T): T | undefined {
    const folder = this.folder(parent, name);
    if (!folder) return undefined;
    try {
      return use(folder);
    } finally {
      folder.dir.close();
    }
  }

  /** The entries of a folder with what each is (lstat: a link is a link), by name. */
  entries(folder: Folder): Array<{ name: string; stat: Stats }> {
    const found: Array<{ name: string; stat: Stats }> = [];
    for (const name of folder.dir.list().sort()) {
      const stat = lstatSync(folder.dir.at(name), { throwIfNoEntry: false });
      if (stat) found.push({ name, stat });
    }
    return found;
  }

  /** A small regular file's bytes (level.dat, a player's), or undefined after recording why it cannot be read. */
  smallFile(folder: Folder, name: string, missing?: string): Buffer | undefined {
    return this.#openSmall(folder, name, missing, (fd, size) => readRange(fd, 0, size));
  }

  /** Whether a small regular file opens and is not larger than it can be, without reading it; recorded if not. */
  sizedFile(folder: Folder, name: string): boolean {
    return this.#openSmall(folder, name, undefined, () => true) === true;
  }

  /**
   * `use` on a small regular file opened without following a link or blocking, up to MAX_SMALL_FILE bytes; undefined
   * after recording why it cannot be (`missing`: what to say when it is not there, if that is damage).
   */
  #openSmall<T>(folder: Folder, name: string, missing: string | undefined, use: (fd: number, size: number) => T) {
    const rel = `${folder.rel}/${name}`;
    const opened = openRegularAt(folder.dir.fd, name);
    if (typeof opened === "string") {
      if (opened !== "missing") this.damaged(rel, opened);
      else if (missing) this.damaged(rel, missing);
      return undefined;
    }
    try {
      if (opened.size > MAX_SMALL_FILE) {
        this.damaged(rel, `${opened.size} bytes, more than this file can be`);
        return undefined;
      }
      this.report.files++;
      return use(opened.fd, opened.size);
    } finally {
      closeSync(opened.fd);
    }
  }
}

export async function checkWorld(root: string, options: WorldCheckOptions): Promise<WorldCheckReport> {
  const check = new Check(options);
  const top: Folder = { dir: VolumeDir.open(root, "the restored world"), rel: "" };
  try {
    // Folders are held open only while they are looked at (a world may have thousands): what is checked later is
    // found again by its path, walked with O_NOFOLLOW from the top.
    const regions: RegionFile[] = [];
    for (const [i, name] of options.worlds.entries()) {
      check.inFolder(top, name, (world) => {
        if (i === 0) {
          checkLevelDat(check, world, "level.dat is missing");
          checkPlayers(check, world);
        }
        const found: RegionFile[] = [];
        dimensionsOf(check, world, options.worlds, (dimension) => found.push(...regionFiles(check, dimension)));
        // CraftBukkit makes a world's level.dat anew when it is missing (CraftServer.createWorld: no world data, new
        // PrimaryLevelData from the creator's settings): the world loads, with a new seed, spawn, time and game
        // rules. Damage when the world holds chunks, which the game wrote with the level.dat it had; a world never
        // saved yet (data/ alone) has none to lose.
        if (i > 0) checkLevelDat(check, world, found.length ? BUKKIT_LEVEL_MISSING : undefined);
        regions.push(...found);
      });
    }
    await checkRegions(check, top, regions);
    // Threads finish in any order: the damage is listed by file.
    check.report.damage.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    return check.report;
  } finally {
    top.dir.close();
  }
}

const BUKKIT_LEVEL_MISSING =
  "level.dat is missing: Bukkit would make a new one for this world (a new seed, spawn, time and game rules)";

interface DimensionFolder extends Folder {
  /** The name `backup restore --dimension` takes (overworld, nether, end, DIM7, aether:the_aether, AETHER). */
  key: string | undefined;
}

/** The name a folder of a world is counted under (dimensions.ts); undefined: its region files are checked, uncounted. */
type KeyOf = (folder: Folder) => string | undefined;

/**
 * A world folder's dimensions, each given to `visit` while it is open: the folder itself (the overworld for the
 * level), DIM<n> inside it for any integer n (DIM-1 the nether, DIM1 the end, the rest Forge's and older mods'),
 * datapacks' dimensions/<namespace>/<path>, and in the level the folders mods name themselves (a folder, never a
 * link, whose name can be a dimension's and that holds a region, entities or poi folder). Each is counted under the
 * name dimensions.ts gives it; in a Bukkit world other than the nether and the end, under the world's name.
 */
function dimensionsOf(
  check: Check,
  world: Folder,
  worlds: readonly string[],
  visit: (dimension: DimensionFolder) => void,
): void {
  const isLevel = world.rel === worlds[0];
  const bukkitWorld = !isLevel && dimensionFolder(world.rel, worlds) === world.rel;
  const keyOf: KeyOf = (folder) => (bukkitWorld ? world.rel : isDimension(folder.rel, holds(folder), worlds));
  visit({ ...world, key: keyOf(world) });
  for (const { name, stat } of check.entries(world)) {
    // DIM<n> is the game's name: a link or anything else there is damage (check.folder). A named folder is only
    // told by what it holds, so only a folder is looked into: a link, a FIFO, a name too long or like `..x` is not.
    const game = dimensionKey([name]) !== undefined;
    const named = isLevel && !game && stat.isDirectory() && isFolderDimension(name);
    if (!game && !named) continue;
    check.inFolder(world, name, (folder) => {
      const key = keyOf(folder);
      if (!named || key !== undefined) visit({ ...folder, key });
    });
  }
  check.inFolder(world, "dimensions", (datapacks) => datapackDimensions(check, datapacks, [], keyOf, visit));
}

/** The folders a dimension holds (region, entities, poi, data) that `folder` has: looked at by name, not listed. */
const holds = (folder: Folder): string[] =>
  [...REGION_FOLDERS, "data"].filter((name) =>
    lstatSync(folder.dir.at(name), { throwIfNoEntry: false })?.isDirectory(),
  );

/** The folders below dimensions/ that hold region folders (a namespace, then a path a few folders deep at most). */
function datapackDimensions(
  check: Check,
  folder: Folder,
  path: string[],
  keyOf: KeyOf,
  visit: (dimension: DimensionFolder) => void,
): void {
  const entries = check.entries(folder);
  const holdsRegions = path.length >= 2 && entries.some((e) => isRegionFolder(e.name));
  if (holdsRegions) visit({ ...folder, key: keyOf(folder) });
  const deeper = entries.filter((e) => e.stat.isDirectory() && !(holdsRegions && isRegionFolder(e.name)));
  // The namespace and a path of MAX_DIMENSION_DEPTH folders: what is below is not a dimension the drill names.
  if (path.length > MAX_DIMENSION_DEPTH) {
    if (deeper.length) check.damaged(folder.rel, `holds folders deeper than a dimension can be here: not checked`);
    return;
  }
  for (const { name, stat } of entries) {
    if (holdsRegions && isRegionFolder(name)) continue;
    // A link where a folder could be is damage by name (check.folder says so); plain files are the datapack's own.
    if (!stat.isDirectory() && !stat.isSymbolicLink()) continue;
    check.inFolder(folder, name, (sub) => datapackDimensions(check, sub, [...path, name], keyOf, visit));
  }
}

const isRegionFolder = (name: string): boolean => (REGION_FOLDERS as readonly string[]).includes(name);

/** The region files of a dimension's region, entities and poi folders; anything else named like one is damage. */
function regionFiles(check: Check, dimension: DimensionFolder): RegionFile[] {
  const files: RegionFile[] = [];
  for (const kind of REGION_FOLDERS) {
    check.inFolder(dimension, kind, (folder) => {
      const terrain = kind === "region" && dimension.key !== undefined;
      if (terrain) countDimension(check, dimension);
      for (const { name, stat } of check.entries(folder)) {
        // Only the names the game gives its region files: it never reads r.00.0.mca or r.-0.0.mca.
        const region = regionOfName(name);
        if (!region) continue;
        if (!stat.isFile()) {
          check.damaged(`${folder.rel}/${name}`, `is ${kindOf(stat)}, not a region file`);
          continue;
        }
        const dimensionKey = terrain ? dimension.key : undefined;
        files.push({ folder: folder.rel, name, x: region.x, z: region.z, dimension: dimensionKey });
      }
    });
  }
  return files;
}

function countDimension(check: Check, dimension: DimensionFolder): void {
  const key = dimension.key as string;
  check.report.dimensions[key] ??= { folder: dimension.rel, chunks: 0 };
}

/**
 * Every region file on the checker threads, as many at a time as there are threads: each file is opened, and the
 * budget looked at, just before a thread takes it (a world of thousands of files never holds them all open).
 */
async function checkRegions(check: Check, top: Folder, regions: RegionFile[]): Promise<void> {
  check.startChunks();
  if (regions.length === 0) return;
  const given = check.options.pool;
  const pool =
    given ??
    new CheckerPool({
      entry: checkerEntry(),
      memoryMiB: DEFAULT_MEMORY_MIB,
      threads: Math.min(threadsFor(DEFAULT_MEMORY_MIB), regions.length),
    });
  const threads = pool.size;
  const onAbort = () => void pool.close();
  check.options.signal?.addEventListener("abort", onAbort);
  const queue = [...regions];
  const lane = async (): Promise<void> => {
    for (let region = queue.shift(); region; region = queue.shift()) {
      check.stopIfAborted();
      await checkRegion(check, top, pool, region);
    }
  };
  try {
    await Promise.all(Array.from({ length: threads }, lane));
  } catch (error) {
    check.stopIfAborted(); // a stopped pool's refusal is the signal's doing: say so
    throw error;
  } finally {
    check.options.signal?.removeEventListener("abort", onAbort);
    if (!given) await pool.close();
  }
  check.stopIfAborted();
}

async function checkRegion(check: Check, top: Folder, pool: CheckerPool, region: RegionFile): Promise<void> {
  const file = `${region.folder}/${region.name}`;
  let dir: VolumeDir | undefined;
  try {
    dir = top.dir.tryDir(region.folder);
  } catch (error) {
    return check.damaged(region.folder, error instanceof Error ? error.message : String(error));
  }
  if (!dir) return check.damaged(file, "missing");
  try {
    const opened = openRegularAt(dir.fd, region.name);
    if (typeof opened === "string") return check.damaged(file, opened);
    try {
      await checkOpenRegion(check, pool, region, file, { fd: opened.fd, size: opened.size, dirFd: dir.fd });
    } finally {
      closeSync(opened.fd);
    }
  } finally {
    dir.close();
  }
}

async function checkOpenRegion(
  check: Check,
  pool: CheckerPool,
  region: RegionFile,
  file: string,
  open: { fd: number; size: number; dirFd: number },
): Promise<void> {
  const sample = check.budgetSpent();
  if (sample) check.report.sampled = true;
  const terrain = region.folder.endsWith("/region");
  const entities = region.folder.endsWith("/entities");
  const request = { ...open, x: region.x, z: region.z, sample, terrain, entities, ...check.deadlines() };
  const result = await pool.check(request, file);
  const { report } = check;
  if (result.sampled) report.sampled = true;
  report.files += 1 + result.externals;
  report.chunks += result.checked;
  report.chunksPresent += result.present;
  const counted = region.dimension === undefined ? undefined : report.dimensions[region.dimension];
  if (counted) counted.chunks += result.present;
  if (result.damage) check.damaged(file, result.damage);
}

/**
 * A level.dat as the game reads it: gzip, NBT, a Data.LevelName and a Data.DataVersion. The level's gives the report
 * its name and version; a Bukkit world's is checked the same way (the server reads each world's own, and stops at one
 * it cannot read: "World files may be corrupted. Shutting down."). `missing`: the reason when there is none.
 */
function checkLevelDat(check: Check, level: Folder, missing: string | undefined): void {
  const file = `${level.rel}/level.dat`;
  const data = check.smallFile(level, "level.dat", missing);
  if (!data) return;
  const read = readLevelDat(data);
  const problem =
    "problem" in read
      ? read.problem
      : read.levelName === undefined
        ? "has no Data.LevelName"
        : read.dataVersion === undefined
          ? "has no Data.DataVersion"
          : undefined;
  if (problem || "problem" in read) check.damaged(file, problem as string);
  else if (level.rel === check.options.worlds[0]) {
    Object.assign(check.report, { levelName: read.levelName, dataVersion: read.dataVersion });
  }
}

function checkPlayers(check: Check, level: Folder): void {
  check.inFolder(level, "playerdata", (players) => checkPlayerFiles(check, players));
}

/**
 * Each player's file inflated and walked, under the players' share of the budget (PLAYERS_SHARE): past it one in
 * SAMPLE_EVERY is, and the rest are opened and sized; past twice that, all are only opened and sized. Every file is
 * counted either way (the drill compares the count with the last one).
 */
function checkPlayerFiles(check: Check, players: Folder): void {
  const { sampleAt, stopAt } = check.playerDeadlines();
  let n = 0;
  for (const { name, stat } of check.entries(players)) {
    if (!name.endsWith(".dat")) continue;
    check.stopIfAborted();
    const file = `${players.rel}/${name}`;
    if (!stat.isFile()) {
      check.damaged(file, `is ${kindOf(stat)}, not a player's file`);
      continue;
    }
    const now = check.options.now();
    const whole = now < sampleAt || (now < stopAt && n % SAMPLE_EVERY === 0);
    n++;
    if (!whole) {
      if (check.sizedFile(players, name)) check.report.players++;
      continue;
    }
    const data = check.smallFile(players, name);
    if (!data) continue;
    check.report.players++;
    check.report.playersRead++;
    const inflated = gunzipNbt(data, MAX_SMALL_FILE);
    if ("problem" in inflated) {
      check.damaged(file, inflated.problem);
      continue;
    }
    const problem = walkNbt(inflated.nbt);
    if (problem) check.damaged(file, `not NBT (${problem})`);
  }
}
