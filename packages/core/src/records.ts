import * as z from "zod/mini";
import { CATEGORIES } from "./categories.ts";
import { formatBytes, formatDuration } from "./format.ts";
import type { LogLevel } from "./log-level.ts";

/**
 * The records the tools hand each other (issue 34): what a backup, a drill and a notification became, the idle
 * monitor's state and health figures, and the VM's heartbeat to the Worker. Each is a zod schema: a writer appends the
 * record to `<stateDir>/events/<tool>.jsonl` (events.ts) and renders its log line from it (recordLine), a reader parses
 * with the schema and puts numbers and failure codes into words only where it shows them. No tool reads another's log
 * sentences back; the log lines stay the operator's, exactly as docs/system.md writes them.
 *
 * This module is pure (zod and core's formatting only): the Worker bundles it to check the heartbeat.
 */

/** Epoch milliseconds, within what a Date can hold (a later one would fail every reader that shows it). */
const Epoch = z.int().check(z.nonnegative(), z.maximum(8.64e15));
/**
 * A span in milliseconds, measured on the wall clock: one that a clock stepped back (NTP) made negative is 0, never a
 * record its readers refuse (the backup would look unfinished to all of them).
 */
const Span = z.pipe(
  z.number(),
  z.transform((ms) => Math.max(0, ms)),
);
const Bytes = z.number().check(z.nonnegative());
const Count = z.int().check(z.nonnegative());
/** A restic snapshot's short id, as the tools write it. */
const SnapshotId = z.string().check(z.minLength(1), z.maxLength(64));

// --- A backup run ---------------------------------------------------------------------------------------------------

export const BackupStarted = z.object({ type: z.literal("backup.started"), at: Epoch });

export const BackupDone = z.object({
  type: z.literal("backup.done"),
  at: Epoch,
  tookMs: Span,
  addedBytes: Bytes,
  /** The repository's size; absent when restic could not say. */
  repositoryBytes: z.optional(Bytes),
  snapshot: SnapshotId,
  /** From `save-all flush` to the game's "Saved the game" (absent: not confirmed). */
  saveMs: z.optional(Span),
  /** How long the world was not saved (absent: autosave was never turned off). */
  autosaveOffMs: z.optional(Span),
});

export const BackupFailed = z.object({
  type: z.literal("backup.failed"),
  at: Epoch,
  /** Why, in the tool's own words (the error's message). */
  reason: z.string(),
  /** The error's class (JobError, ConfigError, ...) and the exit code the run ends with. */
  kind: z.optional(z.string().check(z.maxLength(64))),
  exitCode: z.optional(z.int()),
});

// --- A restore drill ------------------------------------------------------------------------------------------------

export const DrillStarted = z.object({ type: z.literal("drill.started"), at: Epoch, snapshot: SnapshotId });

export const DrillDone = z.object({
  type: z.literal("drill.done"),
  at: Epoch,
  snapshot: SnapshotId,
  files: Count,
  chunks: Count,
  tookMs: Span,
  /** Set when the time budget ran out and the rest was sampled: the chunks checked of those present. */
  sampled: z.optional(z.object({ checked: Count, present: Count })),
});

export const DrillFailed = z.object({
  type: z.literal("drill.failed"),
  at: Epoch,
  snapshot: z.optional(SnapshotId),
  reason: z.string(),
});

// --- What became of a notification ----------------------------------------------------------------------------------

/**
 * Why a post failed, as a code: gone (404), token (401, 403), refused (another 4xx), busy (429 after every try),
 * rate-limited (the limit would hold it past what a post may wait), server (5xx after every try), unreachable (no
 * connection), local (this machine: the rate window's files). `legacy`: read from a log line written before the
 * records (its words only).
 */
export const WEBHOOK_FAILURE_KINDS = [
  "gone",
  "token",
  "refused",
  "busy",
  "rate-limited",
  "server",
  "unreachable",
  "local",
  "legacy",
] as const;
export type WebhookFailureKind = (typeof WEBHOOK_FAILURE_KINDS)[number];

/** The notifier's words for an HTTP answer it will not post past (its reason adds the status and Discord's words). */
export const WEBHOOK_ANSWER_WORDS = {
  gone: "the webhook does not exist: it was deleted or its address is wrong",
  token: "the webhook token is not accepted",
  refused: "the message was refused",
} as const;

