import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
