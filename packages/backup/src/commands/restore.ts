import { rmSync } from "node:fs";
import { join } from "node:path";
import { BusyError, JobError, type McopsError, UsageError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import {
  COLOURS,
  escapeGameText,
  gameState,
  type Notifier,
  type PanelClient,
  PanelError,
  stopGame,
  toolNotifier,
} from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import { playersInGameLog } from "@mcops/game-log/game-log";
import { panelFor, resticFor } from "@mcops/world/clients";
import type { Restic, Snapshot } from "@mcops/world/restic";
import { loadSettings, type Settings } from "@mcops/world/settings";
import { type SafetySnapshot, safetySnapshot } from "@mcops/world/snapshot";
import { levelName } from "@mcops/world/world";
import {
  backupLogger,
  checkRoom,
  type LargestFile,
  largestFile,
  pickSnapshot,
  roomHint,
  snapshotTime,
  stamp,
  takeBackupLock,
} from "../job.ts";
import { type AreaMerge, checkUnchanged, describeMerge, mergeArea, mergeTotals } from "../restore/area.ts";
import { type ChunkBounds, chunkBounds } from "../restore/chunks.ts";
import { describePlayer, type Player, refuseIfOnline, resolvePlayer } from "../restore/players.ts";
import { makeScratch } from "../restore/scratch.ts";
import {
  areaTargets,
  describeChunks,
  describeSelection,
  dimensionTargets,
  parseSelection,
  playerTargets,
  type Selection,
  type Target,
  type Where,
} from "../restore/select.ts";
import { closeWork, rollBack, type Staging, type SwapWork, stage, swapIn } from "../restore/swap.ts";

type RestoreContext = Pick<
  ToolContext,
  "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal" | "atExit"
>;

export interface RestoreOptions {
  /** A snapshot id (short or full) or "latest"; the newest with `tag` when that is given. */
  snapshot?: string | undefined;
  /** The newest snapshot of this server with this tag (e.g. pre-upgrade). */
  tag?: string | undefined;
  /** One player's files, by name or UUID (the server keeps running). */
  player?: string | undefined;
  /** The chunks of an area, X1,Z1,X2,Z2 in block coordinates. */
  area?: string | undefined;
  /** With --area: the region files the area touches, whole (the behaviour before issue 36). */
  wholeRegions?: boolean | undefined;
  /** One dimension whole, or the dimension of --area. */
  dimension?: string | undefined;
  /** false: no pre-restore snapshot of the current world first (--no-backup). */
  backup?: boolean | undefined;
  /** false: no check that the volume's disk has room for what comes back (--no-room-check). */
  roomCheck?: boolean | undefined;
  dryRun?: boolean | undefined;
  /** Leave the server stopped afterwards. */
  noStart?: boolean | undefined;
  wait?: boolean | undefined;
  /** How long the server may take to stop or start. */
  serverTimeoutMs?: number | undefined;
  /** The parsed command line: --owner wins over BACKUP_OWNER. */
  args?: Record<string, unknown> | undefined;
  /** Runs before each entry is moved (tests put a failure midway here). */
  beforeMove?: ((rel: string) => void) | undefined;
}

/** What a restore is asked for (the selection) and what it is configured with (backup.env's settings, --owner). */
export interface RestoreRequest {
  selection: Selection;
  settings: Settings;
}

/**
 * The restore's settings loader (cli.ts; runRestore calls it when it is given none, as a test in this process does):
 * what is asked for is checked first, so that a usage error comes before a configuration error, then the settings
 * are read (`options.args`: --owner wins over BACKUP_OWNER).
 */
export function loadRestore(ctx: Pick<ToolContext, "paths" | "env">, options: RestoreOptions): RestoreRequest {
  const selection = parseSelection(options);
  if (selection.kind === "world" && options.snapshot === undefined && options.tag === undefined) {
    throw new UsageError("which snapshot?", {
      hint: "give its id, or latest (list them with: backup snapshots), or --tag pre-upgrade",
    });
  }
  if (options.snapshot !== undefined && options.tag !== undefined) {
    throw new UsageError(`give a snapshot or --tag, not both (${options.snapshot} and --tag ${options.tag})`, {
      hint: `backup restore ${options.snapshot}, or backup restore --tag ${options.tag}`,
    });
  }
  return { selection, settings: loadSettings(ctx, options.args) };
}

/**
 * Restores a snapshot, or a part of it (issue 17: one player, an area, a dimension), over the world: see swap.ts for
 * how the files are put in place safely. The whole world, an area and a dimension need the server stopped: it is
 * stopped, waited for, and started again. A player's files are restored while the server runs, refused while that
 * player is online. Every restore first takes a snapshot of the current world tagged pre-restore (--no-backup skips it),
 * so that the restore can itself be undone from the repository.
 */
export async function runRestore(
  ctx: RestoreContext,
  options: RestoreOptions,
  { selection, settings }: RestoreRequest = loadRestore(ctx, options),
): Promise<number> {
  const logger = backupLogger(ctx);
  const volume = VolumeDir.open(settings.WORLD_DIR);
  try {
    const plan = await planRestore(ctx, options, selection, settings, resticFor(ctx, settings, logger), volume);
    if (options.dryRun) {
      const bounds = chunkArea(plan);
      if (bounds) {
        plan.merged = await previewArea(ctx, plan, settings, bounds, logger);
        plan.steps = planSteps(plan, options, settings);
      }
      ctx.stdout.write(planText(plan));
      return 0;
    }
    return await restore(ctx, options, settings, logger, plan);
  } finally {
    volume.close();
  }
}

/** Which snapshot, what of it comes back, and where the steps put things. */
interface RestorePlan {
  volume: VolumeDir;
  restic: Restic;
  snapshot: Snapshot;
  level: string;
  selection: Selection;
  /** The selection in words. */
  what: string;
  player: Player | undefined;
  targets: Target[];
  /** What restic writes into the staging directory, by the snapshot's sizes (a sparse file counted whole). */
  bytes: number;
  /** The snapshot's largest file of the targets, relative to WORLD_DIR, for the refusal's hint. */
  largest: LargestFile | undefined;
  /** The server is stopped for it (everything but a player's files). */
  stopsServer: boolean;
  /** When the restore began. */
  now: number;
  stagingPrefix: string;
  asidePrefix: string;
  serverTimeoutMs: number;
  /** The plan in words, for --dry-run. */
  steps: string[];
  /** An area restored chunk by chunk: the merge of each region file, once the snapshot's copies are staged. */
  merged?: AreaMerge | undefined;
}

/** The chunks of the area a plan restores chunk by chunk (not --whole-regions). */
const chunkArea = ({ selection }: { selection: Selection }): ChunkBounds | undefined =>
  selection.kind === "area" && !selection.wholeRegions ? chunkBounds(selection.area) : undefined;

async function planRestore(
  ctx: Pick<ToolContext, "clock">,
  options: RestoreOptions,
  selection: Selection,
  settings: Settings,
  restic: Restic,
  volume: VolumeDir,
): Promise<RestorePlan> {
  const worldDir = settings.WORLD_DIR;
  const level = levelName(volume);
  const snapshot = pickSnapshot(await restic.snapshots(), { id: options.snapshot, tag: options.tag }, settings.tags);
  const where: Where = { volume, restic, snapshot, worldDir, level };
  const player =
    selection.kind === "player"
      ? await resolvePlayer(selection.who, { volume, restic, snapshot, worldDir, level })
      : undefined;
  const targets = await targetsOf(where, selection, player);
  const { bytes, largest } = await restoredBytes(where, targets);
  const now = ctx.clock.now();
  const plan: RestorePlan = {
    volume,
    restic,
    snapshot,
    level,
    selection,
    what: describeSelection(selection, player),
    player,
    targets,
    bytes,
    largest,
    stopsServer: selection.kind !== "player",
    now,
    stagingPrefix: `.mcops-restore-${stamp(now)}-`,
    asidePrefix: `.mcops-pre-restore-${stamp(now)}-`,
    serverTimeoutMs: options.serverTimeoutMs ?? 5 * 60_000,
    steps: [],
  };
  plan.steps = planSteps(plan, options, settings);
  return plan;
}

async function targetsOf(where: Where, selection: Selection, player: Player | undefined): Promise<Target[]> {
  switch (selection.kind) {
    case "player":
      return playerTargets(where, player as Player);
    case "area":
      return areaTargets(where, selection.area, selection.dimension, selection.wholeRegions);
    case "dimension":
      return dimensionTargets(where, selection.dimension);
    case "world":
      return worldTargets(where);
  }
}

/**
 * How much the targets the snapshot holds take, every file by its size in the snapshot (restic ls): what a restore
 * writes into the staging directory, on the volume's disk (Wings', the panel's and its database's), at most. From
 * restic 0.15 a sparse file is restored sparse and takes less; before, it is written whole.
 */
async function restoredBytes(
  { restic, snapshot, worldDir }: Where,
  targets: Target[],
): Promise<Pick<RestorePlan, "bytes" | "largest">> {
  const paths = targets.filter((t) => t.inSnapshot).map((t) => join(worldDir, t.rel));
  if (!paths.length) return { bytes: 0, largest: undefined };
  const nodes = await restic.ls(snapshot.id, paths, true);
  const bytes = nodes.reduce((sum, node) => sum + (node.type === "file" ? (node.size ?? 0) : 0), 0);
  return { bytes, largest: largestFile(nodes, worldDir) };
}

/** The whole world: the level's folder (which the snapshot must hold), its _nether and its _the_end. */
function worldTargets({ volume, snapshot, worldDir, level }: Where): Target[] {
  const names = [level, `${level}_nether`, `${level}_the_end`];
  const targets = names.map((rel) => ({
    rel,
    inSnapshot: snapshot.paths.includes(join(worldDir, rel)),
    inVolume: volume.lstat(rel) !== undefined,
  }));
  if (!targets[0]?.inSnapshot) {
    throw new JobError(`snapshot ${snapshot.short_id} does not hold the world "${level}" of ${worldDir}`, {
      hint: `it holds ${snapshot.paths.join(", ")}; pick another with: backup snapshots`,
    });
  }
  return targets.filter((t) => t.inSnapshot || t.inVolume);
}

function planSteps(plan: RestorePlan, options: RestoreOptions, settings: Settings): string[] {
  const { snapshot, targets } = plan;
  const worldDir = settings.WORLD_DIR;
  const { uid, gid } = settings.owner;
  const restored = targets.filter((t) => t.inSnapshot).map((t) => t.rel);
  // An area's region files once merged: the files the area has nothing in are not moved.
  const swapped = plan.merged?.targets ?? targets;
  const current = swapped.filter((t) => t.inVolume).map((t) => t.rel);
  const placed = swapped.filter((t) => t.inSnapshot).map((t) => t.rel);
  const first = plan.stopsServer
    ? "stop the server through the panel and wait until it is offline"
    : `check that ${plan.player ? describePlayer(plan.player) : "the player"} is not online (the server keeps running)`;
  const list = (rels: string[]) => (rels.length > 3 ? `${rels.length} entries` : rels.join(", ") || "(nothing)");
  const staging = join(worldDir, `${plan.stagingPrefix}XXXXXX`);
  const bounds = chunkArea(plan);
  return [
    options.roomCheck === false
      ? `check nothing of ${worldDir}'s room for what comes back (${formatBytes(plan.bytes)}) (--no-room-check)`
      : `check that ${worldDir}'s disk has room for what comes back (${formatBytes(plan.bytes)} and a tenth more), or stop here`,
    first,
    options.backup === false
      ? "take no snapshot of the current world first (--no-backup)"
      : "take a snapshot of the current world tagged pre-restore",
    `restore ${list(restored)} from snapshot ${snapshot.short_id} (${snapshotTime(snapshot)}, ${snapshot.hostname}) into a new private ${staging}`,
    `check ${plan.selection.kind === "world" ? `that ${plan.level}/level.dat came back` : "what came back"}, and chown it to ${uid}:${gid} there`,
    ...(bounds
      ? [
          `write there, for each region file, a new one holding the snapshot's chunks in ${describeChunks(bounds)} and the current file's other chunks as they are`,
        ]
      : []),
    `move the current ${list(current)} into a new private ${join(worldDir, `${plan.asidePrefix}XXXXXX`)}`,
    `move the ${bounds ? "new" : "restored"} ${list(placed)} into ${worldDir}`,
    !plan.stopsServer
      ? "leave the server running"
      : options.noStart
        ? "leave the server stopped (--no-start)"
        : "start the server",
  ];
}

/** --dry-run: the steps, and for a partial restore every entry it replaces, adds or moves aside. */
function planText(plan: RestorePlan): string {
  const steps = plan.steps.map((step, i) => `  ${i + 1}. ${step}\n`).join("");
  if (plan.selection.kind === "world") return `Restore plan (nothing done, --dry-run):\n${steps}`;
  const merges = new Map(plan.merged?.files.map((file) => [file.rel, describeMerge(file)]));
  const targets = plan.merged?.targets ?? plan.targets;
  const entries = targets.map(({ rel, inSnapshot, inVolume }) => {
    const merge = merges.get(rel);
    if (merge) return `  ${inVolume ? "merge  " : "add    "} ${merge}\n`;
    const action = inSnapshot && inVolume ? "replace" : inSnapshot ? "add    " : "remove ";
    return `  ${action} ${rel}${inSnapshot ? "" : " (not in the snapshot: moved aside)"}\n`;
  });
  const chunks = plan.merged ? `${chunksText(plan.merged)}\n` : "";
  return `Restore plan for ${plan.what} from snapshot ${plan.snapshot.short_id} (nothing done, --dry-run):\n${steps}${chunks}Entries (${targets.length}):\n${entries.join("")}`;
}

/** How many chunks come back from how many region files, and how many go. */
function chunksText(merged: AreaMerge): string {
  const { restored, removed } = mergeTotals(merged);
  const { files } = merged;
  const from = `${restored} chunk${restored === 1 ? "" : "s"} come${restored === 1 ? "s" : ""} back from ${files.length} region file${files.length === 1 ? "" : "s"}`;
  return removed
    ? `${from}; ${removed} the snapshot does not have ${removed === 1 ? "goes" : "go"} (not generated then).`
    : `${from}.`;
}

/**
 * --dry-run of an area restored chunk by chunk: the snapshot's region files of the area are restored into a private
 * scratch directory in the state directory (never into the volume; restore/scratch.ts), their headers and the live
 * files' read, and the scratch directory removed.
 */
async function previewArea(
  ctx: Pick<ToolContext, "paths" | "atExit">,
  plan: RestorePlan,
  settings: Settings,
  bounds: ChunkBounds,
  logger: Logger,
): Promise<AreaMerge> {
  const wanted = plan.targets.filter((t) => t.inSnapshot && t.region);
  const copy = { bytes: wanted.reduce((sum, t) => sum + (t.size ?? 0), 0), files: wanted.length };
  const path = makeScratch(join(ctx.paths.stateDir, "restore"), stamp(plan.now), copy, logger);
  const remove = async (): Promise<void> => {
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
    ctx.atExit.delete(remove);
  };
  ctx.atExit.add(remove);
  const scratch = VolumeDir.open(path, "the scratch directory");
  let restored: VolumeDir | undefined;
  try {
    restored = await plan.restic.restoreInto(
      plan.snapshot.id,
      scratch,
      settings.WORLD_DIR,
      wanted.map((t) => join(settings.WORLD_DIR, t.rel)),
    );
    return mergeArea(plan.volume, restored, plan.targets, bounds, logger);
  } finally {
    restored?.close();
    scratch.close();
    await remove();
  }
}

/** The restore itself, under the backup lock: a failure at any step puts every replaced entry back. */
async function restore(
  ctx: RestoreContext,
  options: RestoreOptions,
  settings: Settings,
  logger: Logger,
  plan: RestorePlan,
): Promise<number> {
  const { snapshot } = plan;
  // docs/contract.md: a webhook.env others can read is refused (78) before anything is done.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await takeBackupLock(ctx, "backup restore", options.wait ?? false);
  const panel: PanelClient = panelFor(settings, ctx);
  const work: RestoreWork = { volume: plan.volume, moved: [], placed: [], stoppedByUs: false };
  logger.info(`=== Restore started === ${plan.what} from snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}`);
  try {
    // Before anything is done (issue 45): restic writes the snapshot's files into the volume's disk, which Wings, the
    // panel and its database share; a restore that would fill it is refused (exit 75), as the dry run's copy and the
    // drill are.
    if (options.roomCheck !== false) {
      checkRoom(settings.WORLD_DIR, plan.bytes, {
        for: `restoring ${plan.what}`,
        of: "the snapshot's files",
        hint: roomHint(
          "free some space on the server volume's disk (what earlier restores replaced is kept in .mcops-pre-restore-* folders there)",
          plan.largest,
        ),
      });
    }
    if (plan.selection.kind === "world") {
      await notifier.send({
        title: "Restore started",
        description: `Restoring snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}; the server stops for it.`,
        colour: COLOURS.warning,
        category: "backup",
      });
    }
    const stopped = () =>
      plan.stopsServer
        ? stopServer(ctx, panel, logger, work, plan.serverTimeoutMs)
        : checkOffline(ctx, panel, plan, logger);
    await stopped();
    const pre = options.backup === false ? undefined : await preRestoreSnapshot(ctx, settings, logger, plan);
    await stage(work, stagingOf(plan, settings), logger);
    // Once more before anything is moved: the snapshot and the staging can take minutes, and a start meanwhile (the
    // panel, Discord's /start) runs the game.
    await stopped();
    let targets = plan.targets;
    let beforeMove = options.beforeMove;
    const bounds = chunkArea(plan);
    if (bounds) {
      const merged = mergeArea(plan.volume, work.restored, plan.targets, bounds, logger, { owner: settings.owner });
      plan.merged = merged;
      targets = merged.targets;
      for (const file of merged.files) logger.info(describeMerge(file));
      beforeMove = (rel) => {
        checkUnchanged(plan.volume, merged.seen, rel);
        options.beforeMove?.(rel);
      };
    }
    const aside = swapIn(work, { ...plan, targets, owner: settings.owner }, beforeMove);
    logger.info(`${plan.what} restored; what it replaced is kept in ${aside}`);
    const started = !plan.stopsServer
      ? "the server kept running"
      : options.noStart
        ? "left stopped (--no-start)"
        : await startAfterRestore(panel, logger, plan.serverTimeoutMs, ctx.signal);
    const took = formatDuration(ctx.clock.now() - plan.now);
    logger.info(`=== Restore done === ${plan.what} from snapshot ${snapshot.short_id} in ${took}; ${started}`);
    await notifier.send({
      title: "Restore completed",
      description: completedText(plan, { took, started, aside, pre }),
      colour: COLOURS.success,
      category: "backup",
    });
    return 0;
  } catch (error) {
    throw await reportRestoreFailed({ options, settings, logger, notifier, panel, work }, error);
  } finally {
    closeWork(work);
    lock.release();
  }
}

function stagingOf(plan: RestorePlan, settings: Settings): Staging {
  return {
    restic: plan.restic,
    snapshot: plan.snapshot,
    worldDir: settings.WORLD_DIR,
    targets: plan.targets,
    stagingPrefix: plan.stagingPrefix,
    owner: settings.owner,
    check:
      plan.selection.kind === "world"
        ? (restored) => {
            if (!restored.lstat(`${plan.level}/level.dat`)?.isFile()) {
              throw new JobError(`the restored world has no ${plan.level}/level.dat`, {
                hint: "the snapshot may be incomplete; try an older one",
              });
            }
          }
        : undefined,
  };
}

/** The pre-restore snapshot; a failure stops the restore before anything is replaced (--no-backup goes without). */
async function preRestoreSnapshot(
  ctx: RestoreContext,
  settings: Settings,
  logger: Logger,
  plan: RestorePlan,
): Promise<SafetySnapshot | undefined> {
  try {
    return await safetySnapshot(ctx, { settings, logger, volume: plan.volume, tag: "pre-restore" });
  } catch (error) {
    throw new JobError(`the pre-restore snapshot of the current world failed: ${(error as Error).message}`, {
      hint: "fix that and try again, or restore without it: --no-backup",
      cause: error,
    });
  }
}

/**
 * A player's files are replaced only while the player is offline; a game that does not run has nobody online. Asked
 * of the game itself (core's gameState): the panel's cached "offline" may be a game started up to 20 s ago.
 */
async function checkOffline(
  ctx: Pick<RestoreContext, "clock" | "signal">,
  panel: PanelClient,
  plan: RestorePlan,
  logger: Logger,
): Promise<void> {
  const { state } = await gameState(panel, { clock: ctx.clock, logger, signal: ctx.signal });
  if (state === "offline") return;
  refuseIfOnline(plan.player as Player, playersInGameLog(plan.volume), plan.volume);
}

/** The message of a restore done: what came back from which snapshot, where the replaced files are, the way back. */
function completedText(
  plan: RestorePlan,
  done: { took: string; started: string; aside: string; pre: SafetySnapshot | undefined },
): string {
  const { snapshot } = plan;
  const placed = plan.targets.filter((t) => t.inSnapshot).length;
  const lines =
    plan.selection.kind === "world"
      ? [`Snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)} is back (${done.took}); ${done.started}.`]
      : plan.merged
        ? [
            `Restored ${plan.what} from snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)} (${done.took}); ${done.started}.`,
            `${chunksText(plan.merged)} Every other chunk is as it was.`,
          ]
        : [
            // A player's name is the game's: shown literally, never as Markdown.
            `Restored ${escapeGameText(plan.what)} from snapshot ${snapshot.short_id} of ${snapshotTime(snapshot)}: ${placed} entr${placed === 1 ? "y" : "ies"} (${done.took}); ${done.started}.`,
          ];
  lines.push(`What it replaced is kept in ${done.aside}.`);
  if (done.pre) lines.push(`The world before the restore is snapshot ${done.pre.shortId} (pre-restore).`);
  return lines.join("\n");
}

/**
 * Stops the server through the panel when the game runs, and waits until Wings says its container does not run (core's
 * gameState and stopGame: the panel's cached "offline" is never taken for it). A server shown stopping is sent the stop
 * too: the panel's state may be from before a start, and Wings drops a stop while another one is under way.
 */
async function stopServer(
  ctx: Pick<RestoreContext, "clock" | "signal">,
  panel: PanelClient,
  logger: Logger,
  work: RestoreWork,
  timeoutMs: number,
): Promise<void> {
  const options = { clock: ctx.clock, logger, signal: ctx.signal };
  const { state } = await gameState(panel, options);
  if (state === "offline") return;
  logger.info(`stopping the server (it is ${state})`);
  const sent = () => {
    work.stoppedByUs = true;
  };
  await stopGame(panel, { ...options, timeoutMs, pollMs: 2000, sent });
  logger.info("the server is offline");
}

/** Puts every replaced entry back, starts the server again if the restore stopped it, says so; returns what to throw. */
async function reportRestoreFailed(
  run: {
    options: RestoreOptions;
    settings: Settings;
    logger: Logger;
    notifier: Notifier;
    panel: PanelClient;
    work: RestoreWork;
  },
  error: unknown,
): Promise<McopsError> {
  const { options, settings, logger, notifier, panel, work } = run;
  const reason = error instanceof Error ? error.message : String(error);
  const undo = rollBack(work);
  logger.error(`=== Restore failed === ${reason}; ${undo}`, { echo: false });
  // A player online is a refusal, not a failure: exit 75 and no message (nothing was replaced, the server runs on).
  if (error instanceof BusyError) return error;
  let restart = "";
  if (work.stoppedByUs && !options.noStart) {
    try {
      await panel.power("start");
      restart = " The server was started again.";
    } catch (startError) {
      restart = ` The server could not be started again (${startError instanceof PanelError ? startError.message : startError}).`;
    }
  }
  await notifier.send({
    title: "Restore failed",
    description: `${reason}\n${undo}.${restart}`,
    colour: COLOURS.error,
    category: "backup",
    // The reason can hold names from the server volume: shown literally, never as Markdown.
    fromGame: true,
  });
  return new JobError(`restore failed: ${reason}; ${undo}`, { hint: `see ${settings.logFile}`, cause: error });
}

/** What a restore has done so far, for putting it back. */
interface RestoreWork extends SwapWork {
  /** The restore stopped the server (so a failure starts it again). */
  stoppedByUs: boolean;
}

/**
 * The restore is done when this runs: a server that will not start (the panel refuses, or it does not come up in
 * time) is said in the log and the message, never a reason to undo the restore.
 */
async function startAfterRestore(
  panel: PanelClient,
  logger: Logger,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  const warn = (text: string): string => {
    logger.warn(text);
    return text;
  };
  try {
    await panel.power("start");
  } catch (error) {
    return warn(`the server could not be started (${(error as Error).message}); start it from the panel`);
  }
  try {
    await panel.waitForState("running", { timeoutMs, pollMs: 2000, signal });
    return "server running again";
  } catch (error) {
    return warn(`server start requested, not running yet (${(error as Error).message})`);
  }
}
