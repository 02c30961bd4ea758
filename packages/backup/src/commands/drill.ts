import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { BusyError, ConfigError, JobError, McopsError, UsageError } from "@mcops/core/errors";
import { record } from "@mcops/core/events";
import { formatBytes, formatDuration, parseDuration } from "@mcops/core/format";
import { COLOURS, type Notifier, toolNotifier } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { sampledWords } from "@mcops/core/records";
import { type Gauge, writeGauges } from "@mcops/core/textfile";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import { resticFor, unlockedOnce } from "@mcops/world/clients";
import type { Restic, Snapshot } from "@mcops/world/restic";
import { loadSettings, type Settings } from "@mcops/world/settings";
import { stopIfAborted } from "@mcops/world/snapshot";
import { levelName } from "@mcops/world/world";
import { byDimension, dimensionsIn, snapshotWorlds } from "../dimensions.ts";
import { compareWithLast, type Drop, olderThanLast, readLastDrill, writeLastDrill } from "../drill/last-drill.ts";
import { CheckerOutOfMemory, CheckerPool, checkerEntry, threadsFor } from "../drill/pool.ts";
import { checkWorld, type WorldCheckReport } from "../drill/world-check.ts";
import {
  backupLogger,
  checkRoom,
  largestFile,
  pickSnapshot,
  removeLeftovers,
  roomHint,
  snapshotTime,
  stamp,
  takeBackupLock,
} from "../job.ts";

type DrillContext = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal" | "atExit">;

export interface DrillOptions {
  /** A snapshot id (short or full); the newest of this server by default. */
  snapshot?: string | undefined;
  /** The directory the scratch copy is made in (default: the state directory's drill/). */
  scratch?: string | undefined;
  /** After this long, the rest of the chunks are sampled. */
  budgetMs: number;
  /** Wait for a running backup instead of exiting busy. */
  wait?: boolean | undefined;
  /** false: no check that the scratch directory's disk has room for the world (--no-room-check). */
  roomCheck?: boolean | undefined;
}

/**
 * What the drill's settings loader hands: backup.env's settings, and for a drill its --budget; --list-dimensions
 * restores and checks nothing, and reads neither --budget nor --memory.
 */
export type DrillSettings = { list: true; settings: Settings } | { list: false; settings: Settings; budgetMs: number };

/**
 * The drill's settings loader (cli.ts). A drill's --budget is read first, so that a usage error comes before a
 * configuration error; then backup.env, with --memory (`args`, the parsed command line) over DRILL_MEMORY.
 */
export function loadDrill(
  ctx: Pick<ToolContext, "paths" | "env">,
  args: { listDimensions: boolean; budget: string } & Record<string, unknown>,
): DrillSettings {
  if (args.listDimensions) return { list: true, settings: loadSettings(ctx) };
  const budgetMs = parseDuration(args.budget);
  return { list: false, settings: loadSettings(ctx, args), budgetMs };
}

/** The scratch directories of drills are named so, in their parent: a drill killed with -9 leaves one, the next removes it. */
const SCRATCH_PREFIX = "mcops-drill-";

/** One drill, as its steps share it. */
interface Drill {
  ctx: DrillContext;
  settings: Settings;
  logger: Logger;
  notifier: Notifier;
  started: number;
  snapshot?: Snapshot | undefined;
}

/**
 * `backup drill`: proves the newest backup restores into a world the game can open (issue 16). Under the backup lock,
 * restores the snapshot's world into a private scratch directory outside the server volume, checks level.dat, every
 * region file's header and chunks, and the players' files, and says the result in mc-backup.log, in the channel and
 * as gauges. The scratch directory goes on every path: the end of the run, a failure, a signal (the second one too).
 */
