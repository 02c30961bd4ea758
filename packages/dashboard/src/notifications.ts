import type { Category } from "@mcops/core/categories";
import { NOTIFYING_TOOLS, type NotifyingTool, notificationIn, toolLogPath } from "@mcops/core/log-events";
import { readLogTail } from "@mcops/core/log-lines";
import { webhookFailureSummary } from "./remote-answer.ts";

/**
 * "The last few notifications sent". Core's notifier logs what became of every message in the log of the tool that
 * sent it, one line each, which core's log-events reads back (notificationIn). The list is those lines and nothing
 * else: a message is shown only once its outcome is logged. Nothing is logged while no webhook is configured.
 */
export interface NotificationEntry {
  /** Epoch ms of the log line. */
  time: number;
  source: NotifyingTool;
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

/** The newest `count` outcomes of every notifying tool's log, newest first. */
export function recentNotifications(logDir: string, count = 8): NotificationEntry[] {
  const all = NOTIFYING_TOOLS.flatMap((source, fileIndex) =>
    readLogTail(toolLogPath({ logDir }, source), 64 * 1024).flatMap((line, index) => {
      const found = notificationIn(line);
      if (!found) return [];
      const { failure, ...outcome } = found;
      const detail = failure === undefined ? undefined : webhookFailureSummary(failure);
      const entry: NotificationEntry = { time: line.time, source, ...outcome, detail };
      return [{ entry, fileIndex, index }];
    }),
  );
  all.sort((a, b) => b.entry.time - a.entry.time || b.fileIndex - a.fileIndex || b.index - a.index);
  return all.slice(0, count).map((x) => x.entry);
}