export const WebhookFailure = z.object({
  kind: z.enum(WEBHOOK_FAILURE_KINDS),
  /** The HTTP status answered, when one was. */
  status: z.optional(z.int().check(z.minimum(100), z.maximum(599))),
  /** The notifier's reason for the tool's log: may quote what the webhook host said (a page never shows it). */
  reason: z.string(),
  /** The notifier's advice: its own words and the settings file's name. */
  hint: z.string(),
});
export type WebhookFailure = z.infer<typeof WebhookFailure>;

export const NotificationRecord = z.object({
  type: z.literal("notification"),
  at: Epoch,
  /** Already redacted. */
  title: z.string(),
  /** sent: Discord took it; off: its category is off in webhook.json; failed: the post failed. */
  outcome: z.enum(["sent", "off", "failed"]),
  /** The category that is off (outcome off). */
  category: z.optional(z.enum(CATEGORIES)),
  failure: z.optional(WebhookFailure),
});

/** Every record a tool writes to its events file. */
export const ToolRecord = z.discriminatedUnion("type", [
  BackupStarted,
  BackupDone,
  BackupFailed,
  DrillStarted,
  DrillDone,
  DrillFailed,
  NotificationRecord,
]);
export type ToolRecord = z.infer<typeof ToolRecord>;
export type RecordOf<T extends ToolRecord["type"]> = Extract<ToolRecord, { type: T }>;

/** Where a tool's records go (events.ts): a logger's, or none (a test's logger, a tool that keeps none). */
export interface EventJournal {
  append(record: ToolRecord): void;
}

// --- The log line each record is written as -------------------------------------------------------------------------

/** `took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d`'s parts, in that order (also the notification's). */
export function backupFactList(done: RecordOf<"backup.done">): string[] {
  return [
    `took ${formatDuration(done.tookMs)}`,
    `added ${formatBytes(done.addedBytes)}`,
    ...(done.repositoryBytes === undefined ? [] : [`repository ${formatBytes(done.repositoryBytes)}`]),
    `snapshot ${done.snapshot}`,
  ];
}

/** `1943 of 2210 chunks`: how much of a drill's world its time budget let it check. */
export function sampledWords(sampled: NonNullable<RecordOf<"drill.done">["sampled"]>): string {
  return `${sampled.checked} of ${sampled.present} chunks`;
}

function backupDoneLine(done: RecordOf<"backup.done">): string {
  const { saveMs, autosaveOffMs } = done;
  const save = saveMs === undefined ? "" : `; save took ${formatDuration(saveMs)}`;
  const off =
    autosaveOffMs === undefined ? "" : `${save ? "," : ";"} autosave off for ${formatDuration(autosaveOffMs)}`;
  return `=== Backup done === ${backupFactList(done).join(", ")}${save}${off}`;
}

function notificationText(record: RecordOf<"notification">): string {
  if (record.outcome === "sent") return `notification "${record.title}" sent`;
  if (record.outcome === "off")
    return `notification "${record.title}" not sent: the ${record.category} category is off`;
  return `notification "${record.title}" not sent: ${record.failure?.reason} — ${record.failure?.hint}`;
}

/** The line of the tool's log a record is written as (docs/system.md), and its level. */
export function recordLine(record: ToolRecord): { level: LogLevel; text: string } {
  switch (record.type) {
    case "backup.started":
      return { level: "INFO", text: "=== Backup started ===" };
    case "backup.done":
      return { level: "INFO", text: backupDoneLine(record) };
    case "backup.failed":
      return { level: "ERROR", text: `=== Backup failed === ${record.reason}` };
    case "drill.started":
      return { level: "INFO", text: `=== Drill started === snapshot ${record.snapshot}` };
    case "drill.done": {
      const { snapshot, files, chunks, tookMs, sampled } = record;
      const rest = sampled ? `, sampled ${sampledWords(sampled)}` : "";
      return {
        level: "INFO",
        text: `=== Drill done === snapshot ${snapshot}, files ${files}, chunks ${chunks}, took ${formatDuration(tookMs)}${rest}`,
      };
    }
    case "drill.failed":
      return {
        level: "ERROR",
        text: `=== Drill failed === ${record.snapshot ? `snapshot ${record.snapshot}: ` : ""}${record.reason}`,
      };
    case "notification":
      return { level: record.outcome === "failed" ? "ERROR" : "INFO", text: notificationText(record) };
  }
}

// --- What readers make of a tool's records --------------------------------------------------------------------------