export async function runDrill(ctx: DrillContext, options: DrillOptions, settings: Settings): Promise<number> {
  const logger = backupLogger(ctx);
  const memoryMiB = drillMemoryMiB(settings.DRILL_MEMORY);
  const scratchParent = scratchParentOf(ctx, settings, options.scratch);
  // docs/contract.md: a webhook.env others can read is refused (78) before anything is done.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await takeBackupLock(ctx, "backup drill", options.wait ?? false);
  const drill: Drill = { ctx, settings, logger, notifier, started: ctx.clock.now() };
  let pool: CheckerPool | undefined;
  try {
    // The checker threads start now: they load while restic opens the repository and restores.
    pool = new CheckerPool({ entry: checkerEntry(), memoryMiB, threads: threadsFor(memoryMiB) });
    const restic = resticFor(ctx, settings, logger);
    const { snapshot, worlds } = await planDrill(drill, restic, options.snapshot);
    drill.snapshot = snapshot;
    record(logger, { type: "drill.started", at: ctx.clock.now(), snapshot: snapshot.short_id });
    const checkers = pool;
    const report = await inScratch(drill, scratchParent, async (scratch) => {
      if (options.roomCheck === false) logger.info("room for the drill not checked (--no-room-check)");
      else await checkSpace(drill, restic, snapshot, scratchParent);
      if (checkers.failure) throw checkers.failure; // threads that could not start: no restore for nothing
      const world = await restoreScratch(restic, snapshot, scratch, settings.WORLD_DIR, worlds, logger);
      stopIfAborted(ctx.signal);
      logger.info(`snapshot ${snapshot.short_id} restored into ${world}; checking ${worlds.join(", ")}`);
      return checkWorld(world, {
        worlds,
        budgetMs: options.budgetMs,
        now: () => ctx.clock.now(),
        signal: ctx.signal,
        pool: checkers,
      }).catch((error: unknown) => {
        if (!(error instanceof CheckerOutOfMemory)) throw error;
        throw new JobError(error.message, {
          hint: "something in that file is built to exhaust memory, or DRILL_MEMORY is too small for this world",
        });
      });
    });
    stopIfAborted(ctx.signal);
    const damage = report.damage[0];
    if (damage) throw new DamagedSnapshot(report);
    await reportVerified(drill, report);
    return 0;
  } catch (error) {
    throw await reportFailed(drill, error);
  } finally {
    await pool?.close();
    lock.release();
  }
}

/**
 * The snapshot's `worlds` (folders of WORLD_DIR) into the scratch directory, through a descriptor of it (restic's
 * restoreInto): however long the scratch directory's path (--scratch), restic writes each file by a path no longer than
 * the one it was backed up by (from restic 0.16), so that whatever the backup read restores. Returns where the copy of
 * WORLD_DIR is.
 */
async function restoreScratch(
  restic: Restic,
  snapshot: Snapshot,
  scratch: string,
  worldDir: string,
  worlds: string[],
  logger: Logger,
): Promise<string> {
  const dir = VolumeDir.open(scratch, "the scratch directory");
  try {
    const restored = await unlockedOnce(restic, logger, () =>
      restic.restoreInto(
        snapshot.id,
        dir,
        worldDir,
        worlds.map((name) => join(worldDir, name)),
      ),
    );
    restored.close();
    return restored.path;
  } finally {
    dir.close();
  }
}

/** A snapshot that restored, but into a world the game could not open whole: exit 1, naming the first damaged file. */
class DamagedSnapshot extends JobError {
  readonly report: WorldCheckReport;
  constructor(report: WorldCheckReport) {
    const [first] = report.damage;
    const more = report.damage.length > 1 ? ` (and ${report.damage.length - 1} more damaged)` : "";
    super(`${first?.file}: ${first?.reason}${more}`, { hint: "restore an older snapshot if this one is needed" });
    this.report = report;
  }
}

/** Where the scratch directories are made: --scratch, or the state directory's drill/; never inside the volume. */
function scratchParentOf(ctx: Pick<ToolContext, "paths">, settings: Settings, scratch: string | undefined): string {
  if (scratch === undefined) return join(ctx.paths.stateDir, "drill");
  if (!isAbsolute(scratch)) {
    throw new UsageError(`--scratch ${scratch} is not an absolute path`, { hint: "give a directory such as /var/tmp" });
  }
  const inside = relative(resolve(settings.WORLD_DIR), resolve(scratch));
  if (!inside.startsWith("..") && !isAbsolute(inside)) {
    throw new UsageError(`--scratch ${scratch} is inside the server volume`, {
      hint: "the drill restores outside WORLD_DIR, where the game's user cannot reach; give another directory",
    });
  }
  return scratch;
}

