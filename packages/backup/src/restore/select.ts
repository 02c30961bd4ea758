import { dirname, join } from "node:path";
import { JobError, UsageError } from "@mcops/core/errors";
import { kindOf, type VolumeDir } from "@mcops/core/volume";
import type { Restic, Snapshot, SnapshotNode } from "@mcops/world/restic";
import {
  type Dimension,
  dimensionFolder,
  isDimension,
  parseDimension,
  REGION_FOLDERS,
  snapshotWorlds,
} from "../dimensions.ts";
import { GAME_FILE_NAME, regionOfName } from "../region-file.ts";
import { type Area, type ChunkBounds, cellCount, cellsOf, chunkBounds, inCells } from "./chunks.ts";
import { describePlayer, type Player } from "./players.ts";

/**
 * What a restore brings back (issue 17): the whole world, one player's files, the chunks of an area (issue 36; or the
 * region files it touches, with --whole-regions), or one dimension. Each becomes a list of targets, paths relative to
 * WORLD_DIR: what the snapshot holds there replaces what the volume holds; what only the volume holds is moved aside
 * too (the snapshot's world did not have it).
 */

export type Selection =
  | { kind: "world" }
  | { kind: "player"; who: string }
  | { kind: "area"; area: Area; dimension: Dimension; wholeRegions: boolean }
  | { kind: "dimension"; dimension: Dimension };

/** A path (relative to WORLD_DIR) a restore replaces, and where it is. */
export interface Target {
  rel: string;
  inSnapshot: boolean;
  inVolume: boolean;
  /** A region file whose chunks in the area come from the snapshot and the rest from the volume (chunks.ts). */
  region?: { x: number; z: number };
  /** Its size in the snapshot, as `restic ls` says. */
  size?: number | undefined;
}

/** The world border is 29,999,984 blocks from the centre. */
const WORLD_LIMIT = 30_000_000;
/** An area larger than this many region files (a 16,384-block square) is a dimension: restore that instead. */
const MAX_REGIONS = 1024;

/** The command line's --player, --area and --dimension as one selection; exit 2 for a combination that is not one. */
export function parseSelection(options: {
  player?: string | undefined;
  area?: string | undefined;
  dimension?: string | undefined;
  wholeRegions?: boolean | undefined;
}): Selection {
  const { player, area, dimension, wholeRegions = false } = options;
  if (wholeRegions && area === undefined) {
    throw new UsageError("--whole-regions goes with --area: it restores the region files the area touches whole", {
      hint: "add --area X1,Z1,X2,Z2",
    });
  }
  if (player !== undefined && (area !== undefined || dimension !== undefined)) {
    throw new UsageError("--player restores one player's files: it does not go with --area or --dimension", {
      hint: "run one restore for the player and one for the area",
    });
  }
  if (player !== undefined) return { kind: "player", who: player.trim() };
  const dim = dimension === undefined ? undefined : parseDimension(dimension);
  if (area !== undefined) return { kind: "area", area: parseArea(area), dimension: dim ?? "overworld", wholeRegions };
  return dim === undefined ? { kind: "world" } : { kind: "dimension", dimension: dim };
}

/** `X1,Z1,X2,Z2` in block coordinates (what F3 shows), e.g. `-100,-100,600,250`. */
export function parseArea(text: string): Area {
  const parts = text.split(",").map((p) => p.trim());
  const numbers = parts.map(Number);
  if (parts.length !== 4 || parts.some((p) => !/^-?\d+$/.test(p)) || numbers.some((n) => Math.abs(n) > WORLD_LIMIT)) {
    throw new UsageError(`"${text}" is not an area`, {
      hint: "give two corners in block coordinates as X1,Z1,X2,Z2, e.g. --area=-100,-100,600,250",
    });
  }
  const [x1, z1, x2, z2] = numbers as [number, number, number, number];
  const area = { x1: Math.min(x1, x2), z1: Math.min(z1, z2), x2: Math.max(x1, x2), z2: Math.max(z1, z2) };
  const count = regionCount(area);
  if (count > MAX_REGIONS) {
    throw new UsageError(`the area covers ${count} region files, more than ${MAX_REGIONS}`, {
      hint: "restore the whole dimension instead: --dimension",
    });
  }
  return area;
}

/** The region files an area touches, in region coordinates: 512 blocks a region. */
const regionsOf = (area: Area) => cellsOf(area, 512);

