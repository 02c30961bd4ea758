import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@mcops/core/log";
import { VolumeDir } from "@mcops/core/volume";
import {
  changeChunkAsGame,
  damage,
  type GameRead,
  prismarineReadable,
  readChunkAsGame,
  realRegions,
  regionChunks,
  saveChunkAsGame,
} from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { checkRegionFile, openRegularAt } from "../src/drill/region.ts";
import { checkUnchanged, mergeArea } from "../src/restore/area.ts";
import {
  type ChunkBounds,
  chunkBounds,
  inCells,
  planMerge,
  type RegionMerge,
  regionSource,
  writeMergedFile,
} from "../src/restore/chunks.ts";

/**
 * The area restore's region writer (issue 36) against the format: an 8 KiB header of big-endian sector offsets and
 * counts, then big-endian timestamps; each chunk a length, a compression byte and its payload, in whole 4 KiB sectors.
 * Every file written is read back with the test kit's own reader, prismarine-provider-anvil's RegionFile (an
 * independent implementation of the game's) and the drill's checker.
 */

const REAL = realRegions().get("1.21.1");
if (!REAL) throw new Error("prismarine-provider-anvil's 1.21.1 region file is missing");
const REGION = { x: 0, z: 0 };
const index = (x: number, z: number) => (x & 31) + (z & 31) * 32;

let dir: string;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  dir = mkdtempSync(join(tmpdir(), "mcops-chunks-"));
  return dir;
}

/** A copy of the real file to change. */
function realCopy(name: string): string {
  const path = join(dir ?? scratch(), name);
  copyFileSync((REAL as { path: string }).path, path);
  return path;
}

/** Merges the files at `live` and `snapshot` (either may be absent) over `bounds`; the new file's bytes and the plan. */
function merge(
  live: string | undefined,
  snapshot: string | undefined,
  bounds: ChunkBounds,
  region = REGION,
): { out: Buffer; plan: RegionMerge; path: string } {
  const fds = [live, snapshot].map((p) => (p ? openSync(p, "r") : undefined));
  try {
    const sources = {
      live: fds[0] ? regionSource(fds[0]) : undefined,
      snapshot: fds[1] ? regionSource(fds[1]) : undefined,
    };
    const plan = planMerge(region, bounds, sources.live, sources.snapshot);
    const path = join(dir, `merged-${Math.random().toString(36).slice(2)}.mca`);
    writeMergedFile(
      path,
      plan,
      sources,
      { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 },
      0o644,
      "r.0.0.mca",
    );
    return { out: readFileSync(path), plan, path };
  } finally {
    for (const fd of fds) if (fd !== undefined) closeSync(fd);
  }
}

/** What the game needs of the header: sectors from 2 on, no two chunks sharing one, all inside the file. */
function expectSoundHeader(out: Buffer): void {
  expect(out.length % 4096).toBe(0);
  const used = new Set<number>();
  for (const chunk of regionChunks(out).values()) {
    expect(chunk.sector).toBeGreaterThanOrEqual(2);
    expect(chunk.sectors).toBe(Math.ceil(chunk.raw.length / 4096));
    for (let s = chunk.sector; s < chunk.sector + chunk.sectors; s++) {
      expect(used.has(s)).toBe(false);
      used.add(s);
    }
    expect((chunk.sector + chunk.sectors) * 4096).toBeLessThanOrEqual(out.length);
  }
}

/** Every chunk read back by prismarine-provider-anvil (it opens the file to write: a copy) and by the drill. */
async function expectReadable(path: string, count: number): Promise<void> {
  expect(await prismarineReadable(path)).toBe(count);
  const fd = openSync(path, "r");
  try {
    const checked = checkRegionFile(fd, statSync(path).size, { ...REGION, sample: false, terrain: true }, (name) =>
      openRegularAt(openSync(dir, "r"), name),
    );
    expect(checked).toMatchObject({ present: count, checked: count });
    expect(checked.damage).toBeUndefined();
  } finally {
    closeSync(fd);
  }
}

