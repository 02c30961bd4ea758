import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { resolvePaths } from "@mcops/core/paths";
import {
  buildRealWorld,
  changeChunkAsGame,
  chunkNbt,
  fifoWitness,
  prismarineReadable,
  type RawChunk,
  realRegions,
  regionChunks,
  saveChunkAsGame,
} from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { runRestore } from "../src/commands/restore.ts";
import {
  BIN,
  backUp,
  chunkIndex,
  chunksAt,
  expectedMerge,
  expectSameChunks,
  inProcess,
  type Server,
  startServer,
} from "./harness.ts";

/**
 * Issue 36: `backup restore --area` brings back the chunks of the area, and every other chunk of the world stays as
 * the game last saved it. Real region files (the game's own, prismarine-provider-anvil's fixtures) left unpadded as a
 * running server leaves them, changed after the backup as the game saves a chunk (compressed again, put in free
 * sectors or appended, header updated), real restic, the built executable; every file read back with the test kit's
 * own reader and prismarine-provider-anvil's.
 */

let server: Server;
afterEach(async () => {
  await server?.close();
});

const file = (rel: string) => join(server.worldDir, rel);
const chunksOf = (rel: string): Map<number, RawChunk> => chunksAt(file(rel));
const index = chunkIndex;
const asideDir = () => readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-pre-restore-"));
const lastMessage = () => server.discord.messages.at(-1)?.body.embeds[0] as { title: string; description: string };

/** A running server whose overworld is the game's 1.21.1 region file (and its entities/ and poi/), backed up. */
async function realWorld(): Promise<void> {
  server = await startServer({ state: "running" });
  for (const name of readdirSync(server.worldDir)) {
    if (name.startsWith("world")) rmSync(file(name), { recursive: true });
  }
  buildRealWorld(server.worldDir, { layout: "vanilla", unpadded: true });
  // entities/ and poi/ hold region files of the same format (the restore never reads inside a chunk).
  for (const folder of ["entities", "poi"]) {
    mkdirSync(file(`world/${folder}`));
    copyFileSync(file("world/region/r.0.0.mca"), file(`world/${folder}/r.0.0.mca`));
  }
  expect((await server.run(["init"])).code).toBe(0);
}

/**
 * The area 48,48 to 63,63 restored in this process, without a pre-restore snapshot; `game` runs at its first move, as
 * a server started from the panel meanwhile would write.
 */
function restoreWhileGameWrites(game: () => void): Promise<number> {
  let moves = 0;
  return runRestore(inProcess(server), {
    area: "48,48,63,63",
    snapshot: "latest",
    backup: false,
    serverTimeoutMs: 60_000,
    beforeMove: () => {
      if (++moves === 1) game();
    },
  });
}

