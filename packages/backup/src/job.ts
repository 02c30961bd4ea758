import { lstatSync, readdirSync, rmSync, statfsSync } from "node:fs";
import { join, relative } from "node:path";
import { BusyError, describeError, JobError } from "@mcops/core/errors";
import { recordingLogger } from "@mcops/core/events";
import { formatBytes } from "@mcops/core/format";
import { createNotifier, type Notifier, toolNotifier } from "@mcops/core/http";
import { acquireLock, type Lock } from "@mcops/core/lock";
import { type Logger, silentLogger } from "@mcops/core/log";
import { backupLockFile } from "@mcops/core/paths";
import type { ToolContext } from "@mcops/core/tool";
import { resticFor } from "@mcops/world/clients";
import { isSafetySnapshot, type Snapshot, type SnapshotNode } from "@mcops/world/restic";
import type { Settings } from "@mcops/world/settings";
import { LOCK_WAIT_MS } from "./lock-wait.ts";

/** What every command of backup shares: its log, the backup lock, restic as the log hears it, the panel, the channel. */

export function backupLogger(ctx: Pick<ToolContext, "paths" | "stderr" | "env" | "clock">): Logger {
  return recordingLogger(ctx, "backup");
}

/**
 * The one lock every repository-changing command takes: backup, restore, check, prune, init never overlap. `wait`
 * undefined: the command has no --wait.
 */
export function takeBackupLock(
  ctx: Pick<ToolContext, "paths" | "clock" | "signal">,
  tool: string,
  wait?: boolean,
): Promise<Lock> {
  return acquireLock(backupLockFile(ctx.paths), {
    tool,
    what: "a backup or restore",
    ...(wait === undefined ? {} : { waitOption: "--wait" }),
    waitMs: wait ? LOCK_WAIT_MS : 0,
    pollMs: 1000,
    clock: ctx.clock,
    signal: ctx.signal,
  });
}

/**
 * The notifier that reports a run refused for its configuration: a silent one when the webhook configuration is
 * itself what is wrong (that problem is logged as an error so that it is seen).
 */
export function notifierFor(ctx: Pick<ToolContext, "paths" | "env" | "clock">, logger: Logger): Notifier {
  try {
    return toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  } catch (error) {
    logger.error(`notifications are off: ${describeError(error)}`, { echo: false });
    return createNotifier({
      config: { webhookUrl: undefined, source: "none", events: {} as never, playHost: undefined },
      paths: ctx.paths,
      logger: silentLogger,
    });
  }
}

/** The repository commands (snapshots, status, check, prune, init), given their settings: the log, restic. */
export function repositoryJob(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "runner" | "signal">,
  settings: Settings,
) {
  const logger = backupLogger(ctx);
  return { logger, restic: resticFor(ctx, settings, logger) };
}

/** Runs `fn` holding the backup lock (no --wait: a running backup makes the command exit busy at once). */
export async function whileLocked<T>(
  ctx: Pick<ToolContext, "paths" | "clock" | "signal">,
  tool: string,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = await takeBackupLock(ctx, tool);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

/** `2026-11-21T06-00-00Z`: a timestamp that is safe in a directory name. */
export function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}

/** `2026-11-21 06:00:01 UTC` from restic's nanosecond ISO time in the backup machine's zone. */
export function snapshotTime(snapshot: Snapshot): string {
  const ms = Date.parse(snapshot.time);
  return Number.isNaN(ms)
    ? snapshot.time
    : `${new Date(ms)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "")} UTC`;
}

/** What a restore or a drill asks for: a snapshot id (short or full), "latest", or the newest with a tag. */
export interface SnapshotWanted {
  /** An id, short or full, or "latest"; ignored when `tag` is given. */
  id?: string | undefined;
  /** The newest snapshot of this server with this tag (e.g. pre-upgrade). */
  tag?: string | undefined;
}

/**
 * The snapshot `wanted` names: an id (short or full); the newest of this server with a tag; or for "latest" the newest
 * backup of this server, not a safety snapshot (pre-restore: the world a restore replaced; pre-upgrade: the world before
 * an upgrade, which `--tag pre-upgrade` names).
 */
