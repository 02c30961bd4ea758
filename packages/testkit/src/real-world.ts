import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import nbt from "prismarine-nbt";
import { regionChunks } from "./region.ts";
import { damage, levelDatNbt } from "./world.ts";

/**
 * Region files the game itself wrote, from Minecraft 1.8.9 to 1.21.1: the test fixtures of PrismarineJS's
 * prismarine-provider-anvil (MIT, an npm dev dependency of this package; see README.md "Real region files"). They carry
 * what only the game writes (1.17.1's was written by a Paper server with Starlight: `starlight.light_version`; chunks
 * with entities, block entities, structures, ticks, every era's section format). Worlds are put together from them in
 * the layouts servers use, with level.dat and players' files written here, and can be left unpadded as a running
 * server leaves them.
 */
export interface RealRegion {
  version: string;
  /** `r.<x>.<z>.mca` as the game named it. */
  name: string;
  path: string;
}

const requireHere = createRequire(import.meta.url);
const FIXTURES = join(dirname(requireHere.resolve("prismarine-provider-anvil/package.json")), "test", "fixtures");

/** Every real region file, by game version. */
export function realRegions(): Map<string, RealRegion> {
  const found = new Map<string, RealRegion>();
  for (const version of readdirSync(FIXTURES)) {
    const name = readdirSync(join(FIXTURES, version)).find((n) => /^r\.-?\d+\.-?\d+\.mca$/.test(n));
    if (name) found.set(version, { version, name, path: join(FIXTURES, version, name) });
  }
  return found;
}

/** The data version each layout's level.dat gives (minecraft-data's dataVersion of that release). */
const LAYOUTS = {
  /** Vanilla 1.20+: the nether and the end inside the level. */
  vanilla: { version: "1.21.1", dataVersion: 3955, dimensions: { "": "1.21.1", "DIM-1": "1.20.6", DIM1: "1.19.4" } },
  /** Paper (Bukkit): `<level>_nether/DIM-1` and `<level>_the_end/DIM1` beside the level. */
  bukkit: {
    version: "1.17.1",
    dataVersion: 2730,
    dimensions: { "": "1.17.1", "_nether/DIM-1": "1.16", "_the_end/DIM1": "1.14.4" },
  },
  /**
   * Forge 1.12: mods' dimensions in `DIM<n>` folders inside the level, and one in a folder its mod names
   * (`WorldProvider.getSaveFolder()`: the Aether's `AETHER`).
   */
  forge: {
    version: "1.12.2",
    dataVersion: 1343,
    dimensions: { "": "1.12.2", "DIM-1": "1.11.2", "DIM-6": "1.9", DIM7: "1.8.9", AETHER: "1.12.2" },
  },
} as const;

export type RealLayout = keyof typeof LAYOUTS;

export interface RealWorld {
  worlds: string[];
  /** Relative to the directory given, e.g. `world/DIM-6/region/r.-1.-1.mca`. */
  regionFiles: string[];
  /** Chunks the real region files hold (the empty ones hold none). */
  chunks: number;
  /** Each dimension's folder (relative), by the name the drill gives it, and its chunks. */
  dimensions: Record<string, { folder: string; chunks: number }>;
  players: number;
}

/**
 * A world of real region files in `layout`: each dimension's region/ holds one real file and a zero-byte one (the
 * game makes those), level.dat and `players` players' files are written here; with `unpadded`, each real file ends
 * where its last chunk's data ends, as the game leaves a file it has not closed.
 */
export function buildRealWorld(
  dir: string,
  options: { layout: RealLayout; level?: string; players?: number; unpadded?: boolean },
): RealWorld {
  const level = options.level ?? "world";
  const spec = LAYOUTS[options.layout];
  const regions = realRegions();
  const world: RealWorld = { worlds: [level], regionFiles: [], chunks: 0, dimensions: {}, players: 0 };
  for (const [where, version] of Object.entries(spec.dimensions)) {
    const region = regions.get(version);
    if (!region) throw new Error(`prismarine-provider-anvil has no ${version} region file`);
    const folder = where === "" ? level : where.startsWith("_") ? `${level}${where}` : `${level}/${where}`;
    const top = folder.split("/")[0] as string;
    if (!world.worlds.includes(top)) world.worlds.push(top);
    mkdirSync(join(dir, folder, "region"), { recursive: true });
    const rel = `${folder}/region/${region.name}`;
    copyFileSync(region.path, join(dir, rel));
    if (options.unpadded) damage.unpad(join(dir, rel));
    writeFileSync(join(dir, folder, "region", "r.30.30.mca"), "");
    const chunks = regionChunks(readFileSync(region.path)).size;
    world.regionFiles.push(rel);
    world.chunks += chunks;
    world.dimensions[dimensionName(where)] = { folder, chunks };
  }
  const saver = { name: spec.version, dataVersion: spec.dataVersion };
  for (const folder of world.worlds) writeFileSync(join(dir, folder, "level.dat"), gzipSync(levelDatNbt(level, saver)));
  mkdirSync(join(dir, level, "playerdata"), { recursive: true });
  world.players = options.players ?? 2;
  for (let p = 0; p < world.players; p++) {
    const uuid = `8667ba71-b85a-4004-af54-${String(p + 1).padStart(12, "0")}`;
    const player = nbt.comp({ DataVersion: nbt.int(spec.dataVersion), Health: nbt.float(20) }, "");
    writeFileSync(join(dir, level, "playerdata", `${uuid}.dat`), gzipSync(nbt.writeUncompressed(player as nbt.NBT)));
  }
  return world;
}

function dimensionName(where: string): string {
  if (where === "") return "overworld";
  const dim = where.split("/").at(-1) as string;
  return dim === "DIM-1" ? "nether" : dim === "DIM1" ? "end" : dim;
}