describe("backup restore --area, chunk by chunk", () => {
  it("brings back the area's chunks in region/, entities/ and poi/; a chunk outside it saved since keeps its change", async () => {
    await realWorld();
    const folders = ["region", "entities", "poi"].map((f) => `world/${f}/r.0.0.mca`);
    await backUp(server);
    const snapshot = folders.map(chunksOf);
    // After the backup: a griefer wrecks chunk 3,3 (blocks 48..63); a player builds in chunk 10,10.
    for (const rel of folders) {
      changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(3, 3), "griefed");
      changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(10, 10), "built since");
    }
    const live = folders.map(chunksOf);
    expect(live[0]?.get(index(3, 3))?.raw.equals(snapshot[0]?.get(index(3, 3))?.raw as Buffer)).toBe(false);
    const empty = readFileSync(file("world/region/r.30.30.mca"));

    const plan = await server.run(["restore", "--area", "50,50,60,62", "--dry-run"]);
    expect(plan.stderr).toBe("");
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      "Restore plan for the area 50,50 to 60,62 of the overworld (chunks 3,3 to 3,3 (1 chunk) in 1 region)",
    );
    expect(plan.stdout).toContain("3 chunks come back from 3 region files.\n");
    expect(plan.stdout).toContain(
      "Entries (3):\n  merge   world/entities/r.0.0.mca: 1 chunk from the snapshot, 224 kept\n  merge   world/poi/r.0.0.mca: 1 chunk from the snapshot, 224 kept\n  merge   world/region/r.0.0.mca: 1 chunk from the snapshot, 224 kept\n",
    );
    expect(server.panel.signals()).toEqual([]);
    expect(folders.map(chunksOf).map((c) => c.get(index(3, 3))?.raw)).toEqual(live.map((c) => c.get(index(3, 3))?.raw));

    const result = await server.run(["restore", "--area", "50,50,60,62"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    for (const [n, rel] of folders.entries()) {
      expectSameChunks(
        chunksOf(rel),
        expectedMerge(live[n] as Map<number, RawChunk>, snapshot[n] as Map<number, RawChunk>, [index(3, 3)]),
        rel,
      );
      expect(statSync(file(rel)).size % 4096).toBe(0);
      expect(await prismarineReadable(file(rel))).toBe(225);
    }
    expect(chunkNbt(chunksOf(folders[0] as string).get(index(10, 10)) as RawChunk).includes("built since")).toBe(true);
    // The zero-byte region file the game made is not the area's business.
    expect(readFileSync(file("world/region/r.30.30.mca"))).toEqual(empty);
    expect(server.panel.signals()).toEqual(["stop", "start"]);
    // What the restore replaced is kept whole.
    const kept = join(server.worldDir, asideDir()[0] as string);
    for (const [n, rel] of folders.entries()) {
      expectSameChunks(regionChunks(readFileSync(join(kept, rel))), live[n] as Map<number, RawChunk>, `aside ${rel}`);
    }
    expect(lastMessage().title).toBe("Restore completed");
    expect(lastMessage().description).toMatch(
      /^Restored the area 50,50 to 60,62 of the overworld \(chunks 3,3 to 3,3 \(1 chunk\) in 1 region\) from snapshot [0-9a-f]{8} of .*\n3 chunks come back from 3 region files\. Every other chunk is as it was\.\nWhat it replaced is kept in /,
    );
    const log = server.backupLog();
    expect(log).toContain("world/region/r.0.0.mca: 1 chunk from the snapshot, 224 kept");
  }, 120_000);

  it("on a region boundary, merges the four region files the area touches", async () => {
    await realWorld();
    // The game's own files at their own places around the origin: chunks -4..3 of each are in the area.
    const regions = realRegions();
    const files: Array<[string, string, { x: number; z: number }]> = [
      ["1.21.1", "r.0.0.mca", { x: 0, z: 0 }],
      ["1.13.2", "r.-1.-1.mca", { x: -1, z: -1 }],
      ["1.12.2", "r.0.-1.mca", { x: 0, z: -1 }],
      ["1.8.9", "r.-1.0.mca", { x: -1, z: 0 }],
    ];
    for (const [version, name] of files) {
      const real = regions.get(version);
      expect(real?.name).toBe(name);
      copyFileSync(real?.path as string, file(`world/region/${name}`));
    }
    await backUp(server);
    const inArea = (region: { x: number; z: number }) => {
      const all: number[] = [];
      for (let i = 0; i < 1024; i++) {
        const [x, z] = [region.x * 32 + (i & 31), region.z * 32 + (i >> 5)];
        if (x >= -4 && x <= 3 && z >= -4 && z <= 3) all.push(i);
      }
      return all;
    };
    const snapshot = files.map(([, name]) => chunksOf(`world/region/${name}`));
    for (const [n, [, name, region]] of files.entries()) {
      // Every chunk the game has in the area changes, and the first chunk outside it.
      const present = [...(snapshot[n] as Map<number, RawChunk>).keys()];
      const inside = present.filter((i) => inArea(region).includes(i));
      expect(inside.length, name).toBeGreaterThan(0);
      const outside = present.find((i) => !inArea(region).includes(i)) as number;
      for (const i of [...inside, outside]) changeChunkAsGame(file(`world/region/${name}`), region, i, `changed ${i}`);
    }
    const live = files.map(([, name]) => chunksOf(`world/region/${name}`));

    const result = await server.run(["restore", "--area", "-64,-64,63,63"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    let back = 0;
    for (const [n, [, name, region]] of files.entries()) {
      const rel = `world/region/${name}`;
      const expected = expectedMerge(
        live[n] as Map<number, RawChunk>,
        snapshot[n] as Map<number, RawChunk>,
        inArea(region),
      );
      expectSameChunks(chunksOf(rel), expected, rel);
      expect(await prismarineReadable(file(rel))).toBe(expected.size);
      back += inArea(region).filter((i) => snapshot[n]?.has(i)).length;
    }
    // entities/ and poi/ hold the 1.21.1 file unchanged: its chunks of the area come back as they were.
    back += 2 * inArea({ x: 0, z: 0 }).filter((i) => snapshot[0]?.has(i)).length;
    expect(lastMessage().description).toContain(`\n${back} chunks come back from 6 region files.`);
  }, 120_000);

  it("removes a chunk generated since the snapshot and makes a region file the world lost from the area's chunks", async () => {
    await realWorld();
    await backUp(server);
    const before = chunksOf("world/region/r.0.0.mca");
    const entities = chunksOf("world/entities/r.0.0.mca");
    // Chunk 20,20 (blocks 320..335) was generated after the backup; entities/r.0.0.mca was deleted.
    saveChunkAsGame(
      file("world/region/r.0.0.mca"),
      { x: 0, z: 0 },
      index(20, 20),
      chunkNbt(before.get(0) as RawChunk),
      2,
    );
    unlinkSync(file("world/entities/r.0.0.mca"));
    const live = chunksOf("world/region/r.0.0.mca");
    expect(live.has(index(20, 20))).toBe(true);

    const plan = await server.run(["restore", "--area", "0,0,335,335", "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("(chunks 0,0 to 20,20 (441 chunks) in 1 region)");
    expect(plan.stdout).toContain(
      "675 chunks come back from 3 region files; 1 the snapshot does not have goes (not generated then).\n",
    );
    expect(plan.stdout).toContain("  add     world/entities/r.0.0.mca: 225 chunks from the snapshot, 0 kept\n");
    expect(plan.stdout).toContain("  merge   world/poi/r.0.0.mca: 225 chunks from the snapshot, 0 kept\n");
    expect(plan.stdout).toContain(
      "  merge   world/region/r.0.0.mca: 225 chunks from the snapshot, 1 removed (not in the snapshot), 0 kept\n",
    );

    const result = await server.run(["restore", "--area", "0,0,335,335"]);
    expect(result.code, result.stderr).toBe(0);
    expectSameChunks(chunksOf("world/region/r.0.0.mca"), before, "region");
    expectSameChunks(chunksOf("world/entities/r.0.0.mca"), entities, "entities");
    // Only the area's chunks come back into the lost file: with a smaller area, the others stay lost.
    unlinkSync(file("world/entities/r.0.0.mca"));
    expect((await server.run(["restore", "--area", "0,0,31,15", "--no-backup"])).code).toBe(0);
    expect([...chunksOf("world/entities/r.0.0.mca").keys()].sort((a, b) => a - b)).toEqual([0, 1]);
  }, 120_000);

  it("takes a 1.21 nether whose DIM-1 held data/ alone as listed, and an area of it then removes the chunks made since", async () => {
    await realWorld();
    const nether = readdirSync(file("world/DIM-1/region")).find((n) => n !== "r.30.30.mca") as string;
    const real = readFileSync(file(`world/DIM-1/region/${nether}`));
    // The nether was loaded (its data/ saved) but no chunk of it was: the snapshot's DIM-1 holds data/ alone.
    rmSync(file("world/DIM-1/region"), { recursive: true });
    mkdirSync(file("world/DIM-1/data"));
    writeFileSync(file("world/DIM-1/data/raids.dat"), "");
    await backUp(server);
    const listed = await server.run(["drill", "--list-dimensions"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ {2}nether +world\/DIM-1$/m);
    const whole = await server.run(["restore", "--dimension", "nether", "--dry-run", "--no-backup"]);
    expect(whole.code, whole.stderr).toBe(0);

    // Since then the nether was explored: the area as the snapshot had it has no chunks, as in the overworld.
    mkdirSync(file("world/DIM-1/region"));
    writeFileSync(file(`world/DIM-1/region/${nether}`), real);
    const [, rx, rz] = /^r\.(-?\d+)\.(-?\d+)\.mca$/.exec(nether) as RegExpExecArray;
    const [x, z] = [Number(rx) * 512, Number(rz) * 512];
    const area = `${x},${z},${x + 511},${z + 511}`;
    const live = chunksOf(`world/DIM-1/region/${nether}`).size;
    expect(live).toBeGreaterThan(0);
    const result = await server.run(["restore", "--area", area, "--dimension", "nether", "--no-backup"]);
    expect(result.code, result.stderr).toBe(0);
    expect(chunksOf(`world/DIM-1/region/${nether}`).size).toBe(0);
    const kept = join(server.worldDir, asideDir()[0] as string, `world/DIM-1/region/${nether}`);
    expect(readFileSync(kept).equals(real)).toBe(true);
    // A dimension the snapshot does not hold at all is no area's: exit 1, as for --dimension.
    const end = await server.run(["restore", "--area", area, "--dimension", "DIM-42", "--dry-run", "--no-backup"]);
    expect(end.code).toBe(1);
    expect(end.stderr).toMatch(/holds no DIM-42 \(world\/DIM-42\)/);
  }, 120_000);

  it("restores an LZ4 world's chunks (region-file-compression=lz4) as they are", async () => {
    await realWorld();
    // The server saved every chunk in LZ4 (1.20.5+ with region-file-compression=lz4).
    const rel = "world/region/r.0.0.mca";
    const real = chunksOf(rel);
    writeFileSync(file(rel), Buffer.alloc(8192));
    for (const [i, chunk] of real) saveChunkAsGame(file(rel), { x: 0, z: 0 }, i, chunkNbt(chunk), 4, chunk.timestamp);
    await backUp(server);
    const snapshot = chunksOf(rel);
    expect([...snapshot.values()].every((c) => c.compression === 4)).toBe(true);
    changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(5, 5), "griefed");
    changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(6, 5), "built since");
    const live = chunksOf(rel);

    const result = await server.run(["restore", "--area", "80,80,95,95"]);
    expect(result.code, result.stderr).toBe(0);
    const after = chunksOf(rel);
    expectSameChunks(after, expectedMerge(live, snapshot, [index(5, 5)]), rel);
    for (const [i, chunk] of after)
      expect(
        chunkNbt(chunk).equals(chunkNbt(i === index(6, 5) ? (live.get(i) as RawChunk) : (snapshot.get(i) as RawChunk))),
      ).toBe(true);
  }, 120_000);

  it("brings back an external chunk (.mcc) of the area, and leaves one outside it as the game left it", async () => {
    await realWorld();
    const rel = "world/region/r.0.0.mca";
    const huge = (mark: number) =>
      Buffer.concat([
        Buffer.from([10, 0, 0, 7, 0, 1, 0x61, 0, 0x20, 0, 0]),
        Buffer.alloc(0x200000, mark),
        Buffer.from([0]),
      ]);
    // Chunks 3,3 and 10,10 were over 1 MiB: the game kept them in c.3.3.mcc and c.10.10.mcc.
    saveChunkAsGame(file(rel), { x: 0, z: 0 }, index(3, 3), huge(1), 3);
    saveChunkAsGame(file(rel), { x: 0, z: 0 }, index(10, 10), huge(2), 3);
    expect(chunksOf(rel).get(index(3, 3))?.compression).toBe(0x83);
    await backUp(server);
    const snapshotMcc = readFileSync(file("world/region/c.3.3.mcc"));
    // Since: chunk 3,3 was cleared (small again: the game deletes its .mcc), chunk 10,10 grew.
    saveChunkAsGame(file(rel), { x: 0, z: 0 }, index(3, 3), Buffer.from([10, 0, 0, 0]), 2);
    unlinkSync(file("world/region/c.3.3.mcc"));
    writeFileSync(file("world/region/c.10.10.mcc"), huge(3));
    const live = chunksOf(rel);

    const result = await server.run(["restore", "--area", "48,48,63,63"]);
    expect(result.code, result.stderr).toBe(0);
    const after = chunksOf(rel);
    expect(after.get(index(3, 3))?.raw).toEqual(Buffer.from([0, 0, 0, 1, 0x83]));
    expect(readFileSync(file("world/region/c.3.3.mcc")).equals(snapshotMcc)).toBe(true);
    expect(readFileSync(file("world/region/c.10.10.mcc")).equals(huge(3))).toBe(true);
    expect(after.get(index(10, 10))?.raw).toEqual(live.get(index(10, 10))?.raw);
  }, 120_000);

  it("refuses a region file that is a link or a FIFO before stopping anything; --whole-regions moves it aside unread", async () => {
    await realWorld();
    await backUp(server);
    const outside = join(server.root, "secret");
    writeFileSync(outside, "not the game's");
    // A FIFO nobody writes: opening it to read would hang the restore (the witness frees it and says so).
    const entities = readFileSync(file("world/entities/r.0.0.mca"));
    rmSync(file("world/entities/r.0.0.mca"));
    execFileSync("mkfifo", [file("world/entities/r.0.0.mca")]);
    const witness = fifoWitness(file("world/entities/r.0.0.mca"));
    const fifo = await server.run(["restore", "--area", "0,0,15,15"]);
    expect(await witness.end()).toBe(false);
    expect(fifo.code).toBe(1);
    expect(fifo.stderr).toMatch(/^backup: world\/entities\/r\.0\.0\.mca is a FIFO, not a region file: /);
    rmSync(file("world/entities/r.0.0.mca"));
    writeFileSync(file("world/entities/r.0.0.mca"), entities);
    rmSync(file("world/poi/r.0.0.mca"));
    symlinkSync(outside, file("world/poi/r.0.0.mca"));
    const refused = await server.run(["restore", "--area", "0,0,15,15"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "backup: world/poi/r.0.0.mca is a symbolic link, not a region file: its chunks cannot be merged — look at it (something in the server volume made it); --whole-regions moves it aside without reading it\n",
    );
    expect(server.panel.signals()).toEqual([]);
    expect(asideDir()).toEqual([]);
    expect(readFileSync(outside, "utf8")).toBe("not the game's");

    const whole = await server.run(["restore", "--area", "0,0,15,15", "--whole-regions"]);
    expect(whole.code, whole.stderr).toBe(0);
    expect(statSync(file("world/poi/r.0.0.mca")).isFile()).toBe(true);
    expect(readFileSync(outside, "utf8")).toBe("not the game's");
  }, 120_000);

  it("stops before replacing a region file the game saved after it was merged, and puts everything back", async () => {
    await realWorld();
    await backUp(server);
    const rel = "world/region/r.0.0.mca";
    changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(3, 3), "griefed");
    // While entities' file is being moved aside, the server (started from the panel) saves chunk 10,10.
    const restore = restoreWhileGameWrites(() =>
      changeChunkAsGame(file(rel), { x: 0, z: 0 }, index(10, 10), "saved meanwhile"),
    );
    await expect(restore).rejects.toThrow(
      /^restore failed: world\/region\/r\.0\.0\.mca changed after its chunks were merged: is the server running again\?; everything replaced was put back$/,
    );
    const now = chunksOf(rel);
    expect(chunkNbt(now.get(index(10, 10)) as RawChunk).includes("saved meanwhile")).toBe(true);
    expect(chunkNbt(now.get(index(3, 3)) as RawChunk).includes("griefed")).toBe(true);
    expect(readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-"))).toEqual([]);
    expect(server.panel.signals()).toEqual(["stop", "start"]);
  }, 120_000);

  it("stops before replacing a region file the game made after the merge where there was none, and puts everything back", async () => {
    await realWorld();
    await backUp(server);
    const rel = "world/region/r.0.0.mca";
    const snapshot = chunksOf(rel);
    // The live world had lost its region file: the merge makes one from the area's chunks alone.
    unlinkSync(file(rel));
    // While entities' file is being moved, the server (started from the panel) generates chunk 10,10 anew.
    const restore = restoreWhileGameWrites(() => {
      writeFileSync(file(rel), Buffer.alloc(8192));
      saveChunkAsGame(file(rel), { x: 0, z: 0 }, index(10, 10), chunkNbt(snapshot.get(0) as RawChunk), 2);
    });
    await expect(restore).rejects.toThrow(
      /^restore failed: world\/region\/r\.0\.0\.mca changed after its chunks were merged: is the server running again\?; everything replaced was put back$/,
    );
    expect([...chunksOf(rel).keys()]).toEqual([index(10, 10)]);
    expect(readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-"))).toEqual([]);
    expect(server.panel.signals()).toEqual(["stop", "start"]);
  }, 120_000);

  it("takes only the names the game gives its files: r.00.0.mca, r.-0.0.mca and c.03.3.mcc are none of the area's", async () => {
    await realWorld();
    // What a plugin or a hand left beside the game's files, in the volume and so in the snapshot.
    const others = ["r.00.0.mca", "r.-0.0.mca", "r.0.-0.mca", "r.0.0.mca.bak", "c.03.3.mcc", "c.3.03.mcc"];
    for (const name of others) copyFileSync(file("world/region/r.0.0.mca"), file(`world/region/${name}`));
    await backUp(server);
    changeChunkAsGame(file("world/region/r.0.0.mca"), { x: 0, z: 0 }, index(3, 3), "griefed");
    for (const name of others) writeFileSync(file(`world/region/${name}`), `changed since: ${name}`);

    const plan = await server.run(["restore", "--area", "50,50,60,62", "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("3 chunks come back from 3 region files.\nEntries (3):\n");
    for (const name of others) expect(plan.stdout).not.toContain(name);

    const result = await server.run(["restore", "--area", "50,50,60,62"]);
    expect(result.code, result.stderr).toBe(0);
    for (const name of others)
      expect(readFileSync(file(`world/region/${name}`), "utf8")).toBe(`changed since: ${name}`);
    expect(lastMessage().description).toContain("\n3 chunks come back from 3 region files.");
  }, 120_000);

  it("the dry run removes the copy a killed dry run left, never a running one's, and stops (exit 75) before a copy that would not fit", async () => {
    await realWorld();
    await backUp(server);
    const parent = join(resolvePaths(server.env).stateDir, "restore");
    // A dry run killed with -9 left its copy; another dry run (this process stands for it) is counting now.
    const gone = spawnSync("true").pid;
    const left = `plan-2026-11-22T07-00-00Z-${gone}-abcdef`;
    const running = `plan-2026-11-22T07-00-00Z-${process.pid}-ghijkl`;
    for (const name of [left, running]) mkdirSync(join(parent, name, "world", "region"), { recursive: true });
    const plan = await server.run(["restore", "--area", "50,50,60,62", "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(readdirSync(parent)).toEqual([running]);
    expect(server.backupLog()).toMatch(new RegExp(`WARN removing .*/${left}, left by a dry run that was killed\n`));

    // A 256 KiB tmpfs where the copy goes, in a private mount namespace: the area's 3 region files are 3 MiB.
    const tiny = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        "unshare",
        [
          "-m",
          "sh",
          "-c",
          `mount -t tmpfs -o size=256k none '${parent}' && exec "$0" "$@"`,
          process.execPath,
          BIN,
          "restore",
          "--area",
          "50,50,60,62",
          "--dry-run",
        ],
        { env: server.env, cwd: server.root },
      );
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(tiny.stderr).toMatch(
      /^backup: not enough space in .*\/restore for the dry run's copy of the snapshot's 3 region files: it needs 3\.\d+ MiB \(the files and 10 %\), 256(\.0)? KiB is free — /,
    );
    expect(tiny.code).toBe(75);
    expect(readdirSync(parent)).toEqual([running]);
    expect(server.panel.signals()).toEqual([]);
  }, 120_000);
});