/** One backup as its records tell it. */
export interface BackupRun {
  /** running: started, no end yet, and a live backup holds the lock; unfinished: started and never ended (killed). */
  result: "done" | "failed" | "running" | "unfinished";
  startedAt: number | undefined;
  endedAt: number | undefined;
  /** The run's own figure for a finished backup, else measured from the records' times. */
  tookMs: number | undefined;
  addedBytes: number | undefined;
  repositoryBytes: number | undefined;
  snapshot: string | undefined;
  reason: string | undefined;
}

export interface BackupSummary {
  /** A backup in progress. */
  current: BackupRun | undefined;
  /** The newest backup that is not in progress. */
  last: BackupRun | undefined;
}

const blankRun = (): BackupRun => ({
  result: "unfinished",
  startedAt: undefined,
  endedAt: undefined,
  tookMs: undefined,
  addedBytes: undefined,
  repositoryBytes: undefined,
  snapshot: undefined,
  reason: undefined,
});

/** The runs among `records` (oldest first), each start paired with the end that follows it. */
function backupRuns(records: readonly ToolRecord[]): BackupRun[] {
  const runs: BackupRun[] = [];
  let open: BackupRun | undefined;
  for (const record of records) {
    if (record.type === "backup.started") {
      open = { ...blankRun(), startedAt: record.at };
      runs.push(open);
      continue;
    }
    if (record.type !== "backup.done" && record.type !== "backup.failed") continue;
    const run = open ?? blankRun();
    if (!open) runs.push(run);
    open = undefined;
    run.endedAt = record.at;
    if (record.type === "backup.done") {
      Object.assign(run, {
        result: "done",
        tookMs: record.tookMs,
        addedBytes: record.addedBytes,
        repositoryBytes: record.repositoryBytes,
        snapshot: record.snapshot,
      });
    } else Object.assign(run, { result: "failed", reason: record.reason });
    if (run.tookMs === undefined && run.startedAt !== undefined) run.tookMs = record.at - run.startedAt;
  }
  return runs;
}

/** `records` oldest first; `running`: a live backup holds the lock. */
export function summariseBackups(records: readonly ToolRecord[], running: boolean): BackupSummary {
  const runs = backupRuns(records);
  const newest = runs.at(-1);
  if (newest && newest.result === "unfinished" && running) {
    newest.result = "running";
    return { current: newest, last: runs.at(-2) };
  }
  return { current: undefined, last: newest };
}

/** The newest successful backup among `records` (oldest first). */
export function lastBackupDone(records: readonly ToolRecord[]): RecordOf<"backup.done"> | undefined {
  return records.findLast((r): r is RecordOf<"backup.done"> => r.type === "backup.done");
}

/** The newest backup's end among `records`: when it ended, and why it failed if it did. */
export function lastBackupEnd(
  records: readonly ToolRecord[],
): { time: number; failed: string | undefined } | undefined {
  const end = records.findLast((r) => r.type === "backup.done" || r.type === "backup.failed");
  if (!end) return undefined;
  return { time: end.at, failed: end.type === "backup.failed" ? end.reason : undefined };
}

/** The newest drill's end among `records` (oldest first), if any drill ended there. */
export function lastDrill(records: readonly ToolRecord[]): RecordOf<"drill.done" | "drill.failed"> | undefined {
  return records.findLast(
    (r): r is RecordOf<"drill.done" | "drill.failed"> => r.type === "drill.done" || r.type === "drill.failed",
  );
}

// --- The idle monitor's state and the heartbeat ---------------------------------------------------------------------

/** A field written by an older or broken writer is dropped, never the whole record. */
const optional = <T extends z.ZodMiniType>(schema: T) => z.catch(z.optional(schema), undefined);

/** A kernel boot id is a UUID; anything of that alphabet up to 64 characters is taken. */
export const BOOT_ID = /^[A-Za-z0-9-]{1,64}$/;
/** A UTC day, "2026-11-25". */
const Day = z.string().check(z.regex(/^\d{4}-\d\d-\d\d$/));

/**
 * The idle monitor's latest health figures (issue 18), kept in its state file for the dashboard to show: the last tick
 * rate asked, memory used over the limit, free space on the volume's disk and restic's cache's.
 */
export const HealthFigures = z.object({
  /** Epoch ms of the decision that measured them. */
  at: z.number(),
  tps: optional(z.number()),
  memory: optional(z.number()),
  volumeFree: optional(z.number()),
  cacheFree: optional(z.number()),
});
export type HealthFigures = z.infer<typeof HealthFigures>;

const DiskAlert = z.object({ warn: optional(Day), critical: optional(Day) });