/**
 * The snapshot to restore and the world's directories it holds: the level's, then the Bukkit worlds beside it
 * (`_nether`, `_the_end`, and any other `<level>_<name>` the backup took).
 */
async function planDrill(
  { settings }: Drill,
  restic: Restic,
  wanted: string | undefined,
): Promise<{ snapshot: Snapshot; worlds: string[] }> {
  const volume = VolumeDir.open(settings.WORLD_DIR);
  let level: string;
  try {
    level = levelName(volume);
  } finally {
    volume.close();
  }
  const snapshot = pickSnapshot(await restic.snapshots(), { id: wanted }, settings.tags);
  const worlds = snapshotWorlds(snapshot.paths, settings.WORLD_DIR, level);
  if (!snapshot.paths.includes(join(settings.WORLD_DIR, level))) {
    throw new JobError(`snapshot ${snapshot.short_id} does not hold the world "${level}" of ${settings.WORLD_DIR}`, {
      hint: `it holds ${snapshot.paths.join(", ")}`,
    });
  }
  return { snapshot, worlds };
}

/**
 * Runs `fn` with a new private scratch directory (mode 700, an unpredictable name) in `parent`, and removes it
 * afterwards whatever happens; a second signal, which ends the run at once, removes it too. Scratch directories left
 * by a drill killed with -9 are removed first (the backup lock says no other drill runs).
 */
async function inScratch<T>(drill: Drill, parent: string, fn: (scratch: string) => Promise<T>): Promise<T> {
  const { ctx, logger } = drill;
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  removeLeftovers(parent, SCRATCH_PREFIX, "a drill", logger);
  const scratch = mkdtempSync(join(parent, `${SCRATCH_PREFIX}${stamp(ctx.clock.now())}-`));
  const remove = async (): Promise<void> => {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
    ctx.atExit.delete(remove);
  };
  ctx.atExit.add(remove);
  try {
    return await fn(scratch);
  } finally {
    await remove();
  }
}

/** Stops (exit 75) before restoring when the snapshot and a tenth more would not fit where the scratch copy goes. */
async function checkSpace(drill: Drill, restic: Restic, snapshot: Snapshot, parent: string): Promise<void> {
  const free = "free some space, or give a directory on a larger disk with --scratch DIR";
  let room: { free: number; needed: number };
  try {
    room = checkRoom(parent, await restic.restoreSize(snapshot), { for: "the drill", of: "the snapshot", hint: free });
  } catch (error) {
    if (!(error instanceof BusyError)) throw error;
    // Only on a refusal: the file that makes the snapshot so large, which may be a sparse one the game's user made
    // (listed by its whole size). The refusal stands without it.
    const nodes = await restic.ls(snapshot.id, snapshot.paths, true).catch(() => []);
    throw new BusyError(error.message, { hint: roomHint(free, largestFile(nodes, drill.settings.WORLD_DIR)) });
  }
  drill.logger.info(`${formatBytes(room.free)} free in ${parent}; the drill needs ${formatBytes(room.needed)}`);
}

/**
 * The done line, the message and the gauges of a snapshot that verified: green, or yellow when a dimension holds fewer
 * chunks or the level fewer players than at the last drill that verified (a zeroed header or a deleted player's file
 * looks like a chunk never generated or a player who never joined).
 */