const regionCount = (area: Area): number => cellCount(regionsOf(area));

/**
 * Whether the region file or external chunk file `name` (as the game names them) lies in the area: a region file when
 * the area touches its region; an external chunk (c.<x>.<z>.mcc) when its chunk is in the area, or with `wholeRegions`
 * in one of the area's regions (32 chunks a region).
 */
function inArea(name: string, area: Area, wholeRegions: boolean): boolean {
  const match = GAME_FILE_NAME.exec(name);
  if (!match || (match[1] === "r") !== (match[4] === "mca")) return false;
  const [x, z] = [Number(match[2]), Number(match[3])];
  if (match[1] === "c" && !wholeRegions) return inCells(chunkBounds(area), x, z);
  const scale = match[1] === "c" ? 32 : 1;
  return inCells(regionsOf(area), Math.floor(x / scale), Math.floor(z / scale));
}

/** The selection in words, for the plan, the log and the message. */
export function describeSelection(selection: Selection, player?: Player): string {
  switch (selection.kind) {
    case "world":
      return "the world";
    case "player":
      return `player ${player ? describePlayer(player) : selection.who}`;
    case "dimension":
      return `the ${selection.dimension === "overworld" ? "overworld's terrain" : selection.dimension}`;
    case "area": {
      const { x1, z1, x2, z2 } = selection.area;
      const regions = `${regionCount(selection.area)} region${regionCount(selection.area) === 1 ? "" : "s"}`;
      const where = `the area ${x1},${z1} to ${x2},${z2} of the ${selection.dimension}`;
      if (selection.wholeRegions) return `${where} (${regions} whole)`;
      return `${where} (${describeChunks(chunkBounds(selection.area))} in ${regions})`;
    }
  }
}

/** An area's chunk bounds in words: `chunks -7,-7 to 37,15 (1035 chunks)`. */
export function describeChunks(bounds: ChunkBounds): string {
  const count = cellCount(bounds);
  return `chunks ${bounds.x1},${bounds.z1} to ${bounds.x2},${bounds.z2} (${count} chunk${count === 1 ? "" : "s"})`;
}

/** What the plan needs to find the targets. */
export interface Where {
  volume: VolumeDir;
  restic: Restic;
  snapshot: Snapshot;
  worldDir: string;
  level: string;
}

/**
 * The folder of `dimension` in the snapshot's world and the snapshot's entries in it and in `below` of it (`restic ls`,
 * one call), when the snapshot holds that dimension as `backup drill --list-dimensions` lists it (dimensions.ts's
 * isDimension: the nether of a 1.21 world whose DIM-1 holds data/ alone is one; a mod's folder without region,
 * entities or poi is not); exit 1 naming the folder otherwise.
 */
async function snapshotDimension(
  where: Where,
  dimension: Dimension,
  below: readonly string[] = [],
): Promise<{ base: string; listed: SnapshotNode[] }> {
  const worlds = snapshotWorlds(where.snapshot.paths, where.worldDir, where.level);
  const base = dimensionFolder(dimension, worlds);
  const listed = await where.restic.ls(
    where.snapshot.id,
    [base, ...below.map((f) => `${base}/${f}`)].map((rel) => join(where.worldDir, rel)),
  );
  const dirs = listed.filter((n) => n.type === "dir").map((n) => relativeTo(where.worldDir, n.path));
  const holds = dirs.filter((rel) => dirname(rel) === base).map((rel) => rel.slice(base.length + 1));
  if (!dirs.includes(base) || isDimension(base, holds, worlds) !== dimension) {
    throw new JobError(`snapshot ${where.snapshot.short_id} holds no ${dimension} (${base})`, {
      hint: "the dimension had not been visited by then (backup drill --list-dimensions lists a snapshot's); pick a later snapshot with: backup snapshots",
    });
  }
  return { base, listed };
}

/** A player's files: their data, and their advancements and statistics where the game keeps them. */
export async function playerTargets(where: Where, player: Player): Promise<Target[]> {
  const files = [`playerdata/${player.uuid}.dat`, `advancements/${player.uuid}.json`, `stats/${player.uuid}.json`];
  const targets = await targetsIn(
    where,
    files.map((f) => `${where.level}/${f}`),
    "file",
  );
  if (!targets[0]?.inSnapshot) {
    throw new JobError(`snapshot ${where.snapshot.short_id} has no data for ${describePlayer(player)}`, {
      hint: "they had not joined by then; pick a later snapshot with: backup snapshots",
    });
  }
  return targets.filter((t) => t.inSnapshot || t.inVolume);
}