/** idle-monitor.json: what the idle monitor keeps between polls and boots. */
export const IdleStateFile = z.object({
  /** The last time anyone was seen online. */
  lastActivity: optional(z.number()),
  /** Since when nobody has been online (unset while someone plays or nobody knows). */
  idleSince: optional(z.number()),
  /** When the monitor last started an idle backup (for the cooldown). */
  lastIdleBackup: optional(z.number()),
  /** The last backup known to have succeeded (the monitor's own, or any in the backup's records). */
  lastBackupOk: optional(z.number()),
  /** When the monitor last stopped the server for being idle. */
  idleStop: optional(z.number()),
  /** Since when players have been online without a break (unset while nobody plays). */
  activeSince: optional(z.number()),
  /** When the monitor last started a recovery point while people played. */
  lastPlayBackup: optional(z.number()),
  /** When the monitor first looked: the age of "no backup yet". */
  watchingSince: optional(z.number()),
  /** When the staleness alarm was last posted; unset once backups run again. */
  staleAlarm: optional(z.number()),
  /** The tick-rate command the server answers ("none": neither), when it was last asked, its last answer. */
  tpsCommand: optional(z.enum(["tps", "tick query", "none"])),
  tpsAskedAt: optional(z.number()),
  lastTps: optional(z.number()),
  /** The low samples in a row (the last three); when the lag warning was posted, unset once it is over. */
  lowSamples: optional(
    z.pipe(
      z.array(z.unknown()),
      z.transform((v) => v.filter((n): n is number => typeof n === "number").slice(-3)),
    ),
  ),
  lagAlert: optional(z.number()),
  /** The latest health figures, for the dashboard. */
  health: optional(HealthFigures),
  /** Since when memory has been above MEMORY_HIGH of the limit. */
  memoryHighSince: optional(z.number()),
  /** When the memory warning was posted; unset once it is below again. */
  memoryAlert: optional(z.number()),
  /** The UTC day of the last daily certificate check. */
  certsCheckedDay: optional(Day),
  /** When the last heartbeat went to the Worker, and when a hibernation was last asked and accepted. */
  heartbeatAt: optional(z.number()),
  hibernateAsked: optional(z.number()),
  /** The kernel's boot id when the state was last saved: a new one starts the idle clock again. */
  bootId: optional(z.string().check(z.regex(BOOT_ID))),
  /** The disks below DISK_WARN, and when each level was last posted (UTC days). */
  disks: optional(
    z.pipe(
      z.object({ volume: optional(DiskAlert), cache: optional(DiskAlert) }),
      z.transform((d) => (d.volume || d.cache ? d : undefined)),
    ),
  ),
});
export type IdleStateFile = z.infer<typeof IdleStateFile>;

/** A player's name as the game allows it (and the heartbeat carries it). */
export const PLAYER_NAME = /^[A-Za-z0-9_.*]{1,16}$/;

/**
 * The VM's heartbeat to the Worker (idle-monitor → discord-control), signed but never trusted to be well-formed: the
 * state cut to 20 characters, at most 100 names that are names, a count no smaller than the names, times only when they
 * are times (the Worker also refuses one from the future).
 */
export const Heartbeat = z.pipe(
  z.object({
    serverState: z.pipe(
      z.string(),
      z.transform((s) => s.slice(0, 20)),
    ),
    players: z.pipe(
      z.array(z.unknown()),
      z.transform((list) =>
        list.filter((p): p is string => typeof p === "string" && PLAYER_NAME.test(p)).slice(0, 100),
      ),
    ),
    online: optional(z.int().check(z.nonnegative(), z.maximum(100_000))),
    lastBackup: optional(z.number().check(z.positive())),
    lastDrill: optional(
      z.object({
        at: z.number().check(z.positive()),
        ok: z.pipe(
          z.unknown(),
          z.transform((v) => v === true),
        ),
      }),
    ),
    bootId: optional(z.string().check(z.regex(BOOT_ID))),
  }),
  z.transform((beat) => ({ ...beat, online: Math.max(beat.online ?? beat.players.length, beat.players.length) })),
);
export type Heartbeat = z.infer<typeof Heartbeat>;
/** What the idle monitor sends (before the Worker's checks). */
export type HeartbeatBody = z.input<typeof Heartbeat>;

/** The Worker's answer to a heartbeat: a `/start` waiting for the game, or a `/stop` (forced or not). */
export const HeartbeatAnswer = z.object({
  hibernate: optional(z.union([z.literal(false), z.object({ force: optional(z.boolean()) })])),
  start: optional(z.boolean()),
});
export type HeartbeatAnswer = z.infer<typeof HeartbeatAnswer>;
