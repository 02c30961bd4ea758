import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuiltWorld, buildWorld, type PanelStandIn, startPanelStandIn, toolEnv } from "@mcops/testkit";

/** Shared helpers of the benchmarks: every figure is a ratio against a baseline measured in the same run. */

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Wall time of one run of a command, in ms; throws when it fails. */
export function timeCommand(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], env });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
  return ms;
}

/** Runs the commands interleaved (so drift in the machine's load hits all alike) and returns each one's times. */
export function interleaved(
  commands: Array<[string, string[], NodeJS.ProcessEnv?]>,
  runs: number,
  warmup = 3,
): number[][] {
  const times = commands.map(() => [] as number[]);
  for (let i = 0; i < warmup + runs; i++) {
    commands.forEach(([command, args, env], c) => {
      const ms = timeCommand(command, args, env);
      if (i >= warmup) times[c]?.push(ms);
    });
  }
  return times;
}

export const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** Resident memory of a running process, in KiB: now (/proc/<pid>/status VmRSS), or at most so far (VmHWM). */
export function rssKiB(pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
}

/** CPU time a process has used so far (user + system), in ms: /proc/<pid>/stat fields 14 and 15, in clock ticks. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Clock ticks per second (getconf CLK_TCK; 100 on Linux). */
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** A backup.env (mode 600) in `configDir` for the panel stand-in's server, the world and a repository. */
export function writeBackupEnv(
  configDir: string,
  fields: {
    panel: { url: string; apiKey: string; server: { identifier: string } };
    worldDir: string;
    repository: string;
    password: string;
  },
  extra: string[] = [],
): void {
  mkdirSync(configDir, { recursive: true });
  const file = join(configDir, "backup.env");
  const { panel } = fields;
  writeFileSync(
    file,
    [
      `CONTROL_URL=${panel.url}`,
      `CONTROL_KEY=${panel.apiKey}`,
      `SERVER_ID=${panel.server.identifier}`,
      `WORLD_DIR=${fields.worldDir}`,
      `RESTIC_REPOSITORY=${fields.repository}`,
      `RESTIC_PASSWORD_FILE=${fields.password}`,
      ...extra,
      "",
    ].join("\n"),
  );
  chmodSync(file, 0o600);
}

/**
 * The Node flags a unit gives its service (deploy/systemd/<unit>'s `Environment="MCOPS_NODE_FLAGS=..."`, which the
 * installed launcher puts before the bundle): a daemon is measured as it runs once installed.
 */
export function unitNodeFlags(unit: string): string[] {
  const text = readFileSync(new URL(`../../deploy/systemd/${unit}`, import.meta.url), "utf8");
  const flags = /^Environment="MCOPS_NODE_FLAGS=([^"]*)"$/m.exec(text)?.[1];
  return flags ? flags.split(/\s+/).filter(Boolean) : [];
}

// ---------------------------------------------------------------------------------------------------------------
// A generated world backed up by the built tool (the drill's and the area restore's benches)
// ---------------------------------------------------------------------------------------------------------------

export const BACKUP_BIN = fileURLToPath(new URL("../../packages/backup/dist/backup.mjs", import.meta.url));
export const MiB = 1024 * 1024;

/** One run of a command, asynchronous (a stand-in may live in this process): its wall time in ms and its stdout. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
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

export const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

/** A world of about `size` MiB: as many region files (1024 chunks of 24 sections each) as it takes. */
export function makeWorld(worldDir: string, size: number): BuiltWorld {
  const probe = mkdtempSync(join(tmpdir(), "mcops-bench-probe-"));
  const options = { chunksPerRegion: 1024, sections: 24, variety: 16, compressions: [2] as const, players: 8 };
  const one = buildWorld(probe, { ...options, regions: 1 });
  rmSync(probe, { recursive: true, force: true });
  const perRegion = one.bytes / one.regionFiles.length;
  const regions = Math.max(1, Math.round((size * MiB) / perRegion / 3) - 2);
  writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
  return buildWorld(worldDir, { ...options, regions });
}

/** A world backed up by the built `backup` (one snapshot), with what it takes to run the tool and restic on it. */
export interface Repo {
  root: string;
  worldDir: string;
  world: BuiltWorld;
  env: NodeJS.ProcessEnv;
  restic: NodeJS.ProcessEnv;
  panel: PanelStandIn;
  snapshot: string;
  includes: string[];
  /** Bytes in the repository's folder: what a restore reads at most. */
  repoBytes: number;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/**
 * A world made by `make` in a new directory, backed up by the built tool into a local rclone remote (with the restic
 * on PATH, or the one `backupEnv`'s PATH names).
 */
export async function backedUp(
  name: string,
  make: (worldDir: string) => BuiltWorld | Promise<BuiltWorld>,
  /** Set for the backup: e.g. PATH with another restic first, whose snapshot is then the one benched. */
  backupEnv: NodeJS.ProcessEnv = {},
): Promise<Repo> {
  const root = mkdtempSync(join(tmpdir(), `mcops-bench-${name}-`));
  let panel: PanelStandIn | undefined;
  try {
    const worldDir = join(root, "volume");
    mkdirSync(worldDir, { recursive: true });
    const world = await make(worldDir);
    const password = join(root, "password");
    writeFileSync(password, "bench password\n", { mode: 0o600 });
    chmodSync(password, 0o600);
    panel = await startPanelStandIn({ servers: [{ state: "offline" }] });
    const env = toolEnv(root, { RCLONE_CONFIG_MCOPSTEST_TYPE: "local" });
    const repository = `rclone:mcopstest:${root}/repo`;
    writeBackupEnv(env.MCOPS_CONFIG_DIR as string, { panel, worldDir, repository, password });
    const restic = { ...env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: password };
    await run(BACKUP_BIN, ["init"], { ...env, ...backupEnv });
    await run(BACKUP_BIN, [], { ...env, ...backupEnv });
    const listed = await run("restic", ["snapshots", "--json"], restic);
    const snapshot = (JSON.parse(listed.stdout) as Array<{ id: string }>)[0]?.id as string;
    const includes = world.worlds.flatMap((w) => ["--include", join(worldDir, w)]);
    return { root, worldDir, world, env, restic, panel, snapshot, includes, repoBytes: dirBytes(join(root, "repo")) };
  } catch (error) {
    await panel?.close();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

/** Stops the repository's panel stand-in and removes its directory. */
export async function closeRepo(repo: Repo): Promise<void> {
  await repo.panel.close();
  rmSync(repo.root, { recursive: true, force: true });
}

/** "336 MiB world (12 region files, 12288 chunks, zlib; restic repository 8 MiB)" */
export function describeRepo({ world, repoBytes }: Repo): string {
  return `${mib(world.bytes)} world (${world.regionFiles.length} region files, ${world.chunks} chunks, zlib; restic repository ${mib(repoBytes)})`;
}
