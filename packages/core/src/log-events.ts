import { join } from "node:path";
import { CATEGORIES, type Category } from "./categories.ts";
import { formatDuration } from "./format.ts";
import type { LogLine } from "./log-lines.ts";
import type { Paths } from "./paths.ts";

/**
 * The lines of the tools' logs that another package relies on, written and read here and nowhere else: a backup's
 * start and end in mc-backup.log (the dashboard's "last backup", the idle monitor's "last good backup") and what became
 * of each notification (the dashboard's "recent notifications"). A change to one of these lines is a change here, and
 * its writer and its readers change together.
 */

/** Every tool's log file under the log directory (docs/system.md 2.4). */
export const LOG_FILES = {
  backup: "mc-backup.log",
  "log-tailer": "mc-log-tailer.log",
  "idle-monitor": "mc-idle-monitor.log",
  "restart-with-warning": "mc-restart.log",
  dashboard: "mc-dashboard.log",
  "jar-download": "mc-jar-download.log",
} as const;

export type LoggingTool = keyof typeof LOG_FILES;

/** The full path of a tool's log. */
export function toolLogPath(paths: Pick<Paths, "logDir">, tool: LoggingTool): string {
  return join(paths.logDir, LOG_FILES[tool]);
}

// --- A backup run in mc-backup.log ----------------------------------------------------------------------------------

/** What a finished backup reports: each is already in the operator's words ("42 s", "12.3 MiB"). */
export interface BackupFacts {
  took: string;
  added: string;
  /** The repository's size; unknown when restic could not say. */
  repository?: string | undefined;
  snapshot: string;
}

/** `took 42 s, added 12.3 MiB, repository 1.2 GiB, snapshot 1a2b3c4d`'s parts, in that order (also the notification's). */
export function backupFactList(facts: BackupFacts): string[] {
  return [
    `took ${facts.took}`,
    `added ${facts.added}`,
    ...(facts.repository === undefined ? [] : [`repository ${facts.repository}`]),
    `snapshot ${facts.snapshot}`,
  ];
}

export const backupLine = {
  /** INFO */
  started: (): string => "=== Backup started ===",
  /**
   * INFO; `autosaveOffMs`: how long the world was not saved (undefined: autosave was never turned off); `saveMs`: from
   * `save-all flush` to the game's "Saved the game", the stall of its main thread (undefined: not confirmed).
   */
  done: (facts: BackupFacts, autosaveOffMs?: number, saveMs?: number): string =>
    `=== Backup done === ${backupFactList(facts).join(", ")}${saveMs === undefined ? "" : `; save took ${formatDuration(saveMs)}`}${autosaveOffMs === undefined ? "" : `${saveMs === undefined ? ";" : ","} autosave off for ${formatDuration(autosaveOffMs)}`}`,
  /** ERROR */
  failed: (reason: string): string => `=== Backup failed === ${reason}`,
};

const STARTED = /^=== Backup started ===/;
const DONE = /^=== Backup done ===\s*(.*)$/;
const FAILED = /^=== Backup failed ===\s*(.*)$/;

export type BackupEvent =
  | { kind: "started" }
  | { kind: "done"; facts: Partial<BackupFacts> & { saveTook?: string | undefined; autosaveOff?: string | undefined } }
  | { kind: "failed"; reason: string | undefined };

function fact(facts: string, name: string): string | undefined {
  return new RegExp(`(?:^|[,;] )${name} ([^,;]+)`).exec(facts)?.[1]?.trim();
}

/** The backup event a line of mc-backup.log records, if it is one. */
export function backupEventIn(line: Pick<LogLine, "text">): BackupEvent | undefined {
  if (STARTED.test(line.text)) return { kind: "started" };
  const done = DONE.exec(line.text);
  if (done) {
    const facts = done[1] ?? "";
    return {
      kind: "done",
      facts: {
        took: fact(facts, "took"),
        added: fact(facts, "added"),
        repository: fact(facts, "repository"),
        snapshot: fact(facts, "snapshot"),
        saveTook: fact(facts, "save took"),
        autosaveOff: fact(facts, "autosave off for"),
      },
    };
  }
  const failed = FAILED.exec(line.text);
  if (failed) return { kind: "failed", reason: failed[1] || undefined };
  return undefined;
}

/** The time of the newest successful backup among `lines` (oldest first), if any. */
export function lastBackupDone(lines: readonly LogLine[]): number | undefined {
  return lines.findLast((line) => line.level === "INFO" && backupEventIn(line)?.kind === "done")?.time;
}

/** One backup as the log tells it. */
export interface BackupRun {
  /** running: started, no end yet, and a live backup holds the lock; unfinished: started and never ended (killed). */
  result: "done" | "failed" | "running" | "unfinished";
  startedAt: number | undefined;
  endedAt: number | undefined;
  /** "42 s": the log's own words for a finished backup, else measured from the lines' times. */
  took: string | undefined;
  added: string | undefined;
  repository: string | undefined;
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
  took: undefined,
  added: undefined,
  repository: undefined,
  snapshot: undefined,
  reason: undefined,
});

/** `lines` oldest first (the rotated file's, then the current file's); `running`: a live backup holds the lock. */
export function summariseBackups(lines: readonly LogLine[], running: boolean): BackupSummary {
  const runs: BackupRun[] = [];
  let open: BackupRun | undefined;
  for (const line of lines) {
    const event = backupEventIn(line);
    if (!event) continue;
    if (event.kind === "started") {
      open = { ...blankRun(), startedAt: line.time };
      runs.push(open);
      continue;
    }
    const run = open ?? blankRun();
    if (!open) runs.push(run);
    open = undefined;
    run.endedAt = line.time;
    if (event.kind === "done") Object.assign(run, { result: "done" }, event.facts);
    else Object.assign(run, { result: "failed", reason: event.reason });
    if (!run.took && run.startedAt !== undefined) run.took = formatDuration(line.time - run.startedAt);
  }
  const newest = runs.at(-1);
  if (newest && newest.result === "unfinished" && running) {
    newest.result = "running";
    return { current: newest, last: runs.at(-2) };
  }
  return { current: undefined, last: newest };
}

