import { diskSpace, type StatFs } from "@mcops/core/disk";
import { ExitCode, JobError } from "@mcops/core/errors";
import { recordingLogger } from "@mcops/core/events";
import { COLOURS, createPanelClient, toolNotifier } from "@mcops/core/http";
import { type Gauge, writeGauges } from "@mcops/core/textfile";
import type { ToolContext } from "@mcops/core/tool";
import { type Actor, act } from "./act.ts";
import { type BackupEnd, checkBackupAge } from "./backup-age.ts";
import { watchCerts } from "./cert-watch.ts";
import { type Decision, decide, type IdleState, type Observation } from "./decide.ts";
import { checkDisks, watchedDisks } from "./disk-watch.ts";
import { sampleTps } from "./lag-watch.ts";
import { checkMemory } from "./memory-watch.ts";
import { backupLogFacts, type GameLogReporter, gameLogReporter, observe } from "./observe.ts";
import type { LoadedSettings, MonitorSettings } from "./settings.ts";
import { onBoot, readBootId, readState, writeState } from "./state.ts";
import { talkToWorker } from "./worker-link.ts";

type MonitorContext = Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "runner" | "signal">;

export interface Monitor {
  /**
   * One decision: observe, decide, act, save. A failure (the idle backup or stop failed, the panel refused the key, or
   * anything unexpected) is logged and returned, not thrown.
   */
  tick(): Promise<Decision & { error?: Error }>;
  readonly state: IdleState;
  readonly settings: MonitorSettings;
}

/** The monitor's parts between decisions. */
interface Parts extends Actor {
  gameLog: GameLogReporter;
  /** The first failure of the current decision. */
  failure: Error | undefined;
  /** An ERROR line; the error (by default one that says the line) becomes the decision's failure. */
  fail(line: string, error?: Error): void;
  /** How free space is measured (Node's statfs; tests give their own). */
  statfs: StatFs | undefined;
  /** The container's memory limit (undefined bytes: none), and when it was asked. */
  memoryLimit?: { bytes: number | undefined; at: number } | undefined;
}

/**
 * Loads the settings and builds what the decisions use: the log, the notifier, the panel client, the state file's state.
 * `once`: the failure of the one decision ends the run with it (exit code, one line), so its log line is not echoed.
 */
function assemble(ctx: MonitorContext, loaded: LoadedSettings, once: boolean, statfs?: StatFs): Parts {
  const { env, settings } = loaded;
  const logger = recordingLogger(ctx, "idle-monitor");
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const panel = createPanelClient({
    url: env.CONTROL_URL,
    key: env.CONTROL_KEY,
    serverId: env.SERVER_ID,
    clock: ctx.clock,
    maxAttempts: 2,
  });
  const parts: Parts = {
    ctx,
    settings,
    logger,
    notifier,
    panel,
    state: readState(settings.stateFile),
    gameLog: gameLogReporter(logger, notifier),
    failure: undefined,
    statfs,
    fail(line, error = new JobError(line)) {
      logger.error(line, { echo: !once });
      parts.failure ??= error;
    },
  };
  return parts;
}