/** A chunk's bytes as the game writes them: its length, a compression byte and the payload. */
function chunkBytes(payload: Buffer, compression = 3): Buffer {
  const head = Buffer.alloc(5);
  head.writeInt32BE(payload.length + 1, 0);
  head[4] = compression;
  return Buffer.concat([head, payload]);
}

/** An uncompressed NBT compound of about `bytes` bytes, its bytes all `mark`. */
const nbtOf = (bytes: number, mark = 1) =>
  Buffer.concat([
    Buffer.from([10, 0, 0, 7, 0, 1, 0x61]),
    Buffer.from([0, 0, 0, 0]),
    Buffer.alloc(bytes, mark),
    Buffer.from([0]),
  ]).fill(0, 7, 11);

/** `file` with chunk `index` pointing at `sector` with `count` sectors, and `data` written there (the file grown to hold it). */
function withEntry(file: Buffer, index: number, sector: number, count: number, data: Buffer): Buffer {
  const out = Buffer.alloc(Math.max(file.length, sector * 4096 + data.length));
  file.copy(out);
  data.copy(out, sector * 4096);
  out.writeUInt32BE(((sector << 8) | count) >>> 0, index * 4);
  out.writeUInt32BE(1_700_000_000, 4096 + index * 4);
  return out;
}

/**
 * Every chunk of the merged file reads in the game, vanilla and Spigot (Paper), exactly as it reads from its source:
 * the snapshot's in the area, the live file's outside it. A read that throws ("error") is the game making the chunk
 * anew, as it does for no chunk.
 */
function expectReadsAsSources(
  out: Buffer,
  sources: { live?: Buffer; snapshot?: Buffer },
  bounds: ChunkBounds,
  region = REGION,
): void {
  // What the game reads, in words: a stream by its length and digest.
  const read = (file: Buffer | undefined, i: number, reader: "vanilla" | "spigot"): string => {
    const got: GameRead = file ? readChunkAsGame(file, i, reader) : undefined;
    if (got === "error" || got === undefined) return "no chunk";
    if (!Buffer.isBuffer(got)) return `external, compression ${got.external}`;
    return `${got.length} bytes ${createHash("sha256").update(got).digest("hex")}`;
  };
  for (const reader of ["vanilla", "spigot"] as const) {
    for (let i = 0; i < 1024; i++) {
      const inArea = inCells(bounds, region.x * 32 + (i & 31), region.z * 32 + (i >> 5));
      const source = inArea ? sources.snapshot : sources.live;
      const [got, wanted] = [read(out, i, reader), read(source, i, reader)];
      if (got !== wanted) expect(got, `${reader} chunk ${i}`).toBe(wanted);
    }
  }
}

