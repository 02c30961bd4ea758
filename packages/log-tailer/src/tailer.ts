import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { SERVER_UUID } from "@mcops/core/config";
import { type JobError, UsageError } from "@mcops/core/errors";
import { recordingLogger } from "@mcops/core/events";
import { formatBytes } from "@mcops/core/format";
import { COLOURS, createPanelClient, type Notice, toolNotifier } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import { writeGauges } from "@mcops/core/textfile";
import type { ToolContext } from "@mcops/core/tool";
import { VolumeDir } from "@mcops/core/volume";
import { type GameEvent, GameLogParser } from "@mcops/game-log/game-log";
import { type FollowPosition, LogFollower, MAX_LINE_BYTES } from "@mcops/game-log/log-follower";
import { type OomKill, type StreamMark, watchContainer } from "./container-watch.ts";
import { CrashLoop } from "./crash-loop.ts";
import { after, BurstThrottle, ErrorDigest, oomKillEvent } from "./messages.ts";
import type { TailerOptions, TailerSettings } from "./settings.ts";
import { readJson, saveJson, stateFile } from "./state-files.ts";
import { type Pending, type UnsentStore, unsentStore } from "./unsent.ts";

type TailerContext = Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "signal">;

/** Where the log is: its path for messages, the directory it is reached from (held open) and the path below it. */
interface Log {
  file: string;
  dir: VolumeDir;
  rel: string;
}

/** How long after the last line an entry that could still get stack lines is taken as complete. */
const SETTLE_MS = 500;

/** A kill for memory this soon after a crash the log showed is that crash ending, not another. */
const SAME_CRASH_MS = 60_000;

/** Between two posts about a log that is not followed (a volume that keeps swapping it must not flood the channel). */
const PROBLEM_POST_EVERY_MS = 10 * 60_000;

/**
 * At SIGTERM, the time the posts still pending get, in all. systemd kills the service TimeoutStopSec (30 s) after
 * SIGTERM, and the Docker watch may already have taken 5 s of it: waiting out each message's retries against a Discord
 * that does not answer (up to 2 min each) would get the service killed, and its messages lost with no line saying so.
 * What is not sent within this is not waited for: it is saved (unsent.ts) and posted first at the next start.
 */
const STOP_POSTS_MS = 10_000;

/**
 * The service (docs/system.md 1.5, 6): follows latest.log and posts the game's events. Its position (file identity and offset) is
 * saved in the state dir, so a restart neither announces old lines again nor misses new ones.
 */
export async function runTailer(ctx: TailerContext, options: TailerOptions, settings: TailerSettings): Promise<number> {
  const log = openLog(options, settings.WORLD_DIR);
  const logger = recordingLogger(ctx, "log-tailer");
  const posts = announcer(ctx, logger, settings);
  const position = positionStore(ctx.paths, log.file, logger);
  const unsent = unsentStore(ctx.paths, log.file, logger);
  postUnsent(unsent, posts, logger);
  const follower = follow(ctx, log, options, { logger, posts, position });
  logger.info(`following ${log.file}`);
  follower.start();
  const container = containerWatch(ctx, logger, settings, posts, log.file);
  await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
  follower.stop();
  // The watch ends with the signal; whatever Docker does, the stop never waits on it for long.
  const watchEnded = new AbortController();
  await Promise.race([container, ctx.clock.sleep(5000, watchEnded.signal).catch(() => undefined)]);
  watchEnded.abort();
  // What is left is saved before the position: a kill in between loses no message (it may post one twice).
  unsent.save(await posts.flush(STOP_POSTS_MS), STOP_POSTS_MS);
  position.save(follower.position);
  log.dir.close();
  logger.info("stopped");
  return 0;
}

/** The log to follow: --file, else <WORLD_DIR>/logs/latest.log; never followed if it is a link. */
function openLog(options: TailerOptions, worldDir: string | undefined): Log {
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
  const dir = worldDir as string;
  return { file: join(dir, "logs", "latest.log"), dir: VolumeDir.open(dir), rel: "logs/latest.log" };
}

