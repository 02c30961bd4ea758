import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { changeChunkAsGame, chunkNbt, regionChunks } from "@mcops/testkit";
import { BACKUP_BIN, backedUp, closeRepo, describeRepo, fmt, makeWorld, median, type Repo, ratio, run } from "./lib.ts";

/**
 * Issue 36: `backup restore --area` of a 64×64-block area chunk by chunk (each region file the area touches written
 * anew: the snapshot's chunks in the area, the live file's others) against `--whole-regions` (those region files
 * restored whole, the behaviour before), both with `--no-backup`, on the same snapshot of testkit's ~300 MiB world
 * (drill.ts's, zlib chunks, a local rclone remote); target: chunk by chunk < 2x whole.
 *
 * The area is blocks 480,0 to 543,63: chunks 30,0 to 33,3, across the boundary of the overworld's r.0.0.mca and
 * r.1.0.mca, so four region files are merged: region/r.0.0.mca, region/r.1.0.mca, entities/r.0.0.mca and
 * poi/r.0.0.mca (the world has no r.1.0.mca in entities/ or poi/). After the backup, chunks inside the area and outside
 * it are changed as the game saves them (testkit's changeChunkAsGame). Before every restore the four live files are
 * put back exactly as they were after those changes (copies made once), so every round of each kind does the same
 * work; the directories the restores moved the replaced files into are removed then too. Both kinds stop and start the
 * server through the panel stand-in with its default timings. Rounds interleaved (one of each to warm up, then
 * `rounds` of each), medians; each restore is checked to have done its own work (checkRestored). Also where each
 * restore's time went, step by step, from the panel stand-in's record of the tool's requests, and a plain `restic
 * restore` of the same four files: the share restic has.
 */
const AREA = "480,0,543,63";
/** Region coordinates of the files the area touches, and their files (relative to the volume). */
const R00 = { x: 0, z: 0 };
const R10 = { x: 1, z: 0 };
const TOUCHED: Array<[string, { x: number; z: number }]> = [
  ["world/region/r.0.0.mca", R00],
  ["world/region/r.1.0.mca", R10],
  ["world/entities/r.0.0.mca", R00],
  ["world/poi/r.0.0.mca", R00],
];
const index = (x: number, z: number) => (x & 31) + (z & 31) * 32;
/** Changed after the backup in every touched file of its region: chunk coordinates, and whether the area has them. */
const CHANGES: Array<{ region: { x: number; z: number }; x: number; z: number; inArea: boolean }> = [
  { region: R00, x: 30, z: 0, inArea: true },
  { region: R00, x: 31, z: 3, inArea: true },
  { region: R00, x: 5, z: 5, inArea: false },
  { region: R00, x: 29, z: 2, inArea: false },
  { region: R10, x: 32, z: 1, inArea: true },
  { region: R10, x: 33, z: 3, inArea: true },
  { region: R10, x: 34, z: 0, inArea: false },
  { region: R10, x: 50, z: 20, inArea: false },
];
const MARK = "changed since the backup";

type Kind = "chunks" | "whole";

/** The changes made since the backup; copies of the touched files as they are then, under `<root>/changed`. */
function changeSinceBackup(repo: Repo): void {
  for (const [rel, region] of TOUCHED) {
    const path = join(repo.worldDir, rel);
    for (const change of CHANGES) {
      if (change.region !== region) continue;
      changeChunkAsGame(path, region, index(change.x, change.z), `${MARK}: ${change.x},${change.z}`);
    }
    mkdirSync(dirname(join(repo.root, "changed", rel)), { recursive: true });
    copyFileSync(path, join(repo.root, "changed", rel));
  }
}

/** The touched files as they were after the changes, and no directory of replaced files left from a restore. */
function resetVolume(repo: Repo): void {
  for (const [rel] of TOUCHED) {
    rmSync(join(repo.worldDir, rel), { force: true });
    copyFileSync(join(repo.root, "changed", rel), join(repo.worldDir, rel));
  }
  for (const name of readdirSync(repo.worldDir)) {
    if (name.startsWith(".mcops-pre-restore-")) rmSync(join(repo.worldDir, name), { recursive: true, force: true });
  }
}

/**
 * Each restore did its own work: the area's changes are gone either way; a change outside the area stays chunk by
 * chunk and is gone with the whole region files.
 */
function checkRestored(repo: Repo, kind: Kind): void {
  for (const [rel, region] of TOUCHED) {
    const chunks = regionChunks(readFileSync(join(repo.worldDir, rel)));
    for (const change of CHANGES) {
      if (change.region !== region) continue;
      const chunk = chunks.get(index(change.x, change.z));
      const changed = chunk !== undefined && chunkNbt(chunk).includes(MARK);
      const expected = !change.inArea && kind === "chunks";
      if (changed !== expected) {
        throw new Error(`${kind}: ${rel} chunk ${change.x},${change.z} ${changed ? "still" : "no longer"} changed`);
      }
    }
  }
}