/** One decision: observe, decide, act, save the state, and report how it went. */
async function tick(parts: Parts): Promise<Decision & { error?: Error }> {
  parts.failure = undefined;
  try {
    const now = parts.ctx.clock.now();
    watchBoot(parts);
    const observation = await observe(parts.panel, parts.settings, parts.gameLog.onLog);
    await parts.gameLog.posted();
    const backupLog = backupLogFacts(parts.ctx.paths);
    const decision = decide(parts.state, observation, parts.settings, now, backupLog.done);
    parts.state = decision.state;
    const action = await act(parts, decision, now);
    if (parts.settings.worker) await talkToWorker(parts, parts.settings.worker, observation, backupLog.drill, now);
    await watchCerts(parts, parts.settings.certsCommand, now, (warning) => postHealth(parts, warning, "warn"));
    await watchBackupAge(parts, backupLog.end);
    const health = [
      ...(await watchDisks(parts)),
      ...(await watchMemory(parts, observation.memoryBytes)),
      ...(await watchLag(parts, observation)),
    ];
    const figure = (name: string) => health.find((gauge) => gauge.name === name)?.value;
    parts.state.health = {
      at: now,
      tps: figure("mcops_tps"),
      memory: figure("mcops_memory_ratio"),
      volumeFree: figure("mcops_disk_free_ratio"),
      cacheFree: figure("mcops_restic_cache_free_ratio"),
    };
    writeGauges(health, {
      dir: parts.settings.textfileDir,
      file: "mcops_health.prom",
      serverId: parts.settings.serverId,
      logger: parts.logger,
    });
    writeState(parts.settings.stateFile, parts.state);
    return parts.failure ? { ...decision, action, error: parts.failure } : { ...decision, action };
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    parts.fail(`no decision this time: ${error.message}`, error);
    return { state: parts.state, action: "none", line: error.message, error };
  }
}

/** A new boot (a VM revived from a snapshot, or rebooted): the idle clock starts again (state.ts, onBoot). */
function watchBoot(parts: Parts): void {
  const bootId = readBootId(parts.settings.bootIdFile);
  const boot = onBoot(parts.state, bootId);
  parts.state = boot.state;
  parts.bootId = bootId;
  if (boot.newBoot) {
    parts.logger.info(
      `a new boot (${bootId}): the idle period starts again, a hibernation asked before it is forgotten`,
    );
  }
}

/**
 * The staleness alarm (BACKUP_MAX_AGE): checked every decision, posted once per period, and the age as gauges in
 * mcops_idle.prom for node_exporter.
 */
async function watchBackupAge(parts: Parts, lastEnd: BackupEnd | undefined): Promise<void> {
  const { settings, logger, notifier } = parts;
  const check = checkBackupAge(parts.state, parts.ctx.clock.now(), settings.maxAgeMs, lastEnd);
  parts.state = check.state;
  if (check.post) {
    const { kind, title, description } = check.post;
    if (kind === "stale") logger.error(`${title}: ${description.replaceAll("\n", " ")}`, { echo: false });
    else logger.info(`${title}: ${description}`);
    await notifier.send({
      title,
      description,
      colour: kind === "stale" ? COLOURS.error : COLOURS.success,
      category: "backup",
    });
  }
  writeGauges(
    [
      {
        name: "mcops_backup_age_seconds",
        help: "Since the newest successful backup (or since the monitor started, when there is none).",
        value: Math.round(check.ageMs / 1000),
      },
      {
        name: "mcops_backup_stale",
        help: "1 when the newest backup is older than BACKUP_MAX_AGE.",
        value: check.stale ? 1 : 0,
      },
    ],
    { dir: settings.textfileDir, file: "mcops_idle.prom", serverId: settings.serverId, logger },
  );
}

/**
 * Free space on the volume's disk and restic's cache's (DISK_WARN, DISK_CRITICAL): health posts at most once a day per
 * disk and level, one when it recovers; the free ratios as gauges for mcops_health.prom.
 */
async function watchDisks(parts: Parts): Promise<Gauge[]> {
  const { settings } = parts;
  const volume = diskSpace(settings.worldDir, parts.statfs);
  const cache = diskSpace(settings.resticCache, parts.statfs);
  const check = checkDisks(parts.state, parts.ctx.clock.now(), watchedDisks(volume, cache), settings.disk);
  parts.state = check.state;
  for (const post of check.posts) await postHealth(parts, post, post.kind === "recovered" ? "ok" : post.kind);
  return [
    { name: "mcops_disk_free_ratio", help: "Free space on the server volume's disk, 0 to 1.", space: volume },
    { name: "mcops_restic_cache_free_ratio", help: "Free space on the disk of restic's cache, 0 to 1.", space: cache },
  ].flatMap(({ name, help, space }) => (space ? [{ name, help, value: space.ratio, digits: 4 }] : []));
}