/** The game's events as posts: parsed, logged, throttled, and sent one at a time in log order. */
interface Announcer {
  parser: GameLogParser;
  /** The server's container was killed for memory (Docker's events): a crash the log cannot show. */
  oomKilled(kill: OomKill): void;
  send(notice: Notice | Promise<Notice>): void;
  /** Runs `then` once every post queued so far has gone out (unless a stop gave up on them first). */
  afterPosts(then: () => void): void;
  /**
   * Sends what is still held (at shutdown) and waits until every post has gone out, or `budgetMs` has passed: then
   * the rest is given up (a post under way included) and returned, oldest first.
   */
  flush(budgetMs: number): Promise<Pending[]>;
}

function announcer(ctx: TailerContext, logger: Logger, settings: TailerSettings): Announcer {
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  let queue: Promise<unknown> = Promise.resolve();
  /** The messages queued and not yet posted, oldest first (the first may be under way). */
  const pending: Pending[] = [];
  /** The stop's time ran out: nothing more is posted (what was pending is the caller's now). */
  let givenUp = false;
  const enqueue = (job: () => Promise<unknown>) => {
    queue = queue.then(() => (givenUp ? undefined : job()));
  };
  // In log order: a notice still being made (the crash loop's, while the server is stopped) holds its place.
  const send = (notice: Notice | Promise<Notice>) => {
    const item: Pending = { notice: undefined, queuedAt: ctx.clock.now() };
    if (notice instanceof Promise) {
      notice.then(
        (made) => {
          item.notice = made;
        },
        () => undefined,
      );
    } else item.notice = notice;
    pending.push(item);
    enqueue(async () => {
      const made = await notice;
      if (givenUp) return;
      await notifier.send(made);
      if (!givenUp) pending.splice(pending.indexOf(item), 1);
    });
  };
  const bursts = new BurstThrottle({ clock: ctx.clock, send });
  const errors = new ErrorDigest(ctx.clock, send);
  const loop = crashLoopFor(ctx, logger, settings, send);
  const crashes = crashCounter(logger, settings);
  /** When the log last showed a crash: a kill for memory right after it is the same crash. */
  let loggedCrashAt = Number.NEGATIVE_INFINITY;
  const offer = (event: GameEvent) => {
    const where = event.line > 0 ? `line ${event.line}` : "Docker's events";
    logger.info(`${event.type}${event.player ? ` ${event.player}` : ""}: ${event.message} (${where})`);
    if (event.type === "crash") {
      crashes.count();
      if (event.line > 0) loggedCrashAt = ctx.clock.now();
    }
    if (event.type === "error") errors.offer(event);
    else if (event.type === "crash" && loop?.crashed(event)) return;
    else {
      if (event.type === "start") loop?.started();
      if (event.type === "stop") loop?.stopped();
      bursts.offer(event);
    }
  };
  const parser = new GameLogParser(offer);
  return {
    parser,
    send,
    oomKilled(kill) {
      if (ctx.clock.now() - loggedCrashAt < SAME_CRASH_MS) {
        logger.info(
          "the container was killed for memory right after the crash the log showed: that crash, already posted",
        );
      } else offer(oomKillEvent(kill, ctx.clock));
    },
    afterPosts(then) {
      enqueue(async () => then());
    },
    async flush(budgetMs) {
      parser.flush();
      bursts.flush();
      errors.flush();
      loop?.close();
      const budget = new AbortController();
      const allSent = await Promise.race([
        queue.then(() => true),
        ctx.clock.sleep(budgetMs, budget.signal).then(
          () => false,
          () => true,
        ),
      ]);
      budget.abort();
      if (allSent) return [];
      givenUp = true;
      return pending.splice(0);
    },
  };
}

/**
 * The crashes seen since the tailer started, as `mcops_crashes_total` in mcops_log_tailer.prom (BACKUP_TEXTFILE_DIR):
 * a counter that starts again at 0 with the service, as Prometheus counters do (rate() and increase() expect that).
 */
function crashCounter(logger: Logger, settings: TailerSettings): { count(): void } {
  let total = 0;
  const write = () =>
    writeGauges(
      [
        {
          name: "mcops_crashes_total",
          help: "Crashes the game log showed since the log tailer started.",
          value: total,
        },
      ],
      { dir: settings.BACKUP_TEXTFILE_DIR, file: "mcops_log_tailer.prom", serverId: settings.SERVER_ID ?? "", logger },
    );
  write();
  return {
    count() {
      total++;
      write();
    },
  };
}

