import type { LogLine } from "./log-lines.ts";
import { NotificationRecord, type RecordOf, type ToolRecord, type WebhookFailureKind } from "./records.ts";

/**
 * The records in a log written before the tools kept records (issue 34): the lines of backups, drills and
 * notifications the earlier versions wrote, read back once, for a tool that has written no record yet (a dashboard
 * upgraded before the first new backup still shows the last one). The one place that reads the tools' sentences; new
 * lines are never read, only written (records.ts, recordLine).
 */

const BACKUP_STARTED = /^=== Backup started ===/;
const BACKUP_DONE = /^=== Backup done ===\s*(.*)$/;
const BACKUP_FAILED = /^=== Backup failed ===\s*(.*)$/;
const DRILL_DONE =
  /^=== Drill done === snapshot (\S+), files (\d+), chunks (\d+), took ([^,]+)(?:, sampled (\d+) of (\d+) chunks)?$/;
const DRILL_FAILED = /^=== Drill failed === (?:snapshot (\S+): )?(.*)$/;
const SENT = /^notification "(.*)" sent$/;
const OFF = /^notification "(.*)" not sent: the (\w+) category is off$/;
// The title ends at the first `" not sent: `: a refused post's reason quotes the webhook host, whose words must never
// become part of a title (the page shows titles).
const NOT_SENT = /^notification "(.*?)" not sent: (.*)$/;

const UNITS: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/** "12.3 MiB" (formatBytes) back to bytes, as near as its three figures tell. */
function bytesOf(text: string | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)$/.exec(text ?? "");
  return match ? Math.round(Number(match[1]) * (UNITS[match[2] as string] as number)) : undefined;
}

/** "42 s", "1 min 12 s", "2 h 5 min", "850 ms" (formatDuration) back to milliseconds. */
function msOf(text: string | undefined): number | undefined {
  const match = /^(?:(\d+) h ?)?(?:(\d+) min ?)?(?:(\d+(?:\.\d+)?) s)?(?:(\d+) ms)?$/.exec(text?.trim() ?? "");
  if (!match || !text?.trim()) return undefined;
  const [, h, min, s, ms] = match;
  return ((Number(h ?? 0) * 60 + Number(min ?? 0)) * 60 + Number(s ?? 0)) * 1000 + Number(ms ?? 0);
}

function fact(facts: string, name: string): string | undefined {
  return new RegExp(`(?:^|[,;] )${name} ([^,;]+)`).exec(facts)?.[1]?.trim();
}

function backupDone(at: number, facts: string): RecordOf<"backup.done"> | undefined {
  const tookMs = msOf(fact(facts, "took"));
  const addedBytes = bytesOf(fact(facts, "added"));
  const snapshot = fact(facts, "snapshot");
  if (tookMs === undefined || addedBytes === undefined || !snapshot) return undefined;
  return {
    type: "backup.done",
    at,
    tookMs,
    addedBytes,
    repositoryBytes: bytesOf(fact(facts, "repository")),
    snapshot,
    saveMs: msOf(fact(facts, "save took")),
    autosaveOffMs: msOf(fact(facts, "autosave off for")),
  };
}

function backupRecord(line: LogLine): ToolRecord | undefined {
  if (line.level === "INFO" && BACKUP_STARTED.test(line.text)) return { type: "backup.started", at: line.time };
  const done = line.level === "INFO" ? BACKUP_DONE.exec(line.text) : null;
  if (done) return backupDone(line.time, done[1] ?? "");
  const failed = line.level === "ERROR" ? BACKUP_FAILED.exec(line.text) : null;
  if (failed) return { type: "backup.failed", at: line.time, reason: failed[1] || "unknown" };
  return undefined;
}

function drillRecord(line: LogLine): ToolRecord | undefined {
  const done = line.level === "INFO" ? DRILL_DONE.exec(line.text) : null;
  if (done) {
    const [, snapshot, files, chunks, took, checked, present] = done as unknown as string[];
    return {
      type: "drill.done",
      at: line.time,
      snapshot: snapshot as string,
      files: Number(files),
      chunks: Number(chunks),
      tookMs: msOf(took) ?? 0,
      sampled: checked === undefined ? undefined : { checked: Number(checked), present: Number(present) },
    };
  }
  const failed = line.level === "ERROR" ? DRILL_FAILED.exec(line.text) : null;
  if (failed) return { type: "drill.failed", at: line.time, snapshot: failed[1], reason: failed[2] as string };
  return undefined;
}

function notificationRecord(line: LogLine): ToolRecord | undefined {
  const at = line.time;
  if (line.level === "INFO") {
    const sent = SENT.exec(line.text);
    if (sent) return { type: "notification", at, title: sent[1] as string, outcome: "sent" };
    const off = OFF.exec(line.text);
    // A category this version does not know is not one of its lines.
    const record =
      off &&
      NotificationRecord.safeParse({ type: "notification", at, title: off[1], outcome: "off", category: off[2] });
    if (record?.success) return record.data;
  } else if (line.level === "ERROR") {
    const failed = NOT_SENT.exec(line.text);
    if (failed) {
      const [reason, hint] = splitAdvice(failed[2] as string);
      const failure = { ...failureCode(reason), reason, hint };
      return { type: "notification", at, title: failed[1] as string, outcome: "failed", failure };
    }
  }
  return undefined;
}

/** The notifier's reasons before it kept codes, each with the code it now records; the status where one was answered. */
const FAILURE_SHAPES: Array<[RegExp, WebhookFailureKind]> = [
  [/^the webhook does not exist: it was deleted or its address is wrong \((\d{3})\b/, "gone"],
  [/^the webhook token is not accepted \((\d{3})\b/, "token"],
  [/^the message was refused \((\d{3})\b/, "refused"],
  [/^the webhook stayed rate limited \((429)\) after \d+ (?:tries|waits)$/, "busy"],
  [/^the webhook host kept failing \(HTTP (\d{3})\) after \d+ tries$/, "server"],
  [/^cannot reach the webhook host [\w.:[\]-]+ \([\w.-]+\) after \d+ tries$/, "unreachable"],
  [/^rate limited for \d+ s$/, "rate-limited"],
  [/^the message could not be sent \([^()]{0,120}\)$/, "local"],
];

/** An old reason's code: one of the notifier's shapes, or `legacy` (a page shows only a pointer to the log). */
function failureCode(reason: string): { kind: WebhookFailureKind; status?: number } {
  for (const [shape, kind] of FAILURE_SHAPES) {
    const match = shape.exec(reason);
    if (match) return match[1] === undefined ? { kind } : { kind, status: Number(match[1]) };
  }
  return { kind: "legacy" };
}

/** `<reason> — <advice>`: the advice is the notifier's and never holds " — "; a quoted remote text may, so the last splits. */
function splitAdvice(detail: string): [string, string] {
  const split = detail.lastIndexOf(" — ");
  return split < 0 ? [detail, ""] : [detail.slice(0, split), detail.slice(split + 3)];
}

/** The records the lines of an old log (oldest first) hold, oldest first. */
export function legacyRecords(lines: readonly LogLine[]): ToolRecord[] {
  return lines.flatMap((line) => backupRecord(line) ?? drillRecord(line) ?? notificationRecord(line) ?? []);
}