/**
 * The region files of an area and its external chunks, in the region, entities and poi folders of a dimension. A
 * region file is merged chunk by chunk (its `region` set) unless `wholeRegions`.
 */
export async function areaTargets(
  where: Where,
  area: Area,
  dimension: Dimension,
  wholeRegions: boolean,
): Promise<Target[]> {
  const { base, listed } = await snapshotDimension(where, dimension, REGION_FOLDERS);
  const folders = REGION_FOLDERS.map((f) => `${base}/${f}`);
  const names = new Set<string>();
  for (const folder of folders) {
    for (const node of listed) {
      const rel = relativeTo(where.worldDir, node.path);
      if (
        node.type === "file" &&
        rel.startsWith(`${folder}/`) &&
        inArea(rel.slice(folder.length + 1), area, wholeRegions)
      )
        names.add(rel);
    }
    const dir = where.volume.tryDir(folder);
    try {
      for (const name of dir?.list() ?? []) if (inArea(name, area, wholeRegions)) names.add(`${folder}/${name}`);
    } finally {
      dir?.close();
    }
  }
  const targets = targetsFrom(where, [...names].sort(), listed, "file");
  if (!wholeRegions) {
    for (const target of targets) {
      const region = regionOfName(target.rel.slice(target.rel.lastIndexOf("/") + 1));
      if (!region) continue;
      target.region = region;
      // Its chunks outside the area are read: refused before anything is done when it is not a file (never followed).
      const stat = where.volume.lstat(target.rel);
      if (stat && !stat.isFile()) {
        throw new JobError(`${target.rel} is ${kindOf(stat)}, not a region file: its chunks cannot be merged`, {
          hint: "look at it (something in the server volume made it); --whole-regions moves it aside without reading it",
        });
      }
    }
  }
  // The snapshot holds the dimension: the area as it had it is what comes back, its chunks or none. A region file the
  // snapshot lacks and the volume has is merged with no chunks of the snapshot's, so the area's live chunks go (moved
  // aside whole, with the file), as in the overworld; the plan counts them as removed.
  if (!targets.some((t) => t.inSnapshot || t.inVolume)) {
    // Nothing on either side: a typo in the area.
    throw new UsageError(
      `snapshot ${where.snapshot.short_id} holds no region file of the area ${area.x1},${area.z1} to ${area.x2},${area.z2} in the ${dimension}`,
      { hint: "check the coordinates (block coordinates, as F3 shows them) and the dimension; nothing was done" },
    );
  }
  return targets;
}

/**
 * A dimension whole: its folder (DIM<n>, a datapack's, a mod's, a Bukkit world's), or for the overworld the level's
 * region, entities and poi folders; the snapshot must hold it as the listing does (snapshotDimension).
 */
export async function dimensionTargets(where: Where, dimension: Dimension): Promise<Target[]> {
  const { base } = await snapshotDimension(where, dimension);
  const rels = dimension === "overworld" ? REGION_FOLDERS.map((f) => `${base}/${f}`) : [base];
  const targets = await targetsIn(where, rels, "dir");
  return targets.filter((t) => t.inSnapshot || t.inVolume);
}

/** Where each of `rels` is: in the snapshot (as a `type`), in the volume (as anything: it is moved aside, never read). */
async function targetsIn(where: Where, rels: string[], type: "file" | "dir"): Promise<Target[]> {
  const parents = [...new Set(rels.map((rel) => join(where.worldDir, rel, "..")))];
  const listed = await where.restic.ls(where.snapshot.id, parents);
  return targetsFrom(where, rels, listed, type);
}

function targetsFrom(where: Where, rels: string[], listed: SnapshotNode[], type: "file" | "dir"): Target[] {
  const held = new Map(listed.filter((n) => n.type === type).map((n) => [relativeTo(where.worldDir, n.path), n.size]));
  return rels.map((rel) => ({
    rel,
    inSnapshot: held.has(rel),
    inVolume: where.volume.lstat(rel) !== undefined,
    ...(held.has(rel) ? { size: held.get(rel) } : {}),
  }));
}

function relativeTo(worldDir: string, path: string): string {
  return path.startsWith(`${worldDir}/`) ? path.slice(worldDir.length + 1) : path;
}
