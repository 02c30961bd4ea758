import type { Category } from "@mcops/core/categories";
import { readRecords } from "@mcops/core/events";
import { oneLine } from "@mcops/core/log";
import { NOTIFYING_TOOLS, type NotifyingTool } from "@mcops/core/log-events";
import type { Paths } from "@mcops/core/paths";
import { webhookFailureWords } from "./remote-answer.ts";

/**
 * "The last few notifications sent". Core's notifier records what became of every message in the events of the tool
 * that sent it (and writes its log line from the same record); the list is those records and nothing else: a message
 * is shown only once its outcome is recorded. Nothing is recorded while no webhook is configured.
 */
export interface NotificationEntry {
  /** Epoch ms of the record. */
  time: number;
  source: NotifyingTool;
  title: string;
  /** sent: Discord took it; off: its category is off in webhook.json; failed: the post failed. */
  outcome: "sent" | "off" | "failed";
  /** The category that is off (outcome off). */
  category: Category | undefined;
  /**
   * Why a post failed, in the page's words (remote-answer.ts): an HTTP answer as its status only, what the webhook
   * host said stays in the log.
   */
  detail: string | undefined;
}

/** How much of the end of each tool's records the list reads: hundreds of posts, for the newest eight. */
const RECENT_BYTES = 64 * 1024;

/** The newest `count` outcomes of every notifying tool's records, newest first. */
export function recentNotifications(paths: Pick<Paths, "logDir" | "stateDir">, count = 8): NotificationEntry[] {
  const all = NOTIFYING_TOOLS.flatMap((source, fileIndex) =>
    readRecords(paths, source, RECENT_BYTES).flatMap((record, index) => {
      if (record.type !== "notification") return [];
      const entry: NotificationEntry = {
        time: record.at,
        source,
        // As the log line shows it (records are written so; one put there otherwise is shown so too).
        title: oneLine(record.title),
        outcome: record.outcome,
        category: record.category,
        detail: record.failure && webhookFailureWords(record.failure),
      };
      return [{ entry, fileIndex, index }];
    }),
  );
  all.sort((a, b) => b.entry.time - a.entry.time || b.fileIndex - a.fileIndex || b.index - a.index);
  return all.slice(0, count).map((x) => x.entry);
}
