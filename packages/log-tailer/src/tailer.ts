import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { loadBackupEnv } from "@mcops/core/config";
import { type JobError, UsageError } from "@mcops/core/errors";
import { COLOURS, type Notice, toolNotifier } from "@mcops/core/http";
import { toolLogger, type Writer } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import { VolumeDir } from "@mcops/core/volume";
import { type GameEvent, GameLogParser } from "@mcops/game-log/game-log";
import { type FollowPosition, LogFollower, MAX_LINE_BYTES } from "@mcops/game-log/log-follower";
import { BurstThrottle, ErrorDigest } from "./messages.ts";

// What cli.ts needs of core, named here so that the bundle keeps only what the tool uses.
export { systemClock } from "@mcops/core/clock";
export { resolvePaths } from "@mcops/core/paths";

/** Everything the service touches of the outside world. */
export interface TailerContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stderr: Writer & { isTTY?: boolean };
  /** Aborted to stop the service (SIGTERM, SIGINT). */
  signal: AbortSignal;
}

export interface TailerOptions {
  /** The log to follow; default <WORLD_DIR>/logs/latest.log from backup.env. */
  file?: string | undefined;
  /** Ignore the saved position and read the file from its beginning. */
  fromStart?: boolean | undefined;
  /** How long after the last line an entry that could still get stack lines is taken as complete. */
  settleMs?: number | undefined;
}

export function stateFile(paths: Paths, logFile: string): string {
  return join(paths.stateDir, `log-tailer-${createHash("sha256").update(logFile).digest("hex").slice(0, 12)}.json`);
}

function readPosition(file: string): FollowPosition | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as FollowPosition;
  } catch {
    return undefined;
  }
}

/** Between two posts about a log that is not followed (a volume that keeps swapping it must not flood the channel). */
const PROBLEM_POST_EVERY_MS = 10 * 60_000;

/** Where the log is: the directory it is reached from (held open) and the path below it, never followed if a link. */
function openLog(ctx: TailerContext, options: TailerOptions): { file: string; dir: VolumeDir; rel: string } {
  if (options.file) {
    const file = options.file;
    // A missing file is waited for (the server may not have started yet); a directory never becomes a log. The
    // operator's own path is trusted up to the file's folder; the file itself is never followed if it is a link.
    if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(`${file} is a directory`, {
        where: "--file",
        hint: "give the game log itself, e.g. <WORLD_DIR>/logs/latest.log",
      });
    }
    return { file, dir: VolumeDir.open(dirname(file), "the folder of --file"), rel: basename(file) };
  }
  // WORLD_DIR is the operator's; everything below it is the game's (and any plugin's), so a link, a FIFO or a
  // directory there is a problem said at run time, not a usage error.
  const worldDir = loadBackupEnv(["WORLD_DIR"], { paths: ctx.paths, env: ctx.env }).WORLD_DIR;
  return { file: join(worldDir, "logs", "latest.log"), dir: VolumeDir.open(worldDir), rel: "logs/latest.log" };
}

/**
 * The service (docs/system.md 1.5, 6): follows latest.log and posts the game's events. Its position (file identity and offset) is
 * saved in the state dir, so a restart neither announces old lines again nor misses new ones.
 */
export async function runTailer(ctx: TailerContext, options: TailerOptions = {}): Promise<number> {
  const { file, dir, rel } = openLog(ctx, options);
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-log-tailer.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const saved = stateFile(ctx.paths, file);
  mkdirSync(ctx.paths.stateDir, { recursive: true });

  // Posts go out one at a time, in log order.
  let queue: Promise<unknown> = Promise.resolve();
  const send = (notice: Notice) => {
    queue = queue.then(() => notifier.send(notice));
  };
  const bursts = new BurstThrottle({ clock: ctx.clock, send });
  const errors = new ErrorDigest(ctx.clock, send);
  const onEvent = (event: GameEvent) => {
    logger.info(`${event.type}${event.player ? ` ${event.player}` : ""}: ${event.message} (line ${event.line})`);
    if (event.type === "error") errors.offer(event);
    else bursts.offer(event);
  };
  const parser = new GameLogParser(onEvent);

  const save = (position: FollowPosition) => {
    try {
      writeFileSync(`${saved}.tmp`, JSON.stringify(position));
      renameSync(`${saved}.tmp`, saved);
    } catch (error) {
      logger.warn(`cannot save the position in ${saved} (${(error as NodeJS.ErrnoException).code})`);
    }
  };
  // A log that is not a regular file (a link, a FIFO, a device, a directory) is never read: one ERROR line per distinct
  // problem, and one post until the file is followed again (at most one per 10 minutes).
  let problemPosted = false;
  let problemPostedAt = Number.NEGATIVE_INFINITY;
  const onProblem = (error: JobError) => {
    logger.error(`${error.message}; not reading it${error.hint ? ` — ${error.hint}` : ""}`);
    if (problemPosted || ctx.clock.now() - problemPostedAt < PROBLEM_POST_EVERY_MS) return;
    problemPosted = true;
    problemPostedAt = ctx.clock.now();
    send({
      title: "Game log not followed",
      description: `${error.message}; not reading it. Nothing from the game is announced until it is a regular file again.`,
      colour: COLOURS.error,
      category: "crash",
    });
  };
  const cap = `${MAX_LINE_BYTES / 1024} KiB`;
  let settle: NodeJS.Timeout | undefined;
  const follower: LogFollower = new LogFollower({
    dir,
    file: rel,
    resumeFrom: options.fromStart ? undefined : readPosition(saved),
    onLine: (line, info) => {
      if (info.cut) {
        logger.warn(
          `line ${follower.position.line} of ${file} is longer than ${cap}: its first ${cap} are read, the rest is skipped`,
        );
      }
      parser.push(line);
    },
    onProblem,
    onFollowedAgain: () => {
      problemPosted = false;
      logger.info(`${file} is a regular file again: following it`);
    },
    onFile: (reason, line) => {
      if (reason !== "opened" || line !== 0)
        logger.info(`${reason === "resumed" ? "carrying on in" : `${reason}:`} ${file} at line ${line}`);
      parser.resetLines(line);
    },
    onCaughtUp: (position) => {
      clearTimeout(settle);
      // An ERROR entry may still get stack lines, a Bukkit login its "joined the game": give them a moment.
      settle = setTimeout(() => parser.flush(), options.settleMs ?? 500);
      save(position);
    },
  });
  logger.info(`following ${file}`);
  follower.start();
  await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
  follower.drain();
  follower.stop();
  clearTimeout(settle);
  parser.flush();
  bursts.flush();
  errors.flush();
  await queue;
  save(follower.position);
  dir.close();
  logger.info("stopped");
  return 0;
}