async function reportVerified(drill: Drill, report: WorldCheckReport): Promise<void> {
  const { ctx, logger, notifier } = drill;
  const snapshot = drill.snapshot as Snapshot;
  const tookMs = ctx.clock.now() - drill.started;
  const took = formatDuration(tookMs);
  const sampledChunks = report.sampled ? { checked: report.chunks, present: report.chunksPresent } : undefined;
  const sampled = sampledChunks && sampledWords(sampledChunks);
  const last = readLastDrill(ctx.paths, logger);
  const older = olderThanLast(last, snapshot.time);
  const drops = older ? [] : compareWithLast(last, report);
  record(logger, {
    type: "drill.done",
    at: ctx.clock.now(),
    snapshot: snapshot.short_id,
    files: report.files,
    chunks: report.chunks,
    tookMs,
    sampled: sampledChunks,
  });
  for (const drop of drops) logger.warn(`fewer than at the last drill: ${describeDrop(drop)}`);
  const players = report.playersRead < report.players ? `${report.playersRead} of ${report.players}` : undefined;
  if (players) logger.info(`the players' share of the time budget ran out: ${players} players' files were read whole`);
  const budget = budgetWords(sampled, players);
  const fewer = drops.length
    ? `\nFewer than at the last drill (${drops[0]?.since}): ${drops.map(describeDrop).join("; ")}. If nobody trimmed the world, restore an older snapshot of what is missing.`
    : "";
  await notifier.send({
    title: drops.length ? "Backup verified, with fewer chunks or players" : "Backup verified",
    description: `Snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)} restores into a world the game can open: ${report.files} files, ${report.chunks} chunks checked in ${took}.\n${describeWorld(report)}${budget}${fewer}`,
    colour: drops.length ? COLOURS.warning : COLOURS.success,
    category: "backup",
    // Dimension names come from the volume's folders: shown literally.
    fromGame: true,
  });
  if (older) {
    logger.info(
      `snapshot ${snapshot.short_id} is older than ${last?.snapshot}, which the last drill verified: its counts are neither compared nor kept`,
    );
  } else
    writeLastDrill(ctx.paths, {
      snapshot: snapshot.short_id,
      snapshotTime: snapshot.time,
      time: ctx.clock.now(),
      report,
    });
  writeDrillGauges(drill, { success: true, tookMs, chunks: report.chunks, report, drops: drops.length });
}

/**
 * What the time budget left out, for the message: "1943 of 2210 chunks" checked (a sample of the rest), "200 of 3000"
 * players' files read whole (the rest sampled or only opened and sized); empty when nothing was.
 */
function budgetWords(chunks: string | undefined, players: string | undefined): string {
  const parts = [
    chunks && `${chunks} were checked, a sample of the rest`,
    players && `${players} players' files were read whole, the rest opened and sized`,
  ].filter(Boolean);
  return parts.length ? `\nThe time budget ran out: ${parts.join("; ")}.` : "";
}

/** "overworld 1943 chunks, nether 120, DIM-6 40; 3 players" */
function describeWorld(report: WorldCheckReport): string {
  const names = Object.keys(report.dimensions).sort(byDimension);
  const dimensions = names.map((name, i) => `${name} ${report.dimensions[name]?.chunks}${i === 0 ? " chunks" : ""}`);
  const players = `${report.players} player${report.players === 1 ? "" : "s"}`;
  return `${dimensions.length ? `${dimensions.join(", ")}; ` : ""}${players}`;
}

function describeDrop(drop: Drop): string {
  return drop.what === "players"
    ? `players ${drop.before} → ${drop.now}`
    : `${drop.what} ${drop.before} → ${drop.now} chunks`;
}

/** The failed line, the red message and the gauges of a drill that did not verify; returns what to throw. */
async function reportFailed(drill: Drill, error: unknown): Promise<McopsError> {
  const { ctx, logger, notifier, settings } = drill;
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof DamagedSnapshot) {
    for (const { file, reason: why } of error.report.damage) logger.warn(`damaged: ${file}: ${why}`, { echo: false });
  }
  record(
    logger,
    { type: "drill.failed", at: ctx.clock.now(), snapshot: drill.snapshot?.short_id, reason },
    { echo: false },
  );
  await notifier.send({
    title: "Backup drill failed",
    description: `${drill.snapshot ? `Snapshot ${drill.snapshot.short_id}: ` : ""}${reason}\nSee ${settings.logFile} on the server.`,
    colour: COLOURS.error,
    category: "backup",
    // File names and reasons come from the server volume: shown literally, never as Markdown.
    fromGame: true,
  });
  const chunks = error instanceof DamagedSnapshot ? error.report.chunks : 0;
  writeDrillGauges(drill, { success: false, tookMs: ctx.clock.now() - drill.started, chunks });
  if (error instanceof McopsError) return error;
  return new JobError(reason, { hint: `see ${settings.logFile}`, cause: error });
}

