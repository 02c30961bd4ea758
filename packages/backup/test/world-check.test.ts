import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { buildWorld, damage, lz4Blocks, type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decompressLz4Blocks } from "../src/drill/lz4-block.ts";
import { checkWorld, type WorldCheckOptions } from "../src/drill/world-check.ts";

let root: TempDir;
beforeEach(() => {
  root = tempDir("mcops-world-check-");
});
afterEach(() => root.cleanup());

const WORLDS = ["world", "world_nether", "world_the_end"];
const check = (extra: Partial<WorldCheckOptions> = {}) =>
  checkWorld(root.path, { worlds: WORLDS, budgetMs: 60_000, now: Date.now, ...extra });

describe("checkWorld", () => {
  it("verifies a good world: both layouts, every compression, entities and poi, an external chunk, players", async () => {
    const built = buildWorld(root.path, { external: true, chunksPerRegion: 12, players: 3 });
    const report = await check();
    expect(report.damage).toEqual([]);
    expect(report).toMatchObject({ chunks: built.chunks, chunksPresent: built.chunks, sampled: false });
    expect(report).toMatchObject({ levelName: "world", dataVersion: 3953 });
    // level.dat, 9 region files, the .mcc, 3 players
    expect(report.files).toBe(1 + built.regionFiles.length + 1 + 3);

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
      { file, reason: expect.stringMatching(/^chunk -?\d+,-?\d+: truncated: its length says \d+ bytes, the file has \d+$/) },
    ]);
  });

  it("names a header that points past the end of its file", async () => {
    const built = buildWorld(root.path);
    damage.pointPastEnd(join(root.path, "world/region/r.0.0.mca"));
    const { damage: found } = await check();
    expect(found).toEqual([
      {
        file: "world/region/r.0.0.mca",
        reason: expect.stringMatching(/^chunk 0,0: header points past the end \(sector \d+, the file ends in sector \d+\)$/),
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
    const report = await check({ budgetMs: 1, now: () => (t += 1) });
    expect(report.sampled).toBe(true);
    expect(report.chunksPresent).toBe(built.chunks);
    expect(report.chunks).toBeLessThan(built.chunks / 4);
    expect(report.chunks).toBeGreaterThan(0);
    // A header past the end is still found after the budget.
    damage.pointPastEnd(join(root.path, built.regionFiles.at(-1) as string));
    t = 0;
    expect((await check({ budgetMs: 0, now: () => (t += 1) })).damage).toHaveLength(1);
  });

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
});
