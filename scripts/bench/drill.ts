import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildWorld, startPanelStandIn, toolEnv } from "@mcops/testkit";
import { fmt, median, ratio, writeBackupEnv } from "./lib.ts";

/**
 * Issue 16: `backup drill` of a generated ~300 MiB world (real region files, zlib chunks as the game writes them by
 * default) against a plain `restic restore` of the same snapshot into a new directory; target at most 1.3x. Also the
 * chunks the drill checks per second. Rounds interleaved, medians.
 */
const BIN = fileURLToPath(new URL("../../packages/backup/dist/backup.mjs", import.meta.url));

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, stdout });
    });
  });
}

/** A world of about `mib` MiB: as many region files (1024 chunks of 24 sections each) as it takes. */
function makeWorld(worldDir: string, mib: number) {
  const probe = mkdtempSync(join(tmpdir(), "mcops-bench-probe-"));
  const options = { chunksPerRegion: 1024, sections: 24, variety: 16, compressions: [2] as const, players: 8 };
  const one = buildWorld(probe, { ...options, regions: 1 });
  rmSync(probe, { recursive: true, force: true });
  const perRegion = one.bytes / one.regionFiles.length;
  const regions = Math.max(1, Math.round((mib * 1024 * 1024) / perRegion / 3) - 2);
  writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
  return buildWorld(worldDir, { ...options, regions });
}

export async function benchDrill(mib = 300, rounds = 3): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "mcops-bench-drill-"));
  const worldDir = join(root, "volume");
  mkdirSync(worldDir, { recursive: true });
  const world = makeWorld(worldDir, mib);
  const password = join(root, "password");
  writeFileSync(password, "bench password\n", { mode: 0o600 });
  chmodSync(password, 0o600);
  const panel = await startPanelStandIn({ servers: [{ state: "offline" }] });
  const env = toolEnv(root, { RCLONE_CONFIG_MCOPSTEST_TYPE: "local" });
  const repository = `rclone:mcopstest:${root}/repo`;
  writeBackupEnv(env.MCOPS_CONFIG_DIR as string, { panel, worldDir, repository, password });
  const restic = { ...env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: password };
  const restoreMs: number[] = [];
  const drillMs: number[] = [];
  let chunks = 0;
  try {
    await run(BIN, ["init"], env);
    await run(BIN, [], env);
    const [snapshot] = JSON.parse((await run("restic", ["snapshots", "--json"], restic)).stdout) as Array<{
      id: string;
    }>;
    const includes = world.worlds.flatMap((w) => ["--include", join(worldDir, w)]);
    for (let round = 0; round < rounds + 1; round++) {
      const target = join(root, `restore-${round}`);
      const plain = await run("restic", ["restore", snapshot?.id as string, "--target", target, ...includes], restic);
      rmSync(target, { recursive: true, force: true });
      const drill = await run(BIN, ["drill", snapshot?.id as string], env);
      if (round === 0) continue; // warm-up: the page cache and restic's own cache
      restoreMs.push(plain.ms);
      drillMs.push(drill.ms);
    }
    const log = readFileSync(join(root, "log", "mc-backup.log"), "utf8");
    chunks = Number(/=== Drill done === .*chunks (\d+)/.exec(log)?.[1] ?? 0);
  } finally {
    await panel.close();
    rmSync(root, { recursive: true, force: true });
  }
  const restore = median(restoreMs);
  const drill = median(drillMs);
  console.log(
    `backup drill of a generated ${(world.bytes / 1024 / 1024).toFixed(0)} MiB world (${world.regionFiles.length} region files, ${world.chunks} chunks, zlib), ${rounds} rounds, medians`,
  );
  console.log(`  restic restore alone          ${fmt(restore)}`);
  console.log(`  backup drill                  ${fmt(drill)}   ratio ${ratio(drill, restore)} (target <= 1.3x)`);
  console.log(
    `  chunks checked ${chunks}: ${Math.round(chunks / (drill / 1000))} chunks/s over the whole drill, ${Math.round(chunks / ((drill - restore) / 1000))} chunks/s in the time it adds to the restore`,
  );
}