/** The crash-loop watch (CRASH_LOOP, default 3/10m; off: none), stopping the server with CRASH_LOOP_STOP. */
function crashLoopFor(
  ctx: TailerContext,
  logger: Logger,
  settings: TailerSettings,
  send: (notice: Notice | Promise<Notice>) => void,
): CrashLoop | undefined {
  const rule = settings.CRASH_LOOP;
  if (!rule) return undefined;
  const { CONTROL_URL: url, CONTROL_KEY: key, SERVER_ID: serverId } = settings;
  const panel =
    settings.CRASH_LOOP_STOP && url && key && serverId
      ? createPanelClient({ url, key, serverId, clock: ctx.clock })
      : undefined;
  return new CrashLoop({ clock: ctx.clock, rule, logger, send, stop: panel && (() => panel.power("stop")) });
}

/**
 * Docker's events for the server's container (DOCKER_SOCKET; off: none), until the tailer stops. The container is the
 * one named by the volume's UUID (WORLD_DIR is /var/lib/pterodactyl/volumes/<uuid>), else by SERVER_ID.
 */
async function containerWatch(
  ctx: TailerContext,
  logger: Logger,
  settings: TailerSettings,
  posts: Announcer,
  logFile: string,
): Promise<void> {
  const socket = settings.DOCKER_SOCKET;
  if (!socket) return;
  const volume = settings.WORLD_DIR && basename(settings.WORLD_DIR);
  const uuid = volume && SERVER_UUID.test(volume) ? volume : undefined;
  if (!uuid && !settings.SERVER_ID) {
    logger.info(
      "out-of-memory kills of the container are not watched: neither WORLD_DIR (named by the server's UUID) nor SERVER_ID says which container is the server's",
    );
    return;
  }
  // Where Docker's stream got to, beside the log position: a kill while the tailer was restarting is still seen.
  const markFile = stateFile(ctx.paths, logFile, "docker");
  await watchContainer({
    socket,
    uuid,
    shortId: settings.SERVER_ID,
    clock: ctx.clock,
    signal: ctx.signal,
    logger,
    onOomKill: (kill) => posts.oomKilled(kill),
    mark: readJson<StreamMark>(markFile),
    onMark: (mark) => saveJson(markFile, mark, logger),
  });
}

/**
 * The messages the last stop left unsent, queued before anything the log or Docker says now, so they go out first and
 * in their order; the file goes once they have (a stop before that saves what is still left, them included).
 */
function postUnsent(unsent: UnsentStore, posts: Announcer, logger: Logger): void {
  const notices = unsent.read();
  if (notices.length === 0) return;
  logger.info(`posting the ${notices.length} message(s) the last stop left unsent (${unsent.file})`);
  for (const notice of notices) posts.send(notice);
  posts.afterPosts(() => unsent.remove());
}

/** Where the follower got to in a log, kept in the state dir under a name from the log's path. */
interface PositionStore {
  /** The saved position, if there is one that can be read. */
  read(): FollowPosition | undefined;
  save(position: FollowPosition): void;
}

function positionStore(paths: Paths, logFile: string, logger: Logger): PositionStore {
  const file = stateFile(paths, logFile);
  // The follower reports its position on every poll; the file (written and flushed to disk) changes only when it did.
  let saved: string | undefined;
  return {
    read: () => readJson<FollowPosition>(file),
    save(position) {
      const text = JSON.stringify(position);
      if (text !== saved && saveJson(file, position, logger)) saved = text;
    },
  };
}

/**
 * A log that is not a regular file (a link, a FIFO, a device, a directory) is never read: one ERROR line per distinct
 * problem, and one post until the file is followed again (at most one per 10 minutes).
 */
function problemReporter(ctx: TailerContext, file: string, logger: Logger, send: (notice: Notice) => void) {
  let posted = false;
  let postedAt = Number.NEGATIVE_INFINITY;
  return {
    onProblem(error: JobError): void {
      logger.error(`${error.message}; not reading it${error.hint ? ` — ${error.hint}` : ""}`);
      if (posted || ctx.clock.now() - postedAt < PROBLEM_POST_EVERY_MS) return;
      posted = true;
      postedAt = ctx.clock.now();
      send({
        title: "Game log not followed",
        description: `${error.message}; not reading it. Nothing from the game is announced until it is a regular file again.`,
        colour: COLOURS.error,
        category: "crash",
      });
    },
    onFollowedAgain(): void {
      posted = false;
      logger.info(`${file} is a regular file again: following it`);
    },
  };
}

