import { join } from "node:path";
import type { Category } from "@mcops/core/categories";
import { type LogLine, readLogTail } from "@mcops/core/log-lines";

/**
 * "The last few notifications sent". Core's notifier keeps no record of what it posted, and logs a successful post
 * only as a DEBUG line (MCOPS_DEBUG=1), a failed one always as an ERROR line. So the list is read from the tools' own
 * logs: each line that marks an event a tool posts a message for (the table below, matching what each tool logs next
 * to its notifier.send), then `notification "<title>" sent to ...` / `... not sent: <reason>` lines, which settle the
 * outcome of the event before them. The dashboard logs its own test messages in that form.
 */
export type NotificationSource = "backup" | "log-tailer" | "idle-monitor" | "restart-with-warning" | "dashboard";

export interface NotificationEntry {
  /** Epoch ms of the log line. */
  time: number;
  source: NotificationSource;
  title: string;
  /** undefined: sent whatever the categories (a test message). */
  category: Category | undefined;
  /** raised: posted if its category was on and a webhook was set then (a successful post is not logged). */
  outcome: "raised" | "sent" | "failed";
  /** Why a post failed. */
  detail: string | undefined;
}

type Rule = [pattern: RegExp, event: (match: RegExpExecArray) => { title: string; category: Category }];

const GAME_TITLES: Record<string, (player: string, message: string) => { title: string; category: Category }> = {
  join: (player) => ({ title: `${player} joined the game`, category: "join" }),
  leave: (player) => ({ title: `${player} left the game`, category: "leave" }),
  death: (_, message) => ({ title: message, category: "death" }),
  start: () => ({ title: "Server started", category: "start" }),
  stop: () => ({ title: "Server stopped", category: "stop" }),
  crash: () => ({ title: "Server crashed", category: "crash" }),
  error: () => ({ title: "Server error", category: "crash" }),
};

const fixed = (title: string, category: Category) => (): { title: string; category: Category } => ({ title, category });

/** The log lines each tool writes where it posts (see the tools' sources); titles as their messages have them. */
export const SOURCES: ReadonlyArray<{ file: string; source: NotificationSource; rules: Rule[] }> = [
  {
    file: "mc-backup.log",
    source: "backup",
    rules: [
      [/^=== Backup started ===/, fixed("Backup started", "backup")],
      [/^=== Backup done ===/, fixed("Backup completed", "backup")],
      [/^=== Backup failed ===/, fixed("Backup failed", "backup")],
    ],
  },
  {
    file: "mc-log-tailer.log",
    source: "log-tailer",
    rules: [
      [
        /^(join|leave|death|start|stop|crash|error)(?: (\S+))?: (.*) \(line \d+\)$/,
        (m) => (GAME_TITLES[m[1] as string] as NonNullable<(typeof GAME_TITLES)[string]>)(m[2] ?? "", m[3] ?? ""),
      ],
    ],
  },
  {
    file: "mc-idle-monitor.log",
    source: "idle-monitor",
    rules: [
      [/: idle backup now$/, fixed("Idle backup triggered", "idle")],
      [/: stopping the server$/, fixed("Server stopped (idle)", "idle")],
    ],
  },
  {
    file: "mc-restart.log",
    source: "restart-with-warning",
    rules: [
      [/^countdown of .* starts/, fixed("Scheduled restart warning", "restart")],
      [/^the server stopped during the countdown/, fixed("Restart cancelled", "restart")],
      [/: restart skipped$/, fixed("Restart skipped", "restart")],
      [/^sending the restart signal/, fixed("Restart triggered", "restart")],
      [/^the server is not running again/, fixed("Restart failed", "restart")],
      [/^the server is running again/, fixed("Server restarted", "restart")],
    ],
  },
  { file: "mc-dashboard.log", source: "dashboard", rules: [] },
];

const SENT = /^notification "(.*)" sent to /;
const NOT_SENT = /^notification "(.*)" not sent: (.*)$/;

/** The entries of one tool's log, oldest first. */
export function notificationsIn(lines: readonly LogLine[], source: (typeof SOURCES)[number]): NotificationEntry[] {
  const entries: NotificationEntry[] = [];
  for (const line of lines) {
    const outcome = SENT.exec(line.text) ?? NOT_SENT.exec(line.text);
    if (outcome) {
      const title = outcome[1] as string;
      const failed = outcome[2] !== undefined;
      // The event this settles: the newest one of the same title still open, from the last few minutes.
      const open = entries.findLast((e) => e.outcome === "raised" && e.title === title && line.time - e.time < 600_000);
      // The same outcome logged twice (the notifier's DEBUG line, then the dashboard's own): one entry.
      const last = entries.at(-1);
      if (
        !open &&
        last?.title === title &&
        last.outcome === (failed ? "failed" : "sent") &&
        line.time - last.time < 60_000
      ) {
        continue;
      }
      const entry: NotificationEntry = open ?? {
        time: line.time,
        source: source.source,
        title,
        category: undefined,
        outcome: "raised",
        detail: undefined,
      };
      entry.outcome = failed ? "failed" : "sent";
      entry.detail = failed ? outcome[2] : undefined;
      if (!open) entries.push(entry);
      continue;
    }
    for (const [pattern, event] of source.rules) {
      const match = pattern.exec(line.text);
      if (!match) continue;
      entries.push({ time: line.time, source: source.source, ...event(match), outcome: "raised", detail: undefined });
      break;
    }
  }
  return entries;
}

/** The newest `count` entries of every tool's log, newest first. */
export function recentNotifications(logDir: string, count = 8): NotificationEntry[] {
  const all = SOURCES.flatMap((source, fileIndex) =>
    notificationsIn(readLogTail(join(logDir, source.file), 64 * 1024), source).map((entry, index) => ({
      entry,
      fileIndex,
      index,
    })),
  );
  all.sort((a, b) => b.entry.time - a.entry.time || b.fileIndex - a.fileIndex || b.index - a.index);
  return all.slice(0, count).map((x) => x.entry);
}
