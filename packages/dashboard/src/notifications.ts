import { join } from "node:path";
import { CATEGORIES, type Category } from "@mcops/core/categories";
import { type LogLine, readLogTail } from "@mcops/core/log-lines";
import { webhookFailureSummary } from "./remote-answer.ts";

/**
 * "The last few notifications sent". Core's notifier logs what became of every message in the log of the tool that
 * sent it, one line each: `INFO notification "<title>" sent`, `INFO notification "<title>" not sent: the <category>
 * category is off`, `ERROR notification "<title>" not sent: <reason> — <hint>`. The list is those lines and nothing
 * else: a message is shown only once its outcome is logged. Nothing is logged while no webhook is configured.
 */
export type NotificationSource = "backup" | "log-tailer" | "idle-monitor" | "restart-with-warning" | "dashboard";

export interface NotificationEntry {
  /** Epoch ms of the log line. */
  time: number;
  source: NotificationSource;
  title: string;
  /** sent: Discord took it; off: its category is off in webhook.json; failed: the post failed. */
  outcome: "sent" | "off" | "failed";
  /** The category that is off (outcome off). */
  category: Category | undefined;
  /**
   * Why a post failed: the notifier's reason and advice (outcome failed), with an HTTP answer as its status only:
   * what the webhook host said stays in the log (remote-answer.ts).
   */
  detail: string | undefined;
}

/** The logs of the tools that post (dashboard: its test messages). */
export const SOURCES: ReadonlyArray<{ file: string; source: NotificationSource }> = [
  { file: "mc-backup.log", source: "backup" },
  { file: "mc-log-tailer.log", source: "log-tailer" },
  { file: "mc-idle-monitor.log", source: "idle-monitor" },
  { file: "mc-restart.log", source: "restart-with-warning" },
  { file: "mc-dashboard.log", source: "dashboard" },
];

const SENT = /^notification "(.*)" sent$/;
const OFF = /^notification "(.*)" not sent: the (\w+) category is off$/;
const FAILED = /^notification "(.*)" not sent: (.*)$/;

function isCategory(name: string): name is Category {
  return (CATEGORIES as readonly string[]).includes(name);
}

/** The entry one log line records, if it is one of the notifier's outcome lines. */
export function notificationIn(line: LogLine, source: NotificationSource): NotificationEntry | undefined {
  const entry = (outcome: NotificationEntry["outcome"], title: string, extra: Partial<NotificationEntry> = {}) => ({
    time: line.time,
    source,
    title,
    outcome,
    category: undefined,
    detail: undefined,
    ...extra,
  });
  if (line.level === "INFO") {
    const sent = SENT.exec(line.text);
    if (sent) return entry("sent", sent[1] as string);
    const off = OFF.exec(line.text);
    if (off && isCategory(off[2] as string)) return entry("off", off[1] as string, { category: off[2] as Category });
  } else if (line.level === "ERROR") {
    const failed = FAILED.exec(line.text);
    if (failed) return entry("failed", failed[1] as string, { detail: webhookFailureSummary(failed[2] as string) });
  }
  return undefined;
}

/** The newest `count` outcomes of every tool's log, newest first. */
export function recentNotifications(logDir: string, count = 8): NotificationEntry[] {
  const all = SOURCES.flatMap(({ file, source }, fileIndex) =>
    readLogTail(join(logDir, file), 64 * 1024).flatMap((line, index) => {
      const entry = notificationIn(line, source);
      return entry ? [{ entry, fileIndex, index }] : [];
    }),
  );
  all.sort((a, b) => b.entry.time - a.entry.time || b.fileIndex - a.fileIndex || b.index - a.index);
  return all.slice(0, count).map((x) => x.entry);
}
