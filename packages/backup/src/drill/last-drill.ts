import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isoSeconds } from "@mcops/core/clock";
import { writeFileAtomic } from "@mcops/core/fs";
import type { Logger } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import * as z from "zod/mini";
import type { WorldCheckReport } from "./world-check.ts";

/**
 * What the last drill that verified found, kept in the state directory (`drill-last.json`), so the next drill can say
 * when a dimension holds fewer chunks or the level fewer players: a zeroed region header or a deleted player's file
 * passes every check (it looks like a chunk never generated, a player who never joined) and only shows as a drop.
 */
const FILE = "drill-last.json";

const lastDrillSchema = z.object({
  snapshot: z.string(),
  /** When the snapshot was taken (ISO 8601): a drill of an older one is neither compared nor kept. */
  snapshotTime: z.optional(z.string()),
  /** ISO 8601, UTC. */
  time: z.string(),
  /** Terrain chunks of each dimension, by name. */
  dimensions: z.record(z.string(), z.number()),
  players: z.number(),
});

export type LastDrill = z.infer<typeof lastDrillSchema>;

/** A dimension (or the players) with fewer than at the last drill that verified, and when that was. */
export interface Drop {
  /** A dimension's name, or "players". */
  what: string;
  before: number;
  now: number;
  since: string;
}

export function readLastDrill(paths: Pick<Paths, "stateDir">, logger: Pick<Logger, "warn">): LastDrill | undefined {
  let text: string;
  try {
    text = readFileSync(join(paths.stateDir, FILE), "utf8");
  } catch {
    return undefined;
  }
  try {
    return lastDrillSchema.parse(JSON.parse(text));
  } catch {
    logger.warn(`${join(paths.stateDir, FILE)} is not a drill's record; the counts start again from this drill`);
    return undefined;
  }
}

export function writeLastDrill(
  paths: Pick<Paths, "stateDir">,
  drill: { snapshot: string; snapshotTime: string; time: number; report: WorldCheckReport },
): void {
  const record: LastDrill = {
    snapshot: drill.snapshot,
    snapshotTime: drill.snapshotTime,
    time: isoSeconds(drill.time),
    dimensions: Object.fromEntries(Object.entries(drill.report.dimensions).map(([name, d]) => [name, d.chunks])),
    players: drill.report.players,
  };
  writeFileAtomic(join(paths.stateDir, FILE), `${JSON.stringify(record, null, 2)}\n`, 0o644);
}

/**
 * Whether a snapshot taken at `snapshotTime` is older than the one the last drill verified: a drill of an older
 * snapshot (`backup drill <id>`) says nothing of what was lost since, and must not become what the next one is
 * compared with.
 */
export function olderThanLast(last: LastDrill | undefined, snapshotTime: string): boolean {
  return last?.snapshotTime !== undefined && Date.parse(snapshotTime) < Date.parse(last.snapshotTime);
}

/** The dimensions (and the players) that hold fewer now than at the last drill; none without a last drill. */
export function compareWithLast(last: LastDrill | undefined, report: WorldCheckReport): Drop[] {
  if (!last) return [];
  const drops: Drop[] = [];
  for (const [what, before] of Object.entries(last.dimensions)) {
    const now = report.dimensions[what]?.chunks ?? 0;
    if (now < before) drops.push({ what, before, now, since: last.time });
  }
  if (report.players < last.players) {
    drops.push({ what: "players", before: last.players, now: report.players, since: last.time });
  }
  return drops;
}
