import { relative } from "node:path";
import { UsageError } from "@mcops/core/errors";

/**
 * A world's dimensions by name, as the drill lists and checks them and `backup restore --dimension` takes them (issues
 * 28 and 45). One definition serves all three: a name gives one folder (dimensionFolder), and a folder is a dimension
 * when its name gives it back and it holds what that kind of dimension holds (isDimension).
 *
 * - `overworld`: the level folder's own region, entities and poi folders;
 * - `nether` and `end`: DIM-1 and DIM1, inside `<level>_nether` and `<level>_the_end` on Bukkit-style servers (Paper,
 *   Spigot, Purpur), inside the level folder on vanilla, Fabric and Forge;
 * - `DIM<n>` for any other integer n: Forge's and older mods' dimensions (`DIM-6`, `DIM7`), inside the level folder;
 * - `<namespace>:<path>`: a datapack's or a mod's dimension (1.16+), in `<level>/dimensions/<namespace>/<path>`;
 * - a folder's own name (`AETHER`, case as on disk): a Forge mod's dimension in a folder it names itself
 *   (`WorldProvider.getSaveFolder()` before 1.13 returns any string: `AETHER`, `WOOT_TEST_DIMENSION`), directly in the
 *   level and holding a region, entities or poi folder;
 * - `<level>_<name>`: a Bukkit world beside the level that the snapshot holds (a plugin's world, or CraftBukkit's
 *   `<level>_<namespace>_<path>` for a datapack's dimension), whole: its level.dat and its one dimension folder.
 *
 * A name is checked before it becomes a path: a resource location as the game checks one (lowercase letters, digits,
 * `_`, `-`, `.`, and `/` in the path, no `.` or `..` folder), or a folder name of the characters mods use, so the
 * folder it gives is always inside the world's folders.
 */
export type Dimension = string;

const DIM = /^DIM(-?\d{1,10})$/;
/** The names DIM<n> folders give (a mod's folder is never named so: isFolderDimension). */
const DIM_NAMES = /^(nether|end|DIM-?\d+)$/;
/** Datapacks' dimensions are `dimensions/<namespace>/<path>`, the path at most this many folders deep here. */
export const MAX_DIMENSION_DEPTH = 8;
const NAMESPACE = /^[a-z0-9_.-]+$/;
const PATH_PART = /^[a-z0-9_.-]+$/;
/**
 * A folder a mod or a plugin names: ASCII letters, digits, `_`, `-`, `.`, `+` and inner spaces, not starting with a
 * dot (`..`, `...`, hidden folders) or a dash (an option on the command line), at most MAX_FOLDER_NAME characters.
 */
const FOLDER_NAME = /^[A-Za-z0-9_+][A-Za-z0-9_.+ -]*$/;
export const MAX_FOLDER_NAME = 80;
/** The folders the game keeps directly in a level besides dimensions: never a mod's dimension, whatever they hold. */
const LEVEL_FOLDERS = new Set([
  "region",
  "entities",
  "poi",
  "dimensions",
  "data",
  "playerdata",
  "players",
  "stats",
  "advancements",
  "datapacks",
]);
/** What a dimension folder holds: its chunks, their entities, their points of interest. */
export const REGION_FOLDERS = ["region", "entities", "poi"] as const;

/** The name of the dimension whose folder is `parts` below a world folder (`["DIM-6"]`, `["dimensions", "ns", "x"]`). */
export function dimensionKey(parts: readonly string[]): Dimension | undefined {
  if (parts.length === 1) {
    const dim = DIM.exec(parts[0] as string);
    if (!dim) return undefined;
    const n = Number(dim[1]);
    // DIM01, DIM-0: not a folder the game names; the id is a Java int.
    if (String(n) !== dim[1] || n < -(2 ** 31) || n >= 2 ** 31) return undefined;
    return n === -1 ? "nether" : n === 1 ? "end" : `DIM${n}`;
  }
  const [top, namespace, ...path] = parts;
  if (top !== "dimensions" || namespace === undefined || path.length === 0 || path.length > MAX_DIMENSION_DEPTH) {
    return undefined;
  }
  const key = `${namespace}:${path.join("/")}`;
  return isResourceName(namespace, path) ? key : undefined;
}