export function pickSnapshot(snapshots: Snapshot[], wanted: SnapshotWanted, tags: string[]): Snapshot {
  const { id = "latest", tag } = wanted;
  if (tag !== undefined || id === "latest") {
    const ours = snapshots.filter(
      (s) =>
        tags.every((t) => s.tags?.includes(t)) && (tag === undefined ? !isSafetySnapshot(s) : s.tags?.includes(tag)),
    );
    const latest = ours.sort((a, b) => Date.parse(b.time) - Date.parse(a.time))[0];
    if (!latest) {
      throw tag === undefined
        ? new JobError("the repository has no snapshot of this server yet", { hint: "run a backup first" })
        : new JobError(`the repository has no snapshot of this server tagged ${tag}`, {
            hint: "list them with: backup snapshots",
          });
    }
    return latest;
  }
  const matches = snapshots.filter((s) => s.id.startsWith(id) || s.short_id === id);
  if (matches.length === 0)
    throw new JobError(`there is no snapshot ${id}`, { hint: "list them with: backup snapshots" });
  if (matches.length > 1)
    throw new JobError(`"${id}" names ${matches.length} snapshots`, { hint: "give more of the id" });
  return matches[0] as Snapshot;
}

/** Room asked for above a copy's size: restic's own files while it restores, and the filesystem's slack. */
const SPACE_MARGIN = 1.1;

/**
 * Stops (exit 75) before a copy of `bytes` is made in `dir` when it and a tenth more would not fit there: the drill's
 * scratch copy of a snapshot, an area's dry run's copy of its region files. Returns the free and the needed bytes.
 */
export function checkRoom(
  dir: string,
  bytes: number,
  copy: { for: string; of: string; hint: string },
): { free: number; needed: number } {
  const needed = Math.ceil(bytes * SPACE_MARGIN);
  const stats = statfsSync(dir);
  const free = stats.bavail * stats.bsize;
  if (free < needed) {
    throw new BusyError(
      `not enough space in ${dir} for ${copy.for}: it needs ${formatBytes(needed)} (${copy.of} and 10 %), ${formatBytes(free)} is free`,
      { hint: copy.hint },
    );
  }
  return { free, needed };
}

/** A snapshot's largest file, relative to WORLD_DIR: what a refusal for room names. */
export interface LargestFile {
  rel: string;
  size: number;
}

/** The largest regular file of `nodes` (restic ls), relative to `root`. */
export function largestFile(nodes: readonly SnapshotNode[], root: string): LargestFile | undefined {
  let largest: LargestFile | undefined;
  for (const node of nodes) {
    const size = node.size ?? 0;
    if (node.type === "file" && size > (largest?.size ?? 0)) largest = { rel: relative(root, node.path), size };
  }
  return largest;
}

/**
 * A refusal for room's hint: `free` (what to do first), then the snapshot's largest file, which restic 0.15 and later
 * restore sparse when it is (the snapshot lists it by its whole size: one `truncate -s 1T` by the game's user would
 * refuse every restore and drill), and the way past the check.
 */
export function roomHint(free: string, largest: LargestFile | undefined): string {
  if (!largest) return free;
  const name = JSON.stringify(largest.rel.length > 200 ? `${largest.rel.slice(0, 200)}…` : largest.rel);
  return `${free}; the largest file is ${name} (${formatBytes(largest.size)}): if it is mostly empty (sparse, restored sparse by restic 0.15 and later), go on with --no-room-check`;
}

/**
 * Removes the directories named `prefix…` in `parent` that a run killed before it could remove its own left behind
 * (`by`: "a drill"), except those `keep` says are still in use.
 */
export function removeLeftovers(
  parent: string,
  prefix: string,
  by: string,
  logger: Logger,
  keep: (name: string) => boolean = () => false,
): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(prefix) || keep(name)) continue;
    const path = join(parent, name);
    if (!lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) continue;
    logger.warn(`removing ${path}, left by ${by} that was killed`);
    rmSync(path, { recursive: true, force: true });
  }
}
