import { execFileSync, spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import {
  buildRealWorld,
  buildWorld,
  compoundBomb,
  damage,
  lz4Blocks,
  type RealLayout,
  realRegions,
  type TempDir,
  tempDir,
} from "@mcops/testkit";
import nbt from "prismarine-nbt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decompressLz4Blocks } from "../src/drill/lz4-block.ts";
import { CheckerOutOfMemory, CheckerPool, threadsFor } from "../src/drill/pool.ts";
import { checkRegionFile, openRegularAt, type RegionJob } from "../src/drill/region.ts";
import { checkWorld, type WorldCheckOptions } from "../src/drill/world-check.ts";
import { chunkAt, regionOfName } from "../src/region-file.ts";

let root: TempDir;
beforeEach(() => {
  root = tempDir("mcops-world-check-");
});
afterEach(() => root.cleanup());

const CHILD = new URL("./fixtures/check-world-child.ts", import.meta.url).pathname;
const WORLDS = ["world", "world_nether", "world_the_end"];
const check = (extra: Partial<WorldCheckOptions> = {}) =>
  checkWorld(root.path, { worlds: WORLDS, budgetMs: 60_000, now: Date.now, ...extra });

/** A region file's check found no damage, and what else it says matches `fields`. */
function expectSound(result: { damage?: string | undefined }, fields: Record<string, unknown>): void {
  expect(result.damage).toBeUndefined();
  expect(result).toMatchObject(fields);
}

/** What the drill says of a chunk whose data is chunk `data`'s, in the slot of chunk `slot`. */
const misplacedReason = (slot: { x: number; z: number }, data: { x: number; z: number }, field: string) =>
  `chunk ${slot.x},${slot.z}: holds chunk ${data.x},${data.z}'s data (its ${field}): the game would load that there and ${slot.x},${slot.z}'s own is lost`;
const CUT_100 = "header truncated: 100 bytes of 8192 (the game reads no chunk from it and generates them anew)";

describe("checkWorld", () => {
  it("verifies a good world: both layouts, every compression, entities and poi, an external chunk, players", async () => {
    const built = buildWorld(root.path, { external: true, chunksPerRegion: 12, players: 3 });
    const report = await check();
    expect(report.damage).toEqual([]);
    expect(report).toMatchObject({ chunks: built.chunks, chunksPresent: built.chunks, sampled: false });
    expect(report).toMatchObject({ levelName: "world", dataVersion: 3953 });
    // level.dat and the nether's and the end's, 9 region files, the .mcc, 3 players
    expect(report.files).toBe(3 + built.regionFiles.length + 1 + 3);

    const vanilla = tempDir("mcops-world-check-vanilla-");
    try {
      const v = buildWorld(vanilla.path, { layout: "vanilla", level: "survival", chunksPerRegion: 4 });
      const r = await checkWorld(vanilla.path, { worlds: ["survival"], budgetMs: 60_000, now: Date.now });
      expect(r.damage).toEqual([]);
      expect(r.chunks).toBe(v.chunks);
      expect(v.regionFiles).toContain("survival/DIM-1/region/r.0.-1.mca");
    } finally {
      vanilla.cleanup();
    }
  });

  it("reads a region file whose last sector is not padded as the game does: whole", async () => {
    const built = buildWorld(root.path, { chunksPerRegion: 12 });
    for (const file of built.regionFiles) damage.unpad(join(root.path, file));
    const report = await check();
    expect(report.damage).toEqual([]);
    expect(report.chunks).toBe(built.chunks);
  });

  it("names a region file cut inside its last chunk, in world chunk coordinates", async () => {
    const built = buildWorld(root.path);
    const file = built.regionFiles[3] as string; // world/region/r.3.0.mca? the 4th file: a region x of 0..n, z of -d
    damage.truncate(join(root.path, file));
    const { damage: found } = await check();
    expect(found).toEqual([
      {
        file,
        reason: expect.stringMatching(/^chunk -?\d+,-?\d+: truncated: its length says \d+ bytes, the file has \d+$/),
      },
    ]);
  });

  it("checks only the names the game gives its region files: a damaged r.-0.0.mca or r.00.0.mca is none of its", async () => {
    const built = buildWorld(root.path, { chunksPerRegion: 12 });
    for (const name of ["r.-0.0.mca", "r.00.0.mca", "r.0.0.mca.bak"]) {
      copyFileSync(join(root.path, "world/region/r.0.0.mca"), join(root.path, "world/region", name));
      damage.pointPastEnd(join(root.path, "world/region", name));
    }
    const report = await check();
    expect(report.damage).toEqual([]);
    expect(report.chunks).toBe(built.chunks);
  });

  it("names a header that points past the end of its file", async () => {
    const built = buildWorld(root.path);
    damage.pointPastEnd(join(root.path, "world/region/r.0.0.mca"));
    const { damage: found } = await check();
    expect(found).toEqual([
      {
        file: "world/region/r.0.0.mca",
        reason: expect.stringMatching(
          /^chunk 0,0: header points past the end \(sector \d+, the file ends in sector \d+\)$/,
        ),
      },
    ]);
    expect(built.regionFiles).toContain("world/region/r.0.0.mca");
  });

  it("names a chunk that does not decompress", async () => {
    buildWorld(root.path);
    damage.corruptChunk(join(root.path, "world_nether/DIM-1/poi/r.0.-1.mca"));
    const { damage: found } = await check();
    expect(found).toEqual([
      {
        file: "world_nether/DIM-1/poi/r.0.-1.mca",
        reason: expect.stringMatching(/^chunk 0,-32: gzip data does not decompress \(.+\)$/),
      },
    ]);
  });

  it("names a missing level.dat, and one without Data.DataVersion", async () => {
    buildWorld(root.path);
    damage.removeLevelDat(root.path);
    expect((await check()).damage).toEqual([{ file: "world/level.dat", reason: "level.dat is missing" }]);
    // gzip NBT that is not a level: a compound without Data
    const nbt = Buffer.from([10, 0, 0, 1, 0, 1, 120, 1, 0]);
    writeFileSync(join(root.path, "world/level.dat"), execFileSync("gzip", ["-c"], { input: nbt }));
    expect((await check()).damage).toEqual([{ file: "world/level.dat", reason: "has no Data.LevelName" }]);
  });

  it("names a chunk whose payload is not NBT, and a player file that is not gzip", async () => {
    buildWorld(root.path, { compressions: [2] });
    const file = join(root.path, "world/entities/r.0.0.mca");
    const data = readFileSync(file);
    const payload = deflateSync(Buffer.from("not nbt at all"));
    data.writeUInt32BE(payload.length + 1, 8192);
    data[8196] = 2;
    payload.copy(data, 8197);
    writeFileSync(file, data);
    writeFileSync(join(root.path, "world/playerdata/6f4b2c1e-0000-4000-8000-000000000001.dat"), "plain text");
    const found = (await check()).damage;
    expect(found).toEqual([
      { file: "world/entities/r.0.0.mca", reason: "chunk 0,0: not NBT (it starts with tag 110, not a compound)" },
      {
        file: "world/playerdata/6f4b2c1e-0000-4000-8000-000000000001.dat",
        reason: expect.stringMatching(/^not gzip \(/),
      },
    ]);
  });

  it("calls a decompression bomb over 64 MiB damage without holding it", async () => {
    buildWorld(root.path, { compressions: [2] });
    const file = join(root.path, "world/region/r.0.0.mca");
    const bomb = deflateSync(Buffer.alloc(65 * 1024 * 1024), { level: 9 });
    const sectors = Math.ceil((bomb.length + 5) / 4096);
    const data = readFileSync(file);
    const chunk = Buffer.alloc(sectors * 4096);
    chunk.writeUInt32BE(bomb.length + 1, 0);
    chunk[4] = 2;
    bomb.copy(chunk, 5);
    const start = data.length / 4096;
    data.writeUInt32BE((start << 8) | sectors, 0);
    writeFileSync(file, Buffer.concat([data, chunk]));
    expect((await check()).damage).toEqual([
      { file: "world/region/r.0.0.mca", reason: "chunk 0,0: zlib data does not decompress (it is over 64 MiB)" },
    ]);
  });

  it("does not follow a link or open a FIFO in the restored tree: each is damage by name", async () => {
    buildWorld(root.path);
    const outside = join(root.path, "outside.mca");
    writeFileSync(outside, Buffer.alloc(8192));
    symlinkSync(outside, join(root.path, "world/region/r.5.5.mca"));
    execFileSync("mkfifo", [join(root.path, "world/region/r.6.6.mca")]);
    mkdirSync(join(root.path, "elsewhere/region"), { recursive: true });
    symlinkSync(join(root.path, "elsewhere"), join(root.path, "world/DIM-1"));
    // A link in place of level.dat is not read through either.
    const report = await check();
    expect(report.damage).toEqual([
      { file: "world/DIM-1", reason: "is a symbolic link, not a folder" },
      { file: "world/region/r.5.5.mca", reason: "is a symbolic link, not a region file" },
      { file: "world/region/r.6.6.mca", reason: "is a FIFO, not a region file" },
    ]);
  });

  it("with the budget spent, checks every header and samples the chunks, saying how many", async () => {
    const built = buildWorld(root.path, { chunksPerRegion: 64 });
    let t = 0;
    // The clock jumps past the budget at once: every file is sampled (the threads' own deadline, twice the budget on
    // the real clock, is a minute away).
    const report = await check({ budgetMs: 60_000, now: () => (t += 100_000) });
    expect(report.sampled).toBe(true);
    expect(report.chunksPresent).toBe(built.chunks);
    expect(report.chunks).toBeLessThan(built.chunks / 4);
    expect(report.chunks).toBeGreaterThan(0);
    // A header past the end is still found after the budget.
    damage.pointPastEnd(join(root.path, built.regionFiles.at(-1) as string));
    t = 0;
    expect((await check({ budgetMs: 0, now: () => (t += 1) })).damage).toHaveLength(1);
  });

  it("names an entities chunk in another's slot by its Position; a poi chunk carries none", async () => {
    buildWorld(root.path, { chunksPerRegion: 12 });
    const entities = "world/entities/r.0.0.mca";
    const moved = damage.misplaceChunk(join(root.path, entities));
    damage.misplaceChunk(join(root.path, "world/poi/r.0.0.mca"));
    const region = { x: 0, z: 0 };
    expect((await check()).damage).toEqual([
      { file: entities, reason: misplacedReason(chunkAt(region, moved.slot), chunkAt(region, moved.from), "Position") },
    ]);
  });

  it("reads players' files whole for a quarter of the budget at most, then samples and sizes them; the chunks keep the rest", async () => {
    // Files that each inflate to nearly 16 MiB (a byte array: the walk skips it, the inflating and the CRC take the
    // time): reading 400 of them takes several times the budget.
    const built = buildWorld(root.path, { chunksPerRegion: 12, players: 0 });
    mkdirSync(join(root.path, "world/playerdata"));
    const array = 16 * 1024 * 1024 - 64;
    const head = Buffer.from([10, 0, 0, 7, 0, 1, 0x62, 0, 0, 0, 0]);
    head.writeInt32BE(array, 7);
    const file = gzipSync(Buffer.concat([head, Buffer.alloc(array), Buffer.from([0])]));
    for (let p = 0; p < 400; p++) {
      writeFileSync(
        join(root.path, `world/playerdata/6f4b2c1e-0000-4000-8000-${String(p).padStart(12, "0")}.dat`),
        file,
      );
    }
    const budgetMs = 6000;
    const started = Date.now();
    const report = await check({ budgetMs });
    const took = Date.now() - started;
    expect(report.damage).toEqual([]);
    // Every file is counted (the drill compares the count), not every one is read whole.
    expect(report.players).toBe(400);
    expect(report.playersRead).toBeGreaterThan(0);
    expect(report.playersRead).toBeLessThan(400);
    // The chunks were not starved: every one was checked.
    expect(report).toMatchObject({ sampled: false, chunks: built.chunks });
    expect(took).toBeLessThan(2 * budgetMs);
  }, 60_000);

  it("stops when the run is aborted", async () => {
    buildWorld(root.path);
    const controller = new AbortController();
    controller.abort("SIGTERM");
    await expect(check({ signal: controller.signal })).rejects.toThrow("interrupted by SIGTERM");
  });
});

describe("lz4-java's block stream", () => {
  it("round-trips the game's framing and refuses a wrong checksum, a cut stream and a size over the cap", () => {
    const data = Buffer.from("minecraft:stone ".repeat(10_000));
    const stream = lz4Blocks(data);
    expect(decompressLz4Blocks(stream, 1 << 20).equals(data)).toBe(true);
    const bad = Buffer.from(stream);
    bad[17] = (bad[17] as number) ^ 1;
    expect(() => decompressLz4Blocks(bad, 1 << 20)).toThrow(/checksum does not match/);
    expect(() => decompressLz4Blocks(stream.subarray(0, stream.length - 21), 1 << 20)).toThrow(
      /ends before its end block/,
    );
    expect(() => decompressLz4Blocks(stream, 1000)).toThrow(/more than 1000 bytes/);
  });

  it("refuses a block whose match runs past its size or reaches before its start, without decoding it", () => {
    /** One LZ4Block of `block` bytes that says it decodes to `size` bytes (method LZ4, 64 KiB blocks). */
    const framed = (block: Buffer, size: number) => {
      const header = Buffer.alloc(21);
      header.write("LZ4Block", 0, "latin1");
      header[8] = 0x20 | 6;
      header.writeInt32LE(block.length, 9);
      header.writeInt32LE(size, 13);
      const end = Buffer.alloc(21);
      end.write("LZ4Block", 0, "latin1");
      end[8] = 0x10 | 6;
      return Buffer.concat([header, block, end]);
    };
    // One literal, then a match of 15 + 255 * 100,000 bytes: 25 MB from 100 KB, for a block of 64 KiB.
    const long = Buffer.concat([Buffer.from([0x1f, 0x61, 1, 0]), Buffer.alloc(100_000, 0xff), Buffer.from([0])]);
    expect(() => decompressLz4Blocks(framed(long, 65536), 1 << 20)).toThrow(
      "LZ4 block decompresses to more than 65536 bytes",
    );
    // A match before anything was written.
    expect(() => decompressLz4Blocks(framed(Buffer.from([0x0f, 1, 0, 0]), 100), 1 << 20)).toThrow(
      "an LZ4 match reaches before the start of the block",
    );
    // Literals that claim more bytes than the block has.
    expect(() => decompressLz4Blocks(framed(Buffer.from([0xf0, 200, 0x61]), 300), 1 << 20)).toThrow(
      "LZ4 literals run past the block",
    );
  });
});

describe("checkWorld on worlds of region files the game wrote (prismarine-provider-anvil's, 1.8.9 to 1.21.1)", () => {
  const layouts: Array<[RealLayout, string[]]> = [
    ["vanilla", ["world"]],
    ["bukkit", ["world", "world_nether", "world_the_end"]],
    ["forge", ["world"]],
  ];

  it.each(
    layouts.flatMap(([layout, worlds]) => [
      [layout, worlds, false],
      [layout, worlds, true],
    ]) as Array<[RealLayout, string[], boolean]>,
  )(
    "passes a %s world as found (%s), unpadded %s, counting each dimension's chunks",
    async (layout, worlds, unpadded) => {
      const world = buildRealWorld(root.path, { layout, unpadded, players: 3 });
      expect(world.worlds).toEqual(worlds);
      const report = await checkWorld(root.path, { worlds, budgetMs: 60_000, now: Date.now });
      expect(report.damage).toEqual([]);
      expect(report.chunks).toBe(world.chunks);
      expect(report.players).toBe(3);
      expect(
        Object.fromEntries(Object.entries(report.dimensions).map(([name, d]) => [name, [d.folder, d.chunks]])),
      ).toEqual(Object.fromEntries(Object.entries(world.dimensions).map(([name, d]) => [name, [d.folder, d.chunks]])));
    },
  );

  it("knows Forge's DIM<n> and a datapack's dimensions/<namespace>/<path>, and catches damage there", async () => {
    const world = buildRealWorld(root.path, { layout: "forge" });
    const real = join(root.path, world.regionFiles[0] as string);
    // Under the real file's own name: its chunks say where they are (r.0.-1.mca's, chunks 0..31,-32..-1).
    const aether = "world/dimensions/aether/the_aether/region/r.0.-1.mca";
    expect(world.regionFiles[0]).toBe("world/region/r.0.-1.mca");
    mkdirSync(join(root.path, "world/dimensions/aether/the_aether/region"), { recursive: true });
    writeFileSync(join(root.path, aether), readFileSync(real));
    let report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(Object.keys(report.dimensions).sort()).toEqual([
      "AETHER",
      "DIM-6",
      "DIM7",
      "aether:the_aether",
      "nether",
      "overworld",
    ]);
    expect(report.damage).toEqual([]);
    const dim6 = world.regionFiles.find((f) => f.startsWith("world/DIM-6/")) as string;
    damage.truncate(join(root.path, dim6));
    damage.corruptChunk(join(root.path, aether));
    report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      { file: dim6, reason: expect.stringMatching(/^chunk -\d+,-\d+: truncated: its length says \d+ bytes/) },
      { file: aether, reason: expect.stringMatching(/^chunk \d+,-\d+: zlib data does not decompress/) },
    ]);
  });

  it("calls a real region file cut to 100 bytes damage, though the entries that survive the cut are empty", async () => {
    const world = buildRealWorld(root.path, { layout: "forge", unpadded: true });
    const file = "world/region/r.0.-1.mca";
    const path = join(root.path, file);
    // The game's 1.12.2 file: 105 chunks, none of them in the header's first 25 entries.
    expect(world.dimensions.overworld).toEqual({ folder: "world", chunks: 105 });
    expect(readFileSync(path).subarray(0, 100)).toEqual(Buffer.alloc(100));
    truncateSync(path, 100);
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([{ file, reason: CUT_100 }]);
  });

  it.each([...realRegions().values()].map((real) => [real.version, real] as const))(
    "reads where each chunk the game wrote in %s says it is: one in another's slot is damage, naming both",
    (version, real) => {
      const path = join(root.path, real.name);
      copyFileSync(real.path, path);
      const region = regionOfName(real.name) as { x: number; z: number };
      const checkFile = () => {
        const fd = openSync(path, "r");
        try {
          return checkRegionFile(fd, fstatSync(fd).size, { ...region, sample: false, terrain: true }, () => "missing");
        } finally {
          closeSync(fd);
        }
      };
      const healthy = checkFile();
      expect(healthy.damage).toBeUndefined();
      expect(healthy.checked).toBe(healthy.present);
      const { slot, from } = damage.misplaceChunk(path);
      // 1.18 moved a chunk's fields out of Level to the root.
      const [major, minor] = version.split(".").map(Number) as [number, number];
      const field = major === 1 && minor < 18 ? "Level.xPos/zPos" : "xPos/zPos";
      const result = checkFile();
      expect(result.damage).toBe(misplacedReason(chunkAt(region, slot), chunkAt(region, from), field));
    },
  );

  it("names a real chunk in another's slot in a real world, and passes a real file under its own name only", async () => {
    const world = buildRealWorld(root.path, { layout: "forge", unpadded: true });
    const file = "world/DIM-1/region/r.-1.0.mca";
    expect(world.regionFiles).toContain(file);
    const region = { x: -1, z: 0 };
    const { slot, from } = damage.misplaceChunk(join(root.path, file));
    // The same real file again under another region's name: every chunk of it is in another's slot.
    const renamed = "world/DIM-6/region/r.5.5.mca";
    copyFileSync(join(root.path, world.regionFiles[0] as string), join(root.path, renamed));
    const first = [...Array(1024).keys()].find((i) => readFileSync(join(root.path, renamed)).readUInt32BE(i * 4));
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      { file, reason: misplacedReason(chunkAt(region, slot), chunkAt(region, from), "Level.xPos/zPos") },
      {
        file: renamed,
        reason: misplacedReason(
          chunkAt({ x: 5, z: 5 }, first as number),
          chunkAt({ x: 0, z: -1 }, first as number),
          "Level.xPos/zPos",
        ),
      },
    ]);
  });

  it("names a link anywhere in the restored world and never follows it: playerdata, region, DIM-1/region, dimensions, .mcc", async () => {
    buildRealWorld(root.path, { layout: "vanilla" });
    // What the links point at would be damage if it were read: a player's file and a region file that are not.
    const host = join(root.path, "host");
    mkdirSync(join(host, "aether", "x", "region"), { recursive: true });
    writeFileSync(join(host, "secret.dat"), "root only");
    writeFileSync(join(host, "r.9.9.mca"), Buffer.alloc(100, 1));
    writeFileSync(join(host, "aether", "x", "region", "r.0.0.mca"), Buffer.alloc(100, 1));
    const swap = (rel: string) => {
      execFileSync("rm", ["-rf", join(root.path, rel)]);
      symlinkSync(host, join(root.path, rel));
    };
    swap("world/playerdata");
    swap("world/DIM1/region");
    mkdirSync(join(root.path, "world/DIM-1"), { recursive: true });
    swap("world/dimensions");
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      { file: "world/DIM1/region", reason: "is a symbolic link, not a folder" },
      { file: "world/dimensions", reason: "is a symbolic link, not a folder" },
      { file: "world/playerdata", reason: "is a symbolic link, not a folder" },
    ]);
    expect(JSON.stringify(report)).not.toContain("secret");
    expect(report.players).toBe(0);

    // The overworld's region folder itself, and an external chunk's .mcc.
    const external = tempDir("mcops-world-check-mcc-");
    try {
      buildWorld(external.path, { external: true, layout: "vanilla" });
      const mcc = readdirSync(join(external.path, "world/region")).find((n) => n.endsWith(".mcc")) as string;
      execFileSync("rm", [join(external.path, "world/region", mcc)]);
      symlinkSync(join(host, "secret.dat"), join(external.path, "world/region", mcc));
      let r = await checkWorld(external.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
      expect(r.damage).toEqual([
        {
          file: "world/region/r.0.0.mca",
          reason: expect.stringMatching(`: its ${mcc}: is a symbolic link, not a file$`),
        },
      ]);
      execFileSync("rm", ["-rf", join(external.path, "world/region")]);
      symlinkSync(host, join(external.path, "world/region"));
      r = await checkWorld(external.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
      expect(r.damage).toEqual([{ file: "world/region", reason: "is a symbolic link, not a folder" }]);
    } finally {
      external.cleanup();
    }
  });

  it("says what it does not check: folders deeper than a dimension can be, and shows a name's line break visibly", async () => {
    const world = buildRealWorld(root.path, { layout: "vanilla" });
    const real = readFileSync(join(root.path, world.regionFiles[0] as string));
    const deepest = "world/dimensions/ns/a/b/c/d/e/f/g/h";
    mkdirSync(join(root.path, deepest, "region"), { recursive: true });
    writeFileSync(join(root.path, deepest, "region/r.0.0.mca"), real);
    mkdirSync(join(root.path, deepest, "i", "region"), { recursive: true });
    symlinkSync("/etc", join(root.path, "world/dimensions/ns\nlevel.dat: is fine"));
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.dimensions["ns:a/b/c/d/e/f/g/h"]?.chunks).toBe(world.dimensions.overworld?.chunks);
    expect(report.damage).toEqual([
      { file: "world/dimensions/ns | level.dat: is fine", reason: "is a symbolic link, not a folder" },
      { file: deepest, reason: "holds folders deeper than a dimension can be here: not checked" },
    ]);
  });

  it("checks a Forge dimension in a folder its mod names (world/AETHER): counted by that name, damage there is red", async () => {
    const world = buildRealWorld(root.path, { layout: "forge" });
    const aether = world.regionFiles.find((f) => f.startsWith("world/AETHER/")) as string;
    let report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([]);
    expect(report.dimensions.AETHER).toEqual({ folder: "world/AETHER", chunks: world.dimensions.AETHER?.chunks });
    expect(world.dimensions.AETHER?.chunks).toBeGreaterThan(0);
    damage.truncate(join(root.path, aether));
    report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      { file: aether, reason: expect.stringMatching(/^chunk -?\d+,-?\d+: truncated: its length says \d+ bytes/) },
    ]);
  });

  it("looks into no folder a name cannot be a dimension's: a link, a FIFO, `..x`, a 255-byte name, the level's own", async () => {
    const world = buildRealWorld(root.path, { layout: "forge" });
    // Each holds a region file that would be damage if it were read.
    const garbage = Buffer.alloc(100, 1);
    const host = join(root.path, "host");
    for (const dir of [
      host,
      ...["..x", ".hidden", "x".repeat(255), "data", "playerdata", "nether", "dim5"].map((n) =>
        join(root.path, "world", n),
      ),
    ]) {
      mkdirSync(join(dir, "region"), { recursive: true });
      writeFileSync(join(dir, "region/r.0.0.mca"), garbage);
    }
    symlinkSync(host, join(root.path, "world/LINKED"));
    execFileSync("mkfifo", [join(root.path, "world/FIFO")]);
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([]);
    expect(Object.keys(report.dimensions).sort()).toEqual(Object.keys(world.dimensions).sort());
  });

  it("checks each Bukkit world's level.dat as the level's: damaged is red, missing is red where the world holds chunks", async () => {
    const world = buildRealWorld(root.path, { layout: "bukkit" });
    const worlds = world.worlds;
    writeFileSync(join(root.path, "world_nether/level.dat"), Buffer.from("not gzip at all"));
    let report = await checkWorld(root.path, { worlds, budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([{ file: "world_nether/level.dat", reason: expect.stringMatching(/^not gzip/) }]);
    expect(report).toMatchObject({ levelName: "world", dataVersion: 2730 });

    execFileSync("rm", [join(root.path, "world_nether/level.dat"), join(root.path, "world_the_end/level.dat")]);
    // The end never saved: a world folder with data/ alone has no level.dat to lose yet.
    execFileSync("rm", ["-r", join(root.path, "world_the_end/DIM1")]);
    mkdirSync(join(root.path, "world_the_end/data"));
    report = await checkWorld(root.path, { worlds, budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      {
        file: "world_nether/level.dat",
        reason: expect.stringMatching(/^level\.dat is missing: Bukkit would make a new one/),
      },
    ]);
  });

  it("checks a Bukkit world beside the level whole, counted under its folder's name", async () => {
    const world = buildRealWorld(root.path, { layout: "bukkit" });
    mkdirSync(join(root.path, "world_skyblock/region"), { recursive: true });
    copyFileSync(join(root.path, "world/level.dat"), join(root.path, "world_skyblock/level.dat"));
    const overworld = world.regionFiles[0] as string;
    const name = overworld.slice(overworld.lastIndexOf("/") + 1);
    copyFileSync(join(root.path, overworld), join(root.path, "world_skyblock/region", name));
    const worlds = [...world.worlds, "world_skyblock"];
    let report = await checkWorld(root.path, { worlds, budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([]);
    expect(report.dimensions.world_skyblock).toEqual({
      folder: "world_skyblock",
      chunks: world.dimensions.overworld?.chunks,
    });
    damage.corruptChunk(join(root.path, "world_skyblock/region", name));
    writeFileSync(join(root.path, "world_skyblock/level.dat"), "");
    report = await checkWorld(root.path, { worlds, budgetMs: 60_000, now: Date.now });
    expect(report.damage.map((d) => d.file)).toEqual([`world_skyblock/level.dat`, `world_skyblock/region/${name}`]);
  });

  it("calls a chunk of millions of empty compounds damage by its budget, quickly and without building them", async () => {
    buildRealWorld(root.path, { layout: "vanilla" });
    const file = join(root.path, "world/region/r.0.0.mca");
    damage.replaceChunk(file, deflateSync(compoundBomb(60_000_000)), 2);
    expect(statSync(file).size).toBeLessThan(2 * 1024 * 1024);
    const report = await checkWorld(root.path, { worlds: ["world"], budgetMs: 60_000, now: Date.now });
    expect(report.damage).toEqual([
      {
        file: "world/region/r.0.0.mca",
        reason: expect.stringMatching(/^chunk \d+,\d+: not NBT \(it holds more than \d+ values/),
      },
    ]);
  });
});

describe("checkRegionFile against a file built to be slow", () => {
  /** A region file whose 1024 header entries all point at one chunk of ~8 MB of valid NBT (16 KiB of zlib). */
  function sharedChunkRegion(): string {
    const strings = Buffer.concat([
      Buffer.from([10, 0, 0, 9, 0, 1, 0x73, 8, 0, 0, 0, 128]),
      ...Array.from({ length: 128 }, () => Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.alloc(0xffff, 0x61)])),
      Buffer.from([0]),
    ]);
    const payload = deflateSync(strings, { level: 9 });
    const sectors = Math.ceil((payload.length + 5) / 4096);
    const file = Buffer.alloc(8192 + sectors * 4096);
    for (let i = 0; i < 1024; i++) file.writeUInt32BE((2 << 8) | sectors, i * 4);
    file.writeUInt32BE(payload.length + 1, 8192);
    file[8196] = 2;
    payload.copy(file, 8197);
    const path = join(root.path, "r.0.0.mca");
    writeFileSync(path, file);
    return path;
  }

  const checkFile = (path: string, job: Partial<RegionJob> = {}) => {
    const fd = openSync(path, "r");
    try {
      return checkRegionFile(fd, fstatSync(fd).size, { x: 0, z: 0, sample: false, ...job }, () => "missing");
    } finally {
      closeSync(fd);
    }
  };

  it("inflates entries that share their sectors once", () => {
    const result = checkFile(sharedChunkRegion());
    expect(result).toMatchObject({ present: 1024, checked: 1024, inflated: 1 });
    expect(result.damage).toBeUndefined();
  });

  it("samples past the budget's end and reads only the header past twice the budget, whatever file it is on", () => {
    const path = sharedChunkRegion();
    expect(checkFile(path, { sampleAt: Date.now() - 1 })).toMatchObject({ present: 1024, checked: 64, sampled: true });
    expect(checkFile(path, { stopAt: Date.now() - 1 })).toMatchObject({ present: 1024, checked: 0, sampled: true });
    // The header is still read whole: an entry past the end is found without inflating anything.
    const data = readFileSync(path);
    data.writeUInt32BE((900 << 8) | 1, 1023 * 4);
    writeFileSync(path, data);
    expect(checkFile(path, { stopAt: Date.now() - 1 }).damage).toMatch(/^chunk 31,31: header points past the end/);
  });
});

describe("checkRegionFile where the game is lenient", () => {
  const checkBytes = (data: Buffer, job: Partial<RegionJob> = {}, external?: Buffer) => {
    const path = join(root.path, "r.0.0.mca");
    writeFileSync(path, data);
    if (external) writeFileSync(join(root.path, "c.0.0.mcc"), external);
    const dir = openSync(root.path, "r");
    const fd = openSync(path, "r");
    try {
      return checkRegionFile(fd, data.length, { x: 0, z: 0, sample: false, ...job }, (name) =>
        openRegularAt(dir, name),
      );
    } finally {
      closeSync(fd);
      closeSync(dir);
    }
  };
  const chunk = (body: Buffer, version = 2) => {
    const payload = deflateSync(body);
    const data = Buffer.alloc(8192 + Math.ceil((payload.length + 5) / 4096) * 4096);
    data.writeUInt32BE((2 << 8) | ((data.length - 8192) / 4096), 0);
    data.writeUInt32BE(payload.length + 1, 8192);
    data[8196] = version;
    payload.copy(data, 8197);
    return data;
  };
  const nbtOf = (root: Record<string, unknown>) =>
    nbt.writeUncompressed(nbt.comp(root as Record<string, nbt.Tags[nbt.TagType]>, "") as nbt.NBT, "big");

  it("calls a region file cut inside its header damage, whatever survives the cut; an empty one is the game's own", () => {
    expect(checkBytes(Buffer.alloc(100)).damage).toBe(CUT_100);
    const pointing = Buffer.alloc(100);
    pointing.writeUInt32BE((2 << 8) | 1, 4);
    expect(checkBytes(pointing).damage).toBe(CUT_100);
    expect(checkBytes(Buffer.alloc(8191)).damage).toMatch(/^header truncated: 8191 bytes of 8192 /);
    expectSound(checkBytes(Buffer.alloc(0)), { present: 0 });
    expectSound(checkBytes(Buffer.alloc(8192)), { present: 0 });
  });

  describe("each chunk against the slot it sits in", () => {
    const at = (x: number, z: number) => (x & 31) + (z & 31) * 32;
    const terrain = (x: number, z: number) =>
      nbtOf({ DataVersion: nbt.int(3953), xPos: nbt.int(x), zPos: nbt.int(z), Status: nbt.string("minecraft:full") });
    const legacy = (x: number, z: number) =>
      nbtOf({ DataVersion: nbt.int(1343), Level: nbt.comp({ xPos: nbt.int(x), zPos: nbt.int(z) }) });
    const entities = (position: number[]) => nbtOf({ DataVersion: nbt.int(3953), Position: nbt.intArray(position) });
    /** A region file of `chunks` (entry index, uncompressed NBT), and entries pointing at another entry's sectors. */
    const regionOf = (chunks: Array<[number, Buffer]>, shared: Array<[slot: number, from: number]> = []) => {
      const header = Buffer.alloc(8192);
      const parts = [header];
      let next = 2;
      for (const [index, body] of chunks) {
        const payload = deflateSync(body);
        const sectors = Math.ceil((payload.length + 5) / 4096);
        const bytes = Buffer.alloc(sectors * 4096);
        bytes.writeUInt32BE(payload.length + 1, 0);
        bytes[4] = 2;
        payload.copy(bytes, 5);
        header.writeUInt32BE((next << 8) | sectors, index * 4);
        parts.push(bytes);
        next += sectors;
      }
      for (const [slot, from] of shared) header.writeUInt32BE(header.readUInt32BE(from * 4), slot * 4);
      return Buffer.concat(parts);
    };

    it("calls a chunk that says it is another damage, naming both: xPos/zPos from 1.18, Level.xPos/zPos before", () => {
      const modern = regionOf([
        [at(3, 5), terrain(3, 5)],
        [at(4, 5), terrain(14, 5)],
      ]);
      expect(checkBytes(modern, { terrain: true }).damage).toBe(
        misplacedReason({ x: 4, z: 5 }, { x: 14, z: 5 }, "xPos/zPos"),
      );
      const old = regionOf([[at(4, 5), legacy(4, 6)]]);
      expect(checkBytes(old, { terrain: true }).damage).toBe(
        misplacedReason({ x: 4, z: 5 }, { x: 4, z: 6 }, "Level.xPos/zPos"),
      );
      const home = regionOf([
        [at(3, 5), terrain(3, 5)],
        [at(4, 5), legacy(4, 5)],
      ]);
      expectSound(checkBytes(home, { terrain: true }), { checked: 2 });
      // In region -1,-1, entry 0 is chunk -32,-32.
      const negative = { x: -1, z: -1, terrain: true };
      expect(checkBytes(regionOf([[0, terrain(-32, -32)]]), negative).damage).toBeUndefined();
      expect(checkBytes(regionOf([[0, terrain(0, 0)]]), negative).damage).toBe(
        misplacedReason({ x: -32, z: -32 }, { x: 0, z: 0 }, "xPos/zPos"),
      );
    });

    it("compares each entry that shares its sectors with its own slot, and still inflates the shared chunk once", () => {
      // Chunks 1,0 and 2,0 point at chunk 0,0's sectors: each would load 0,0's data.
      const shared = regionOf(
        [[at(0, 0), terrain(0, 0)]],
        [
          [at(1, 0), at(0, 0)],
          [at(2, 0), at(0, 0)],
        ],
      );
      expect(checkBytes(shared, { terrain: true })).toMatchObject({
        inflated: 1,
        damage: misplacedReason({ x: 1, z: 0 }, { x: 0, z: 0 }, "xPos/zPos"),
      });
      // The entry that comes first in the header is the one in the wrong slot here: named all the same.
      const before = regionOf([[at(5, 0), terrain(5, 0)]], [[at(1, 0), at(5, 0)]]);
      expect(checkBytes(before, { terrain: true })).toMatchObject({
        inflated: 1,
        damage: misplacedReason({ x: 1, z: 0 }, { x: 5, z: 0 }, "xPos/zPos"),
      });
    });

    it("checks an entities chunk's Position and not a poi chunk's; a chunk that gives no position is not compared", () => {
      const moved = regionOf([[at(2, 3), entities([7, 3])]]);
      expect(checkBytes(moved, { entities: true }).damage).toBe(
        misplacedReason({ x: 2, z: 3 }, { x: 7, z: 3 }, "Position"),
      );
      expect(checkBytes(moved).damage).toBeUndefined(); // poi/: the game reads no position from its chunks
      expect(checkBytes(regionOf([[at(2, 3), entities([2, 3])]]), { entities: true }).damage).toBeUndefined();
      // Nothing, or half of a position: nothing says where else the chunk belongs.
      const entitiesWithout = regionOf([
        [at(1, 0), entities([9])],
        [at(2, 0), nbtOf({ DataVersion: nbt.int(3953) })],
      ]);
      expectSound(checkBytes(entitiesWithout, { entities: true }), { checked: 2 });
      const status = nbt.string("minecraft:full");
      const terrainWithout = regionOf([
        [at(1, 0), nbtOf({ Status: status })],
        [at(2, 0), nbtOf({ Status: status, xPos: nbt.int(9) })],
        [at(3, 0), nbtOf({ Status: status, xPos: nbt.long([0, 3]), zPos: nbt.int(0) })],
      ]);
      expectSound(checkBytes(terrainWithout, { terrain: true }), { checked: 3 });
    });

    it("reads a position as the game's getInt does: any number tag, and only the field of the chunk's era", () => {
      const status = nbt.string("minecraft:full");
      const cases: Array<[string, Buffer, { x: number; z: number }, string]> = [
        ["a long", nbtOf({ Status: status, xPos: nbt.long([0, 9]), zPos: nbt.int(0) }), { x: 9, z: 0 }, "xPos/zPos"],
        ["a double", nbtOf({ Status: status, xPos: nbt.double(7.5), zPos: nbt.int(0) }), { x: 7, z: 0 }, "xPos/zPos"],
        ["a short", nbtOf({ Status: status, xPos: nbt.short(6), zPos: nbt.byte(0) }), { x: 6, z: 0 }, "xPos/zPos"],
        // Before 1.18 the game reads Level's, whatever the root holds.
        [
          "Level's before 1.18",
          nbtOf({ xPos: nbt.int(0), zPos: nbt.int(0), Level: nbt.comp({ xPos: nbt.int(5), zPos: nbt.int(0) }) }),
          { x: 5, z: 0 },
          "Level.xPos/zPos",
        ],
      ];
      for (const [what, body, holds, field] of cases) {
        expect(checkBytes(regionOf([[at(0, 0), body]]), { terrain: true }).damage, what).toBe(
          misplacedReason({ x: 0, z: 0 }, holds, field),
        );
      }
    });

    it("checks an external chunk's position against its slot", () => {
      const data = chunk(Buffer.alloc(0));
      data.writeInt32BE(1, 8192);
      data[8196] = 0x82;
      expectSound(checkBytes(data, { terrain: true }, deflateSync(terrain(0, 0))), { externals: 1 });
      expect(checkBytes(data, { terrain: true }, deflateSync(terrain(1, 0))).damage).toBe(
        misplacedReason({ x: 0, z: 0 }, { x: 1, z: 0 }, "xPos/zPos"),
      );
    });
  });

  it("reads a chunk Spigot wrote over 255 sectors as Paper reads it: whole when its count is 255", () => {
    // Uncompressed NBT of 300 sectors: a root with Status and a byte array.
    const status = Buffer.from("minecraft:full");
    const array = Buffer.alloc(300 * 4096, 1);
    const body = Buffer.concat([
      Buffer.from([10, 0, 0, 8, 0, 6]),
      Buffer.from("Status"),
      Buffer.from([0, status.length]),
      status,
      Buffer.from([7, 0, 1, 0x62]),
      Buffer.from([
        (array.length >>> 24) & 255,
        (array.length >>> 16) & 255,
        (array.length >>> 8) & 255,
        array.length & 255,
      ]),
      array,
      Buffer.from([0]),
    ]);
    const spigot = (count: number) => {
      const data = Buffer.alloc(8192 + Math.ceil((body.length + 5) / 4096) * 4096);
      data.writeUInt32BE(((2 << 8) | count) >>> 0, 0);
      data.writeUInt32BE(body.length + 1, 8192);
      data[8196] = 3;
      body.copy(data, 8197);
      return data;
    };
    const whole = checkBytes(spigot(255), { terrain: true });
    expect(whole.damage).toBeUndefined();
    expect(whole).toMatchObject({ present: 1, checked: 1, inflated: 1 });
    // Vanilla reads its sectors only: with another count, the chunk is cut short.
    expect(checkBytes(spigot(254)).damage).toMatch(
      new RegExp(`^chunk 0,0: truncated: its length says ${body.length} bytes, the file has ${254 * 4096 - 5}$`),
    );
    // A length past the end of the file, or past what a chunk can be, is damage as before.
    const cut = spigot(255).subarray(0, 8192 + 256 * 4096);
    expect(checkBytes(cut).damage).toMatch(
      new RegExp(`^chunk 0,0: truncated: its length says ${body.length} bytes, the file has `),
    );
    const huge = spigot(255);
    huge.writeUInt32BE(40 * 1024 * 1024, 8192);
    expect(checkBytes(huge).damage).toMatch(
      new RegExp(
        `^chunk 0,0: truncated: its length says ${40 * 1024 * 1024 - 1} bytes, the file has ${255 * 4096 - 5}$`,
      ),
    );
  });

  it("reads an external chunk whatever length the region file gives it, as the game does", () => {
    const data = chunk(Buffer.alloc(0));
    data.writeInt32BE(-5, 8192);
    data[8196] = 0x82;
    const external = deflateSync(nbtOf({ Status: nbt.string("minecraft:full") }));
    expect(checkBytes(data, {}, external)).toMatchObject({ checked: 1, externals: 1 });
    expect(checkBytes(data, {}, external).damage).toBeUndefined();
  });

  it("calls a terrain chunk without level data damage (the game makes it anew), not an entities one", () => {
    const bare = chunk(nbtOf({ DataVersion: nbt.int(3953), xPos: nbt.int(0) }));
    expect(checkBytes(bare, { terrain: true }).damage).toBe(
      "chunk 0,0: has no level data (no Status, no Level): the game skips it and generates the chunk anew",
    );
    expect(checkBytes(bare, { terrain: false }).damage).toBeUndefined();
    const old = chunk(nbtOf({ Level: nbt.comp({ xPos: nbt.int(0) }) }));
    expect(checkBytes(old, { terrain: true }).damage).toBeUndefined();
  });
});

describe("a world of more dimension folders than descriptors", () => {
  // The check runs in its own process under a limit of 64 descriptors (Node itself holds about 30), so that 400
  // dimensions of 3 folders each are far more than it could hold open, whatever this machine's own limit is.
  const run = (limit: number) =>
    spawnSync("prlimit", [`--nofile=${limit}:${limit}`, "--", process.execPath, CHILD, root.path, "world"], {
      encoding: "utf8",
      timeout: 60_000,
    });

  it("holds a few folders open at a time, not one per folder (EMFILE)", () => {
    const world = buildRealWorld(root.path, { layout: "vanilla" });
    for (let n = 2; n < 402; n++) {
      for (const kind of ["region", "entities", "poi"])
        mkdirSync(join(root.path, `world/DIM${n}/${kind}`), { recursive: true });
    }
    const child = run(64);
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    const report = JSON.parse(child.stdout);
    expect(report.damage).toEqual([]);
    expect(Object.keys(report.dimensions)).toHaveLength(3 + 400);
    expect(report.chunks).toBe(world.chunks);
  });

  it("would run out under that limit if it held one descriptor per folder (the limit binds)", () => {
    for (let n = 2; n < 402; n++) mkdirSync(join(root.path, `world/DIM${n}/region`), { recursive: true });
    const holdAll = `const fs = require("node:fs"); const held = [];
      for (const d of fs.readdirSync(process.argv[1] + "/world")) held.push(fs.openSync(process.argv[1] + "/world/" + d, "r"));`;
    const child = spawnSync("prlimit", ["--nofile=64:64", "--", process.execPath, "-e", holdAll, root.path], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(child.stderr).toContain("EMFILE");
  });
});

describe("the checker threads' heap limit", () => {
  it("starts no more threads than DRILL_MEMORY holds at 160 MiB each (buffers are outside V8's heap limit)", () => {
    expect(threadsFor(64, 16)).toBe(1);
    expect(threadsFor(512, 16)).toBe(3);
    expect(threadsFor(512, 2)).toBe(2);
    expect(threadsFor(4096, 16)).toBe(16);
  });

  it("fails with the file the thread was on when a thread runs out of its share", async () => {
    const pool = new CheckerPool({
      entry: new URL("./fixtures/hungry-checker.ts", import.meta.url),
      memoryMiB: 64,
      threads: 1,
    });
    try {
      const checking = pool.check({ fd: 0, size: 0, dirFd: 0, x: 5, z: 5, sample: false }, "world/region/r.5.5.mca");
      await expect(checking).rejects.toThrow(CheckerOutOfMemory);
      await expect(checking).rejects.toThrow("the checker ran out of its 64 MiB on world/region/r.5.5.mca");
      // Once one thread is gone, the pool takes no more work.
      await expect(pool.check({ fd: 0, size: 0, dirFd: 0, x: 0, z: 0, sample: false }, "x")).rejects.toThrow(
        CheckerOutOfMemory,
      );
    } finally {
      await pool.close();
    }
  });
});