function isResourceName(namespace: string, path: readonly string[]): boolean {
  return (
    NAMESPACE.test(namespace) &&
    namespace !== "." &&
    namespace !== ".." &&
    path.every((part) => PATH_PART.test(part) && part !== "." && part !== "..")
  );
}

const ALIASES: Record<string, Dimension> = {
  overworld: "overworld",
  "minecraft:overworld": "overworld",
  nether: "nether",
  the_nether: "nether",
  "minecraft:the_nether": "nether",
  end: "end",
  the_end: "end",
  "minecraft:the_end": "end",
};

/**
 * Whether `name` can be a dimension named by its folder (a Forge mod's, or a Bukkit world's): a folder name of the
 * characters mods use, and none the operator would mean as another dimension (`nether`, `dim7` in any case) or that
 * is one of the level's own folders.
 */
export function isFolderDimension(name: string): boolean {
  return (
    name.length <= MAX_FOLDER_NAME &&
    FOLDER_NAME.test(name) &&
    !name.endsWith(" ") &&
    !LEVEL_FOLDERS.has(name) &&
    ALIASES[name.toLowerCase()] === undefined &&
    !/^dim-?\d+$/i.test(name)
  );
}

/**
 * A dimension as the operator writes it (`nether`, `minecraft:the_end`, `DIM-6`, `aether:the_aether`, `AETHER` as
 * the folder is spelt, `world_skyblock`); exit 2 if none.
 */
export function parseDimension(text: string): Dimension {
  const trimmed = text.trim();
  const alias = ALIASES[trimmed.toLowerCase()];
  if (alias) return alias;
  const dim = /^dim-?\d+$/i.test(trimmed) ? dimensionKey([`DIM${trimmed.slice(3)}`]) : undefined;
  if (dim) return dim;
  const [namespace, path, ...more] = trimmed.split(":");
  const key =
    more.length === 0 && namespace && path ? dimensionKey(["dimensions", namespace, ...path.split("/")]) : undefined;
  if (key) return key;
  if (isFolderDimension(trimmed)) return trimmed;
  throw new UsageError(`unknown dimension "${text}"`, {
    hint: "use overworld, nether, end, DIM<n> (Forge), namespace:name (a datapack's) or a mod's folder name; backup drill --list-dimensions lists a snapshot's",
  });
}

/**
 * The world's folders a snapshot holds, from its paths (absolute, as `restic snapshots` gives them): the level first,
 * then the Bukkit worlds directly in WORLD_DIR beside it (`<level>_nether`, `<level>_the_end`, and any other
 * `<level>_<name>` the backup took), by name.
 */
export function snapshotWorlds(paths: readonly string[], worldDir: string, level: string): string[] {
  const beside = new Set<string>();
  for (const path of paths) {
    const name = relative(worldDir, path);
    const bukkit = name === `${level}_nether` || name === `${level}_the_end`;
    // Another world is named after its folder: one the operator can write (isFolderDimension).
    const other = name.startsWith(`${level}_`) && name.length > level.length + 1 && isFolderDimension(name);
    if (bukkit || other) beside.add(name);
  }
  return [level, ...[...beside].sort()];
}

/** A Bukkit world other than the nether and the end: its dimension is named after it. */
function isBukkitWorld(name: string, worlds: readonly string[]): boolean {
  const [level] = worlds;
  return name !== level && worlds.includes(name) && name !== `${level}_nether` && name !== `${level}_the_end`;
}

/**
 * The folder (relative to WORLD_DIR) of a dimension in a world whose folders are `worlds` (snapshotWorlds): the level for
 * the overworld; the nether and the end inside the `_nether` and `_the_end` folders when the world has them (Bukkit),
 * inside the level otherwise; a Bukkit world's own folder; the rest in the level.
 */