describe("the area restore's region writer", () => {
  it("takes the area's chunks from the snapshot and every other chunk from the live file, byte for byte", async () => {
    scratch();
    const snapshot = realCopy("snapshot.mca");
    const live = realCopy("live.mca");
    // After the backup the game saved chunk 3,3 (inside the area) and 10,10 (outside) again.
    changeChunkAsGame(live, REGION, index(3, 3), "griefed");
    changeChunkAsGame(live, REGION, index(10, 10), "built since");
    const bounds = chunkBounds({ x1: 48, z1: 48, x2: 63, z2: 63 });
    const { out, plan, path } = merge(live, snapshot, bounds);
    expect(plan).toMatchObject({ restored: 1, removed: 0, kept: 224, dropped: [], touches: true });
    const [before, now, merged] = [snapshot, live, path].map((p) => regionChunks(readFileSync(p)));
    expect(merged?.size).toBe(225);
    for (const [i, chunk] of merged ?? []) {
      const from = i === index(3, 3) ? before : now;
      expect(chunk.raw.equals(from?.get(i)?.raw as Buffer), `chunk ${i}`).toBe(true);
      expect(chunk.timestamp).toBe(from?.get(i)?.timestamp);
    }
    expect(merged?.get(index(10, 10))?.raw.toString("latin1")).not.toBe(
      before?.get(index(10, 10))?.raw.toString("latin1"),
    );
    expectSoundHeader(out);
    await expectReadable(path, 225);
  });

  it("pads a last sector the game left unpadded, and carries a chunk in its sectors whatever their tail holds", () => {
    scratch();
    const live = realCopy("live.mca");
    damage.unpad(live);
    expect(statSync(live).size % 4096).not.toBe(0);
    const snapshot = realCopy("snapshot.mca");
    const { out } = merge(live, snapshot, chunkBounds({ x1: 0, z1: 0, x2: 15, z2: 15 }));
    expect(out.length % 4096).toBe(0);
    const now = regionChunks(readFileSync(live));
    for (const [i, chunk] of regionChunks(out)) expect(chunk.raw.equals(now.get(i)?.raw as Buffer)).toBe(true);
  });

  it("leaves out a chunk of the area the snapshot lacks, and makes a file the live world lacks from the area's chunks", async () => {
    scratch();
    const snapshot = realCopy("snapshot.mca");
    const live = realCopy("live.mca");
    // The game generated chunk 20,20 after the backup (the real file holds chunks 0..14 in x and z).
    saveChunkAsGame(live, REGION, index(20, 20), Buffer.from([10, 0, 0, 0]), 2);
    const removed = merge(live, snapshot, chunkBounds({ x1: 300, z1: 300, x2: 340, z2: 340 }));
    expect(removed.plan).toMatchObject({ restored: 0, removed: 1, kept: 225, touches: true });
    expect(regionChunks(removed.out).has(index(20, 20))).toBe(false);
    expect(regionChunks(removed.out).size).toBe(225);
    await expectReadable(removed.path, 225);

    const created = merge(undefined, snapshot, chunkBounds({ x1: 0, z1: 0, x2: 511, z2: 31 }));
    expect(created.plan).toMatchObject({ restored: 30, removed: 0, kept: 0, touches: true });
    expect([...regionChunks(created.out).keys()].sort((a, b) => a - b)).toEqual(
      [...regionChunks(readFileSync(snapshot)).keys()].filter((i) => i >> 5 <= 1).sort((a, b) => a - b),
    );
    expectSoundHeader(created.out);

    // Nothing of the area on either side: the file is not the area's business.
    const untouched = merge(live, snapshot, chunkBounds({ x1: 400, z1: 0, x2: 410, z2: 10 }));
    expect(untouched.plan.touches).toBe(false);
    // Every chunk of the area gone: a header and nothing else, as the game makes a new file.
    const emptied = merge(undefined, undefined, chunkBounds({ x1: 0, z1: 0, x2: 511, z2: 511 }));
    expect(emptied.out).toEqual(Buffer.alloc(8192));
  });

  it("carries an external chunk's marker (compression | 0x80, one sector) and a chunk in every compression as it is", () => {
    scratch();
    const live = join(dir, "live.mca");
    writeFileSync(live, Buffer.alloc(8192));
    // A chunk over 255 sectors goes to its .mcc: the region file keeps a 5-byte marker.
    saveChunkAsGame(
      live,
      REGION,
      index(1, 0),
      Buffer.concat([Buffer.from([10, 0, 0]), Buffer.alloc(1_100_000, 1), Buffer.from([0])]),
      3,
    );
    for (const compression of [1, 2, 3, 4] as const) {
      saveChunkAsGame(
        live,
        REGION,
        index(2 + compression, 0),
        Buffer.from([10, 0, 0, 0]),
        compression,
        1_700_000_000 + compression,
      );
    }
    const { out } = merge(live, undefined, chunkBounds({ x1: 500, z1: 500, x2: 500, z2: 500 }));
    const chunks = regionChunks(out);
    expect(chunks.get(index(1, 0))).toMatchObject({ compression: 0x83, sectors: 1 });
    expect(chunks.get(index(1, 0))?.raw).toEqual(Buffer.from([0, 0, 0, 1, 0x83]));
    for (const compression of [1, 2, 3, 4]) {
      expect(chunks.get(index(2 + compression, 0))).toMatchObject({
        compression,
        timestamp: 1_700_000_000 + compression,
      });
    }
  });

  it("keeps entries that share their sectors shared, drops entries the game drops, and refuses overlaps built to multiply", () => {
    scratch();
    const live = realCopy("live.mca");
    const data = readFileSync(live);
    // Chunk 1,0 made to point at chunk 0,0's sectors; chunk 2,0 past the end of the file.
    data.writeUInt32BE(data.readUInt32BE(0), 4);
    data.writeUInt32BE(((100_000 << 8) | 1) >>> 0, 8);
    writeFileSync(live, data);
    const { out, plan } = merge(live, undefined, chunkBounds({ x1: 500, z1: 500, x2: 500, z2: 500 }));
    expect(plan.dropped).toEqual([
      expect.stringMatching(/^live chunk 2,0: header points past the end \(sector 100000/),
    ]);
    const chunks = regionChunks(out);
    expect(chunks.get(0)?.sector).toBe(chunks.get(1)?.sector);
    expect(chunks.has(2)).toBe(false);

    // 1024 entries, each 255 sectors starting one sector apart, each sector the start of a chunk of 255 sectors the game
    // reads: 5 MiB of file that would be written out as 1 GiB.
    const bomb = join(dir, "bomb.mca");
    const header = Buffer.alloc(8192);
    for (let i = 0; i < 1024; i++) header.writeUInt32BE((((2 + i) << 8) | 255) >>> 0, i * 4);
    const body = Buffer.alloc((1024 + 255) * 4096, 1);
    for (let i = 0; i < 1024; i++) body.writeInt32BE(255 * 4096 - 4, i * 4096);
    writeFileSync(bomb, Buffer.concat([header, body]));
    const far = chunkBounds({ x1: 5000, z1: 5000, x2: 5000, z2: 5000 });
    expect(() => merge(bomb, undefined, far)).toThrow(
      "r.0.0.mca: its chunks' sectors overlap, which no game writes; nothing was changed",
    );
    // The same entries over bytes no game reads a chunk from (each length says 16 MiB): nothing of them is carried.
    writeFileSync(bomb, Buffer.concat([header, Buffer.alloc((1024 + 255) * 4096, 1)]));
    const { out: empty, plan: none } = merge(bomb, undefined, far);
    expect(none).toMatchObject({ kept: 0 });
    expect(none.dropped).toHaveLength(1024);
    expect(empty).toEqual(Buffer.alloc(8192));
  });

  it("places each chunk at the region's own chunk indices for negative regions", () => {
    scratch();
    const live = realCopy("r.-1.-1.mca");
    const region = { x: -1, z: -1 };
    // Block -1,-1 is chunk -1,-1: index 31 + 31 * 32 of region -1,-1; the real file has no chunk there.
    const plan = merge(live, live, chunkBounds({ x1: -16, z1: -16, x2: -1, z2: -1 }), region).plan;
    expect(plan).toMatchObject({ restored: 0, removed: 0, kept: 225, touches: false });
    const bounds = chunkBounds({ x1: -512, z1: -512, x2: -512 + 15, z2: -512 + 15 });
    expect(bounds).toEqual({ x1: -32, z1: -32, x2: -32, z2: -32 });
    expect(merge(undefined, live, bounds, region).plan).toMatchObject({ restored: 1, kept: 0 });
  });

  it("carries each chunk as the game reads it, vanilla and Spigot alike, whatever the live file's header says", () => {
    scratch();
    const real = readFileSync((REAL as { path: string }).path);
    const end = Math.ceil(real.length / 4096);
    const small = chunkBytes(nbtOf(100));
    // Chunks outside the area (row 20), each after the real file's 225 chunks, each as a damaged or hostile file has it.
    const cases: Array<[string, Buffer]> = [
      ["a sector count of 255 at the end of a short file", withEntry(real, index(20, 20), end, 255, small)],
      // Spigot wrote a chunk over 255 sectors into the region file before 1.14: Paper still reads it whole.
      [
        "a chunk of 300 sectors as Spigot wrote it",
        withEntry(real, index(21, 20), end, 255, chunkBytes(nbtOf(300 * 4096))),
      ],
      [
        "a chunk whose length runs past the end of the file",
        withEntry(real, index(22, 20), end, 2, chunkBytes(nbtOf(6000)).subarray(0, 100)),
      ],
      ["a length of 0", withEntry(real, index(23, 20), end, 1, Buffer.from([0, 0, 0, 0, 2, 9, 9]))],
      ["a negative length", withEntry(real, index(24, 20), end, 1, Buffer.from([0xff, 0xff, 0xff, 0xf0, 2, 9]))],
      [
        "a chunk longer than its sector count, more of the file after it",
        withEntry(withEntry(real, index(25, 20), end, 1, chunkBytes(nbtOf(6000))), index(26, 20), end + 2, 1, small),
      ],
      [
        "an external chunk's marker in 3 sectors with bytes after it",
        withEntry(real, index(27, 20), end, 3, Buffer.concat([Buffer.from([0, 0, 0, 9, 0x82]), Buffer.alloc(9000, 7)])),
      ],
    ];
    // The reader reads the game's own chunks, and Spigot's long one only as Spigot does.
    for (const [i, chunk] of regionChunks(real)) expect(readChunkAsGame(real, i)).toEqual(chunk.raw.subarray(4));
    const spigot = (cases[1] as [string, Buffer])[1];
    expect(readChunkAsGame(spigot, index(21, 20), "vanilla")).toBeUndefined();
    expect(readChunkAsGame(spigot, index(21, 20), "spigot")).toHaveLength(300 * 4096 + 13);
    const bounds = chunkBounds({ x1: 0, z1: 0, x2: 31, z2: 31 });
    for (const [what, live] of cases) {
      const path = join(dir, "live.mca");
      writeFileSync(path, live);
      for (const snapshot of [REAL?.path, undefined]) {
        const { out } = merge(path, snapshot, bounds);
        expectReadsAsSources(out, { live, ...(snapshot ? { snapshot: real } : {}) }, bounds);
        expect(out.length % 4096, what).toBe(0);
      }
    }
  });

  it("drops an entry 2 GiB or more into the file, where the game cannot read, and writes nothing for it", () => {
    scratch();
    const path = join(dir, "sparse.mca");
    const fd = openSync(path, "w");
    try {
      // A sparse file of 100 GiB: the game's user made it in a moment.
      ftruncateSync(fd, 100 * 1024 ** 3);
      const header = Buffer.alloc(8192);
      for (const [i, sector] of [2, 2 ** 19, 2 ** 20 + 2, 0xff_0000].entries()) {
        header.writeUInt32BE(((sector << 8) | 255) >>> 0, i * 4);
        writeSync(fd, chunkBytes(nbtOf(1000 * 1000)), 0, undefined, sector * 4096);
      }
      writeSync(fd, header, 0, 8192, 0);
    } finally {
      closeSync(fd);
    }
    const { out, plan } = merge(path, undefined, chunkBounds({ x1: 5000, z1: 5000, x2: 5000, z2: 5000 }));
    expect(plan.kept).toBe(1);
    expect(plan.dropped).toEqual([
      "live chunk 1,0: header points 2 GiB or more into the file (sector 524288), where the game cannot read",
      "live chunk 2,0: header points 2 GiB or more into the file (sector 1048578), where the game cannot read",
      "live chunk 3,0: header points 2 GiB or more into the file (sector 16711680), where the game cannot read",
    ]);
    expect(out.length).toBe((2 + 245) * 4096);
  });
});

/**
 * The real file at `path` with entries added outside it, each `count` sectors at `sector` whose length says `length`
 * (zlib), and nothing written after those 5 bytes: a sparse file of `size` bytes, as the game's user makes one.
 */
function sparseRegion(
  path: string,
  entries: Array<{ index: number; sector: number; length: number; count?: number }>,
  size: number,
): Buffer {
  const real = readFileSync((REAL as { path: string }).path);
  const header = Buffer.from(real.subarray(0, 8192));
  const fd = openSync(path, "w");
  try {
    writeSync(fd, real, 0, real.length, 0);
    for (const { index: i, sector, length, count = 255 } of entries) {
      header.writeUInt32BE(((sector << 8) | count) >>> 0, i * 4);
      const head = Buffer.from([0, 0, 0, 0, 2]);
      head.writeInt32BE(length, 0);
      writeSync(fd, head, 0, 5, sector * 4096);
    }
    writeSync(fd, header, 0, 8192, 0);
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
  return real;
}

describe("the area restore's region writer against a sparse live file (issue 45)", () => {
  const GiB = 1024 ** 3;
  // The area: chunks 0..15 of every row, the snapshot's (the real file's) chunks there come back.
  const bounds = chunkBounds({ x1: 0, z1: 0, x2: 255, z2: 511 });

  it("does not carry a live entry longer than a chunk can be (255 sectors, a length of 2 GiB): the area's chunks stay readable", () => {
    scratch();
    const live = join(dir, "live.mca");
    const end = Math.ceil(statSync((REAL as { path: string }).path).size / 4096);
    const length = 2 * GiB - 8 * 1024 * 1024;
    sparseRegion(live, [{ index: index(20, 20), sector: end, length }], end * 4096 + 2 * GiB);
    const { plan, path } = merge(live, (REAL as { path: string }).path, bounds);
    expect(plan.dropped).toEqual([
      `live chunk 20,20: its length says ${length - 1} bytes, more than a chunk can be (32 MiB)`,
    ]);
    expect(plan.restored).toBeGreaterThan(0);
    // Nothing of the 2 GiB was copied: the new file is the real file's chunks, every one where the game reads it.
    expect(statSync(path).size).toBeLessThanOrEqual(statSync((REAL as { path: string }).path).size + 4096);
    expectSoundHeader(readFileSync(path));
    return expectReadable(path, plan.restored + plan.kept);
  });

  it("refuses, writing nothing, when the live chunks it keeps would push the area's chunks 2 GiB or more into the file", () => {
    scratch();
    const live = join(dir, "live.mca");
    const end = Math.ceil(statSync((REAL as { path: string }).path).size / 4096);
    // 67 chunks outside the area as Spigot reads them, 31 MiB each, each starting below 2 GiB: all of it holes.
    const length = 31 * 1024 * 1024;
    const sectors = Math.ceil((length + 4) / 4096) + 1;
    const entries = Array.from({ length: 67 }, (_, n) => ({
      index: index(16 + (n % 16), n >> 4),
      sector: end + n * sectors,
      length,
    }));
    sparseRegion(live, entries, (end + 67 * sectors) * 4096);
    expect(() => merge(live, (REAL as { path: string }).path, bounds)).toThrow(
      /^r\.0\.0\.mca: the chunks it keeps would put chunk \d+,\d+ 2 GiB or more into the new file, where the game cannot read it; nothing was changed$/,
    );
  });

  it("keeps the holes of a live chunk as holes", () => {
    scratch();
    const live = join(dir, "live.mca");
    const end = Math.ceil(statSync((REAL as { path: string }).path).size / 4096);
    // A chunk Spigot reads whole: 20 MiB, all but its first 5 bytes a hole.
    const length = 20 * 1024 * 1024;
    sparseRegion(live, [{ index: index(20, 20), sector: end, length }], end * 4096 + length + 4096);
    const { plan, path } = merge(live, (REAL as { path: string }).path, bounds);
    expect(plan.dropped).toEqual([]);
    expect(statSync(path).size).toBeGreaterThan(length);
    // What the disk holds of it: the real file's chunks and a sector, not 20 MiB of zeros.
    expect(statSync(path).blocks * 512).toBeLessThan(statSync((REAL as { path: string }).path).size + 64 * 1024);
  });
});

describe("a region file saved again after its merge", () => {
  it("is seen even within the same clock tick: the same inode, size and modification time, another header", () => {
    scratch();
    const live = realCopy("r.0.0.mca");
    const volume = VolumeDir.open(dir);
    try {
      const target = { rel: "r.0.0.mca", inSnapshot: false, inVolume: true, region: REGION };
      const bounds = chunkBounds({ x1: 0, z1: 0, x2: 15, z2: 15 });
      const mtime = () => statSync(live, { bigint: true }).mtimeNs;
      const setMtime = (ns: bigint) =>
        execFileSync("touch", [
          "-m",
          "-d",
          `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`,
          live,
        ]);
      const before = mtime();
      // Touched back to the same time, nothing else: the file is the one read.
      let merged = mergeArea(volume, undefined, [target], bounds, silentLogger);
      setMtime(before);
      expect(() => checkUnchanged(volume, merged.seen, "r.0.0.mca")).not.toThrow();
      // The game saves a chunk in place (its timestamp in the header) within the tick: same size, same time.
      merged = mergeArea(volume, undefined, [target], bounds, silentLogger);
      const data = readFileSync(live);
      data.writeUInt32BE(data.readUInt32BE(4096) + 1, 4096);
      writeFileSync(live, data);
      setMtime(before);
      expect(mtime()).toBe(before);
      expect(() => checkUnchanged(volume, merged.seen, "r.0.0.mca")).toThrow(
        "r.0.0.mca changed after its chunks were merged: is the server running again?",
      );
    } finally {
      volume.close();
    }
  });
});

describe("a region file cut inside its header", () => {
  /** The live file and the snapshot's, each in its own folder as the restore holds them, merged over `bounds`. */
  function mergeCut(cut: "live" | "snapshot", bounds: ChunkBounds) {
    scratch();
    const folders = { live: join(dir, "live"), snapshot: join(dir, "snapshot") };
    for (const [side, folder] of Object.entries(folders)) {
      execFileSync("mkdir", ["-p", folder]);
      copyFileSync((REAL as { path: string }).path, join(folder, "r.0.0.mca"));
      if (side === cut) truncateSync(join(folder, "r.0.0.mca"), 100);
    }
    const volume = VolumeDir.open(folders.live);
    const restored = VolumeDir.open(folders.snapshot);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (line: string) => void warnings.push(line) };
    try {
      const target = { rel: "r.0.0.mca", inSnapshot: true, inVolume: true, region: REGION };
      return { merged: mergeArea(volume, restored, [target], bounds, logger), warnings };
    } finally {
      volume.close();
      restored.close();
    }
  }
  const area = chunkBounds({ x1: 0, z1: 0, x2: 63, z2: 63 });
  const cut = "header truncated: 100 bytes of 8192 (the game reads no chunk from it and generates them anew)";

  it("is refused in the snapshot: nothing says it lacked the area's chunks, which would be taken out of the world", () => {
    // Read as the game reads it, the cut file holds no chunk: the merge would count the area's live chunks as "not
    // in the snapshot" and remove them.
    expect(() => mergeCut("snapshot", area)).toThrow(
      `the snapshot's r.0.0.mca is damaged: ${cut}; nothing was changed`,
    );
  });

  it("in the live world holds no chunk to keep: the area's chunks come back into a whole file, and the log says so", () => {
    const { merged, warnings } = mergeCut("live", area);
    const inArea = [...regionChunks(readFileSync((REAL as { path: string }).path)).keys()].filter((i) =>
      inCells(area, i & 31, i >> 5),
    ).length;
    expect(inArea).toBeGreaterThan(0);
    expect(merged.files[0]?.merge).toMatchObject({ restored: inArea, removed: 0, kept: 0 });
    expect(warnings[0]).toBe(`r.0.0.mca: the live file is damaged (${cut}): no chunk outside the area to keep`);
  });
});