/** A health post (category health): a WARN or ERROR line for an alert, an INFO line for a recovery, and the message. */
async function postHealth(
  parts: Parts,
  post: { title: string; description: string },
  level: "warn" | "critical" | "ok",
): Promise<void> {
  const line = `${post.title}: ${post.description}`;
  if (level === "ok") parts.logger.info(line);
  else parts.logger[level === "critical" ? "error" : "warn"](line, { echo: false });
  const colour = { warn: COLOURS.warning, critical: COLOURS.error, ok: COLOURS.success }[level];
  await parts.notifier.send({ title: post.title, description: post.description, colour, category: "health" });
}

/** How often the server's memory limit is asked again (it changes only when the operator edits the server). */
const LIMIT_EVERY_MS = 60 * 60_000;

/**
 * Memory against the container's limit (the panel's server limits, asked hourly): one health post after 10 minutes
 * above 95 %, one when it is back below; the ratio as a gauge for mcops_health.prom.
 */
async function watchMemory(parts: Parts, usedBytes: number | undefined): Promise<Gauge[]> {
  const { logger } = parts;
  const now = parts.ctx.clock.now();
  if (!parts.memoryLimit || now - parts.memoryLimit.at >= LIMIT_EVERY_MS) {
    try {
      parts.memoryLimit = { bytes: (await parts.panel.details()).memoryLimitBytes, at: now };
    } catch (error) {
      logger.warn(`cannot read the server's memory limit from the panel: ${(error as Error).message}`, {
        echo: false,
      });
    }
  }
  const check = checkMemory(parts.state, now, usedBytes, parts.memoryLimit?.bytes);
  parts.state = check.state;
  if (check.post) await postHealth(parts, check.post, check.post.kind === "high" ? "warn" : "ok");
  const help = "Memory the server's container uses, over its limit in the panel.";
  return check.ratio === undefined ? [] : [{ name: "mcops_memory_ratio", help, value: check.ratio, digits: 4 }];
}

/**
 * The tick rate while players are online (TPS_EVERY, TPS_WARN): one health post after three low samples in a row, one
 * when it is over; the last sample as a gauge for mcops_health.prom.
 */
async function watchLag(parts: Parts, observation: Observation): Promise<Gauge[]> {
  const { settings, logger } = parts;
  const players = observation.state === "running" ? (observation.players ?? 0) : 0;
  const lag = { ...settings.lag, worldDir: settings.worldDir };
  try {
    const sample = await sampleTps(
      { panel: parts.panel, clock: parts.ctx.clock, logger, settings: lag },
      parts.state,
      players,
    );
    parts.state = sample.state;
    if (sample.post) await postHealth(parts, sample.post, sample.post.kind === "lag" ? "warn" : "ok");
    const help = "Ticks a second the server ran at when last asked (20 is full speed).";
    return sample.tps === undefined ? [] : [{ name: "mcops_tps", help, value: sample.tps, digits: 2 }];
  } catch (error) {
    logger.warn(`cannot ask the server its tick rate: ${(error as Error).message}`, { echo: false });
    return [];
  }
}

/** `args`: the parsed command line (its flags win over backup.env). */
export function createMonitor(ctx: MonitorContext, loaded: LoadedSettings, once = false, statfs?: StatFs): Monitor {
  const parts = assemble(ctx, loaded, once, statfs);
  return {
    settings: parts.settings,
    get state() {
      return parts.state;
    },
    tick: () => tick(parts),
  };
}

/** The service: a decision every IDLE_POLL until the signal; `once`: one decision. */
export async function runMonitor(ctx: MonitorContext, loaded: LoadedSettings, once: boolean): Promise<number> {
  const monitor = createMonitor(ctx, loaded, once);
  for (;;) {
    const decision = await monitor.tick();
    if (once) {
      if (decision.error) throw decision.error;
      return ExitCode.ok;
    }
    if (ctx.signal.aborted) return ExitCode.ok;
    try {
      await ctx.clock.sleep(monitor.settings.pollMs, ctx.signal);
    } catch {
      return ExitCode.ok;
    }
  }
}
