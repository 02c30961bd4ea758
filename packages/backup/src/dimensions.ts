import { UsageError } from "@mcops/core/errors";

/**
 * A world's dimensions by name, as the drill lists them and `backup restore --dimension` takes them (issue 28):
 *
 * - `overworld`: the level folder's own region, entities and poi folders;
 * - `nether` and `end`: DIM-1 and DIM1, inside `<level>_nether` and `<level>_the_end` on Bukkit-style servers (Paper,
 *   Spigot, Purpur), inside the level folder on vanilla, Fabric and Forge;
 * - `DIM<n>` for any other integer n: Forge's and older mods' dimensions (`DIM-6`, `DIM7`), inside the level folder;
 * - `<namespace>:<path>`: a datapack's or a mod's dimension (1.16+), in `<level>/dimensions/<namespace>/<path>`.
 *
 * A name is checked as the game checks a resource location (lowercase letters, digits, `_`, `-`, `.`, and `/` in the
 * path, no `.` or `..` folder), so the folder it gives is always inside the level.
 */
export type Dimension = string;

const DIM = /^DIM(-?\d{1,10})$/;
/** Datapacks' dimensions are `dimensions/<namespace>/<path>`, the path at most this many folders deep here. */
export const MAX_DIMENSION_DEPTH = 8;
const NAMESPACE = /^[a-z0-9_.-]+$/;
const PATH_PART = /^[a-z0-9_.-]+$/;

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

/** A dimension as the operator writes it (`nether`, `minecraft:the_end`, `DIM-6`, `aether:the_aether`); exit 2 if none. */
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
  throw new UsageError(`unknown dimension "${text}"`, {
    hint: "use overworld, nether, end, DIM<n> (Forge) or namespace:name (a datapack's); backup drill --list-dimensions lists a snapshot's",
  });
}

/**
 * The folder (relative to WORLD_DIR) of a dimension: the level for the overworld; the nether and the end inside the
 * `_nether` and `_the_end` folders on the Bukkit layout (`bukkit`), inside the level otherwise; the rest in the level.
 */
export function dimensionFolder(level: string, dimension: Dimension, bukkit: boolean): string {
  if (dimension === "overworld") return level;
  if (dimension === "nether") return bukkit ? `${level}_nether/DIM-1` : `${level}/DIM-1`;
  if (dimension === "end") return bukkit ? `${level}_the_end/DIM1` : `${level}/DIM1`;
  if (dimension.startsWith("DIM")) return `${level}/${dimension}`;
  const [namespace, path] = dimension.split(":") as [string, string];
  return `${level}/dimensions/${namespace}/${path}`;
}

/**
 * The dimensions a world's folders hold, from the paths of their folders (relative to WORLD_DIR, as `restic ls`
 * lists a snapshot): a dimension is there when one of its region folders is.
 */
export function dimensionsIn(folders: Iterable<string>, worlds: readonly string[]): Dimension[] {
  const found = new Set<Dimension>();
  const [level] = worlds;
  for (const folder of folders) {
    const parts = folder.split("/");
    const last = parts.pop();
    if (last !== "region" && last !== "entities" && last !== "poi") continue;
    const [world, ...rest] = parts;
    if (world === undefined || !worlds.includes(world)) continue;
    const key = rest.length === 0 ? (world === level ? "overworld" : undefined) : dimensionKey(rest);
    if (key) found.add(key);
  }
  return [...found].sort(byDimension);
}

/** The overworld, the nether and the end first, then the rest by name. */
export function byDimension(a: Dimension, b: Dimension): number {
  const order = ["overworld", "nether", "end"];
  const ia = order.indexOf(a);
  const ib = order.indexOf(b);
  if (ia !== -1 || ib !== -1) return (ia === -1 ? 9 : ia) - (ib === -1 ? 9 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}