export function dimensionFolder(dimension: Dimension, worlds: readonly string[]): string {
  const level = worlds[0] as string;
  if (dimension === "overworld") return level;
  if (dimension === "nether") return worlds.includes(`${level}_nether`) ? `${level}_nether/DIM-1` : `${level}/DIM-1`;
  if (dimension === "end") return worlds.includes(`${level}_the_end`) ? `${level}_the_end/DIM1` : `${level}/DIM1`;
  if (isBukkitWorld(dimension, worlds)) return dimension;
  if (!dimension.includes(":")) return `${level}/${dimension}`;
  const [namespace, path] = dimension.split(":") as [string, string];
  return `${level}/dimensions/${namespace}/${path}`;
}

/**
 * The dimension the folder `rel` (relative to WORLD_DIR) is, from where it is and the names of the folders it holds
 * (`holds`); undefined when it is none. The folder must be the one its name gives (a vanilla `world/DIM-1` is not the
 * nether of a Bukkit world, whose nether the game reads from `world_nether/DIM-1`), and hold what its kind holds:
 * - the overworld, a mod's named folder: a region, entities or poi folder (a named folder is told apart from the
 *   level's other folders only by that);
 * - a datapack's dimension: one of those or data/ (the game makes data/ for each dimension it loads);
 * - DIM<n> and a Bukkit world: nothing more (the game names those folders for the dimension alone).
 */
export function isDimension(rel: string, holds: readonly string[], worlds: readonly string[]): Dimension | undefined {
  const name = dimensionNamed(rel, worlds);
  if (name === undefined || dimensionFolder(name, worlds) !== rel) return undefined;
  const has = (folders: readonly string[]) => holds.some((h) => folders.includes(h));
  if (name.includes(":")) return has([...REGION_FOLDERS, "data"]) ? name : undefined;
  if (name !== "overworld" && (DIM_NAMES.test(name) || isBukkitWorld(name, worlds))) return name;
  return has(REGION_FOLDERS) ? name : undefined;
}

/** The name the folder `rel` would have as a dimension, before isDimension looks at what it holds. */
function dimensionNamed(rel: string, worlds: readonly string[]): Dimension | undefined {
  const [world, ...rest] = rel.split("/");
  if (world === undefined || !worlds.includes(world)) return undefined;
  if (world !== worlds[0]) return rest.length === 0 ? world : dimensionKey(rest);
  if (rest.length === 0) return "overworld";
  const key = dimensionKey(rest);
  if (key !== undefined || rest.length !== 1) return key;
  return isFolderDimension(rest[0] as string) ? rest[0] : undefined;
}

/**
 * The dimensions a world's folders hold, from the paths of their folders (relative to WORLD_DIR, as `restic ls`
 * lists a snapshot), each with its folder; by byDimension.
 */
export function dimensionsIn(
  folders: Iterable<string>,
  worlds: readonly string[],
): Array<{ name: Dimension; folder: string }> {
  const children = new Map<string, string[]>();
  for (const folder of folders) {
    // Every folder on the way is one too, listed or not.
    const parts = folder.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const path = parts.slice(0, i).join("/");
      if (!children.has(path)) children.set(path, []);
      if (i > 1) {
        const parent = children.get(parts.slice(0, i - 1).join("/")) as string[];
        if (!parent.includes(parts[i - 1] as string)) parent.push(parts[i - 1] as string);
      }
    }
  }
  const found: Array<{ name: Dimension; folder: string }> = [];
  for (const [folder, holds] of children) {
    const name = isDimension(folder, holds, worlds);
    if (name !== undefined) found.push({ name, folder });
  }
  return found.sort((a, b) => byDimension(a.name, b.name));
}

/** The overworld, the nether and the end first, then the rest by name. */
export function byDimension(a: Dimension, b: Dimension): number {
  const order = ["overworld", "nether", "end"];
  const ia = order.indexOf(a);
  const ib = order.indexOf(b);
  if (ia !== -1 || ib !== -1) return (ia === -1 ? 9 : ia) - (ib === -1 ? 9 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}