/** mcops_drill.prom: when the last drill ran, whether it verified, how much it checked; a failed one keeps the last good time. */
function writeDrillGauges(
  { ctx, settings, logger }: Drill,
  result: { success: boolean; tookMs: number; chunks: number; report?: WorldCheckReport; drops?: number },
): void {
  const now = Math.round(ctx.clock.now() / 1000);
  const gauges: Gauge[] = [
    { name: "mcops_drill_last_run_timestamp_seconds", help: "When the last restore drill ended.", value: now },
    {
      name: "mcops_drill_success",
      help: "1 when the last restore drill verified its snapshot.",
      value: result.success ? 1 : 0,
    },
    { name: "mcops_drill_chunks_checked", help: "Chunks the last restore drill checked.", value: result.chunks },
    {
      name: "mcops_drill_duration_seconds",
      help: "How long the last restore drill took.",
      value: result.tookMs / 1000,
      digits: 3,
    },
  ];
  if (result.report) {
    gauges.push({
      name: "mcops_drill_fewer",
      help: "Dimensions (and the players) with fewer chunks (players) than at the drill before; 0 when none.",
      value: result.drops ?? 0,
    });
    for (const [dimension, count] of Object.entries(result.report.dimensions)) {
      gauges.push({
        name: "mcops_drill_dimension_chunks",
        help: "Terrain chunks of each dimension of the snapshot the last drill verified.",
        value: count.chunks,
        labels: { dimension },
      });
    }
    gauges.push({
      name: "mcops_drill_players",
      help: "Players' files in that snapshot.",
      value: result.report.players,
    });
  }
  if (result.success) {
    gauges.push({
      name: "mcops_drill_last_success_timestamp_seconds",
      help: "When a restore drill last verified a snapshot.",
      value: now,
    });
  }
  writeGauges(gauges, {
    dir: settings.BACKUP_TEXTFILE_DIR,
    file: "mcops_drill.prom",
    serverId: settings.SERVER_ID,
    logger,
    keep: ["mcops_drill_last_success_timestamp_seconds"],
  });
}

/** DRILL_MEMORY in MiB: at least 64, for the threads' own start. */
function drillMemoryMiB(size: string): number {
  const units: Record<string, number> = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };
  const mib = Math.floor(Number(size.slice(0, -1)) * (units[size.slice(-1).toLowerCase()] ?? 0));
  if (mib < 64) {
    throw new ConfigError(`DRILL_MEMORY=${size} is less than the 64M the checker needs to start`, {
      where: "DRILL_MEMORY",
      hint: "leave it at 512M, or give at least 64M",
    });
  }
  return mib;
}

/**
 * `backup drill --list-dimensions [snapshot]`: the dimensions a snapshot's world holds, by the names `backup restore
 * --dimension` takes, and their folders; read from the snapshot's listing, nothing restored.
 */
export async function listDimensions(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  options: { snapshot?: string | undefined },
  settings: Settings,
): Promise<number> {
  const logger = backupLogger(ctx);
  const restic = resticFor(ctx, settings, logger);
  const { snapshot, worlds } = await planDrill({ ctx, settings, logger } as Drill, restic, options.snapshot);
  const nodes = await restic.ls(
    snapshot.id,
    worlds.map((name) => join(settings.WORLD_DIR, name)),
    true,
  );
  const folders = nodes.filter((n) => n.type === "dir").map((n) => relative(settings.WORLD_DIR, n.path));
  const lines = dimensionsIn(folders, worlds).map(({ name, folder }) => `${name.padEnd(24)} ${folder}`);
  ctx.stdout.write(`Dimensions of snapshot ${snapshot.short_id}:\n${lines.map((l) => `  ${l}`).join("\n")}\n`);
  return 0;
}