/** Where one restore's time went, in ms, from the panel stand-in's record of the tool's requests (its clock: Date.now). */
interface Steps {
  total: number;
  /** Node's start, the settings, `restic snapshots` and the plan: until the tool's first panel request. */
  plan: number;
  /** The server's stop: from that request until the panel answered offline. */
  stop: number;
  /** restic's restore into the staging directory, the chown, the merge (chunk by chunk), the moves. */
  work: number;
  /** The server's start: from the start signal until the panel answered running. */
  start: number;
}

/** One restore of the area (`kind`), from the volume as it was after the changes; where its time went. */
async function restoreOnce(repo: Repo, kind: Kind): Promise<Steps> {
  resetVolume(repo);
  repo.panel.reset();
  const args = ["restore", "--area", AREA, "--no-backup", ...(kind === "whole" ? ["--whole-regions"] : [])];
  const spawned = Date.now();
  const { ms } = await run(BACKUP_BIN, args, repo.env);
  checkRestored(repo, kind);
  const calls = repo.panel.calls;
  const start = calls.findIndex((call) => call.signal === "start");
  const [first, stopped, started] = [calls[0], calls[start - 1], calls.at(-1)];
  if (!first?.answeredAt || !stopped?.answeredAt || !started?.answeredAt || start < 0) {
    throw new Error(`${kind}: the panel saw no stop and start: ${calls.map((c) => c.path).join(", ")}`);
  }
  const startAt = calls[start]?.at as number;
  return {
    total: ms,
    plan: first.at - spawned,
    stop: stopped.answeredAt - first.at,
    work: startAt - stopped.answeredAt,
    start: started.answeredAt - startAt,
  };
}

/** A plain `restic restore` of the touched files from the same snapshot into a new directory; its wall time. */
async function resticAlone(repo: Repo, round: number): Promise<number> {
  const target = join(repo.root, `restic-${round}`);
  const includes = TOUCHED.flatMap(([rel]) => ["--include", join(repo.worldDir, rel)]);
  const { ms } = await run("restic", ["restore", repo.snapshot, "--target", target, ...includes], repo.restic);
  rmSync(target, { recursive: true, force: true });
  return ms;
}

export async function benchRestoreArea(size = 300, rounds = 5, warmup = 1): Promise<void> {
  const repo = await backedUp("restore-area", (dir) => makeWorld(dir, size));
  try {
    if (!repo.world.regionFiles.includes("world/region/r.1.0.mca")) throw new Error("the world has no r.1.0.mca");
    changeSinceBackup(repo);
    // The server runs: each restore stops it and starts it again through the stand-in.
    repo.panel.setState("running");
    const steps: Record<Kind, Steps[]> = { chunks: [], whole: [] };
    const restic: number[] = [];
    for (let round = 0; round < warmup + rounds; round++) {
      const chunks = await restoreOnce(repo, "chunks");
      const whole = await restoreOnce(repo, "whole");
      const plain = await resticAlone(repo, round);
      if (round < warmup) continue; // the page cache and restic's own cache
      steps.chunks.push(chunks);
      steps.whole.push(whole);
      restic.push(plain);
    }
    report(repo, rounds, steps, median(restic));
  } finally {
    await closeRepo(repo);
  }
}

const STEPS: Array<[keyof Steps, string]> = [
  ["plan", "Node, restic snapshots, the plan"],
  ["stop", "the server's stop (panel)"],
  ["work", "restic restore, chown, merge, moves"],
  ["start", "the server's start (panel)"],
];

function report(repo: Repo, rounds: number, steps: Record<Kind, Steps[]>, restic: number): void {
  const mib = TOUCHED.reduce((sum, [rel]) => sum + readFileSync(join(repo.root, "changed", rel)).length, 0) / 2 ** 20;
  const m = (kind: Kind, step: keyof Steps) => median(steps[kind].map((s) => s[step]));
  const [chunks, whole] = [m("chunks", "total"), m("whole", "total")];
  console.log(
    `backup restore --area ${AREA} (chunks 30,0 to 33,3: 16 chunks across r.0.0 and r.1.0; ${TOUCHED.length} region files, ${mib.toFixed(0)} MiB) of testkit's generated ${describeRepo(repo)}, --no-backup, local rclone remote, ${rounds} rounds interleaved, medians`,
  );
  console.log(`  --whole-regions (the baseline)           ${fmt(whole)}`);
  console.log(
    `  chunk by chunk                           ${fmt(chunks)}   ratio ${ratio(chunks, whole)} (target < 2x: ${chunks < 2 * whole ? "met" : "NOT met"})`,
  );
  console.log("  step by step (from the panel stand-in's record), whole regions / chunk by chunk:");
  for (const [step, label] of STEPS) {
    const [w, c] = [m("whole", step), m("chunks", step)];
    console.log(
      `    ${label.padEnd(38)} ${fmt(w).padStart(10)} / ${fmt(c).padStart(10)}   (${c < w ? "-" : "+"}${fmt(Math.abs(c - w))})`,
    );
  }
  console.log(`  a plain restic restore of those files    ${fmt(restic)}`);
}