// --- A restore drill in mc-backup.log ------------------------------------------------------------------------------

/** What a drill reports: the snapshot it restored and what it checked, in the operator's words. */
export interface DrillFacts {
  snapshot: string;
  files: number;
  chunks: number;
  /** "1 min 12 s" */
  took: string;
  /** Set when the time budget ran out and the rest was sampled: how many chunks the sample covered of how many. */
  sampled?: string | undefined;
}

export const drillLine = {
  /** INFO */
  started: (snapshot: string): string => `=== Drill started === snapshot ${snapshot}`,
  /** INFO */
  done: (facts: DrillFacts): string =>
    `=== Drill done === snapshot ${facts.snapshot}, files ${facts.files}, chunks ${facts.chunks}, took ${facts.took}${facts.sampled ? `, sampled ${facts.sampled}` : ""}`,
  /** ERROR; `reason` names the damaged file. */
  failed: (snapshot: string | undefined, reason: string): string =>
    `=== Drill failed === ${snapshot ? `snapshot ${snapshot}: ` : ""}${reason}`,
};

const DRILL_DONE = /^=== Drill done === snapshot (\S+), files (\d+), chunks (\d+), took ([^,]+)(?:, sampled (.+))?$/;
const DRILL_FAILED = /^=== Drill failed === (?:snapshot (\S+): )?(.*)$/;

export type DrillResult =
  | { ok: true; time: number; facts: DrillFacts }
  | { ok: false; time: number; snapshot: string | undefined; reason: string };

/** The newest drill's result among `lines` (oldest first), if any drill ended there. */
export function lastDrill(lines: readonly LogLine[]): DrillResult | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as LogLine;
    const done = line.level === "INFO" ? DRILL_DONE.exec(line.text) : null;
    if (done) {
      const [, snapshot, files, chunks, took, sampled] = done as unknown as string[];
      return {
        ok: true,
        time: line.time,
        facts: {
          snapshot: snapshot as string,
          files: Number(files),
          chunks: Number(chunks),
          took: took as string,
          sampled,
        },
      };
    }
    const failed = line.level === "ERROR" ? DRILL_FAILED.exec(line.text) : null;
    if (failed) return { ok: false, time: line.time, snapshot: failed[1], reason: failed[2] as string };
  }
  return undefined;
}

/** The newest backup's end among `lines`: when it ended, and why it failed if it did. */
export function lastBackupEnd(lines: readonly LogLine[]): { time: number; failed: string | undefined } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as LogLine;
    const event = backupEventIn(line);
    if (event?.kind === "done" && line.level === "INFO") return { time: line.time, failed: undefined };
    if (event?.kind === "failed" && line.level === "ERROR")
      return { time: line.time, failed: event.reason ?? "unknown" };
  }
  return undefined;
}

// --- What became of a notification, in the log of the tool that sent it ---------------------------------------------

/** The notifier's lines; `title` is already redacted. */
export const notificationLine = {
  /** INFO */
  sent: (title: string): string => `notification "${title}" sent`,
  /** INFO: webhook.json turned the category off. */
  off: (title: string, category: Category): string =>
    `notification "${title}" not sent: the ${category} category is off`,
  /** ERROR */
  failed: (title: string, reason: string, hint: string): string =>
    `notification "${title}" not sent: ${reason} — ${hint}`,
  /** DEBUG: the webhook was deleted, which was said once already. */
  gone: (title: string): string => `notification "${title}" not sent: the webhook is gone (said above)`,
};

/** The logs of the tools that post notifications (dashboard: its test messages). */
export const NOTIFYING_TOOLS = ["backup", "log-tailer", "idle-monitor", "restart-with-warning", "dashboard"] as const;
export type NotifyingTool = (typeof NOTIFYING_TOOLS)[number];

export interface NotificationOutcome {
  title: string;
  /** sent: Discord took it; off: its category is off in webhook.json; failed: the post failed. */
  outcome: "sent" | "off" | "failed";
  /** The category that is off (outcome off). */
  category: Category | undefined;
  /** The notifier's reason and advice (outcome failed). */
  failure: string | undefined;
}

const SENT = /^notification "(.*)" sent$/;
const OFF = /^notification "(.*)" not sent: the (\w+) category is off$/;
const NOT_SENT = /^notification "(.*)" not sent: (.*)$/;

function isCategory(name: string): name is Category {
  return (CATEGORIES as readonly string[]).includes(name);
}

/** The outcome one log line records, if it is one of the notifier's INFO or ERROR lines. */
export function notificationIn(line: Pick<LogLine, "level" | "text">): NotificationOutcome | undefined {
  const outcome = (kind: NotificationOutcome["outcome"], title: string, extra: Partial<NotificationOutcome> = {}) => ({
    title,
    outcome: kind,
    category: undefined,
    failure: undefined,
    ...extra,
  });
  if (line.level === "INFO") {
    const sent = SENT.exec(line.text);
    if (sent) return outcome("sent", sent[1] as string);
    const off = OFF.exec(line.text);
    if (off && isCategory(off[2] as string)) return outcome("off", off[1] as string, { category: off[2] as Category });
  } else if (line.level === "ERROR") {
    const failed = NOT_SENT.exec(line.text);
    if (failed) return outcome("failed", failed[1] as string, { failure: failed[2] as string });
  }
  return undefined;
}
