import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { Paths } from "./paths.ts";

/**
 * The idle monitor's latest health figures (issue 18), kept in its state file for the dashboard to show: the last tick
 * rate asked, memory used over the limit, free space on the volume's disk and restic's cache's.
 */
export interface HealthFigures {
  /** Epoch ms of the decision that measured them. */
  at: number;
  tps?: number | undefined;
  memory?: number | undefined;
  volumeFree?: number | undefined;
  cacheFree?: number | undefined;
}

/** The idle monitor's state file in the state directory. */
export const IDLE_STATE_FILE = "idle-monitor.json";

const MAX_STATE_BYTES = 256 * 1024;

/** The figures as the idle monitor last wrote them; undefined when there are none (or the file is not its). */
export function readHealthFigures(paths: Paths): HealthFigures | undefined {
  let text: string;
  try {
    const fd = openSync(join(paths.stateDir, IDLE_STATE_FILE), "r");
    try {
      const buffer = Buffer.alloc(Math.min(fstatSync(fd).size, MAX_STATE_BYTES));
      text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  try {
    const health = (JSON.parse(text) as { health?: Record<string, unknown> }).health;
    if (!health || typeof health.at !== "number") return undefined;
    const ratio = (key: string) => (typeof health[key] === "number" ? (health[key] as number) : undefined);
    return {
      at: health.at,
      tps: ratio("tps"),
      memory: ratio("memory"),
      volumeFree: ratio("volumeFree"),
      cacheFree: ratio("cacheFree"),
    };
  } catch {
    return undefined;
  }
}
