import { join } from "node:path";
import type { Paths } from "./paths.ts";

/**
 * The tools' log files. What one tool tells another does not travel in them: it is a record (records.ts, events.ts);
 * the log keeps the operator's lines, rendered from the same records.
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

/** The logs of the tools that post notifications (dashboard: its test messages). */
export const NOTIFYING_TOOLS = ["backup", "log-tailer", "idle-monitor", "restart-with-warning", "dashboard"] as const;
export type NotifyingTool = (typeof NOTIFYING_TOOLS)[number];
