import { spawnSync } from "node:child_process";

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
export function interleaved(commands: Array<[string, string[]]>, runs: number, warmup = 3): number[][] {
  const times = commands.map(() => [] as number[]);
  for (let i = 0; i < warmup + runs; i++) {
    commands.forEach(([command, args], c) => {
      const ms = timeCommand(command, args);
      if (i >= warmup) times[c]?.push(ms);
    });
  }
  return times;
}

export const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