/** How often one kind of warning about latest.log's own shape (a hole, a line over the cap) is written at most. */
export const SHAPE_WARN_EVERY_MS = 60_000;

/**
 * A warning written at most once a minute: the game's user can make latest.log hold a hole every 4 KiB or a line over
 * the cap after another, and each would otherwise be a line of mc-log-tailer.log. The first is said at once; those that
 * come within the minute are counted (with their sum) and said together when the minute is over, or at stop.
 */
function sparingly(
  clock: Clock,
  say: (amount: number, more: { count: number; total: number }) => void,
): ((amount: number) => void) & { flush(): void } {
  let saidAt = Number.NEGATIVE_INFINITY;
  let held = { count: 0, total: 0, last: 0 };
  let cancel: (() => void) | undefined;
  const flush = () => {
    cancel?.();
    cancel = undefined;
    if (held.count === 0) return;
    const { count, total, last } = held;
    held = { count: 0, total: 0, last: 0 };
    saidAt = clock.now();
    say(last, { count, total });
  };
  const warn = (amount: number) => {
    held = { count: held.count + 1, total: held.total + amount, last: amount };
    const wait = saidAt + SHAPE_WARN_EVERY_MS - clock.now();
    if (wait <= 0) flush();
    else cancel ??= after(clock, wait, flush);
  };
  return Object.assign(warn, { flush });
}

/** The follower of the log, feeding the parser and saving its position each time it has caught up. */
function follow(
  ctx: TailerContext,
  log: Log,
  options: TailerOptions,
  { logger, posts, position }: { logger: Logger; posts: Announcer; position: PositionStore },
): { start(): void; stop(): void; readonly position: FollowPosition } {
  const { file, dir, rel } = log;
  const { parser } = posts;
  const cap = `${MAX_LINE_BYTES / 1024} KiB`;
  let cancelSettle: (() => void) | undefined;
  const cut = sparingly(ctx.clock, (line, more) =>
    logger.warn(
      more.count > 1
        ? `${more.count} lines of ${file} longer than ${cap} since the last warning (the last: line ${line}): their first ${cap} are read, the rest is skipped`
        : `line ${line} of ${file} is longer than ${cap}: its first ${cap} are read, the rest is skipped`,
    ),
  );
  const skipped = sparingly(ctx.clock, (bytes, more) =>
    logger.warn(
      more.count > 1
        ? `skipped ${formatBytes(more.total)} of ${file} in ${more.count} runs (holes or zeros) since the last warning`
        : `skipped ${formatBytes(bytes)} of ${file} (a hole or zeros)`,
    ),
  );
  const follower: LogFollower = new LogFollower({
    dir,
    file: rel,
    resumeFrom: options.fromStart ? undefined : position.read(),
    onLine: (line, info) => {
      if (info.cut) cut(follower.position.line);
      parser.push(line);
    },
    ...problemReporter(ctx, file, logger, posts.send),
    // A sparse latest.log (`truncate -s 20G`) or a crash's zeros: jumped over, and said once.
    onSkipped: (bytes) => skipped(bytes),
    onFile: (reason, line) => {
      if (reason !== "opened" || line !== 0)
        logger.info(`${reason === "resumed" ? "carrying on in" : `${reason}:`} ${file} at line ${line}`);
      parser.resetLines(line);
    },
    onCaughtUp: (caughtUp) => {
      cancelSettle?.();
      // An ERROR entry may still get stack lines, a Bukkit login its "joined the game": give them a moment.
      cancelSettle = after(ctx.clock, SETTLE_MS, () => parser.flush());
      position.save(caughtUp);
    },
  });
  return {
    start: () => follower.start(),
    /** A last read of what is there, then no more. */
    stop() {
      follower.drain();
      follower.stop();
      cancelSettle?.();
      cut.flush();
      skipped.flush();
    },
    get position() {
      return follower.position;
    },
  };
}
