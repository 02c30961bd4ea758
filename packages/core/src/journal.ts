import { fstatSync } from "node:fs";
import type { LogLevel } from "./log-level.ts";

/**
 * Whether file descriptor `fd` (stderr) is the systemd journal, as systemd.exec(5) says to tell: JOURNAL_STREAM holds
 * `<device>:<inode>` (decimal) of the journal stream, and fd must be that very file. The variable alone proves
 * nothing: a service's children inherit it with their stderr on a pipe or a file (idle-monitor's backup run, a tool
 * started from a shell inside the unit). Compared as integers, exactly (inodes may pass 2^53); a malformed value or a
 * closed descriptor is "not the journal".
 */
export function journalStream(env: NodeJS.ProcessEnv, fd = 2): boolean {
  const match = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? "");
  if (!match) return false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    return stat.dev === BigInt(match[1] as string) && stat.ino === BigInt(match[2] as string);
  } catch {
    return false;
  }
}

/** sd-daemon(3)'s priorities: journald reads them off the start of each line (SyslogLevelPrefix=yes, the default). */
const PRIORITY: Record<LogLevel, string> = { ERROR: "<3>", WARN: "<4>", INFO: "<6>", DEBUG: "<7>" };

/**
 * `text` with every line starting with the level's priority: journald makes an entry of each line (up to each "\n")
 * and files one without a prefix as info. Each line gets exactly one prefix, ours; journald reads only the first, so a
 * message that itself starts with `<3>` stays text.
 */
export function withPriority(level: LogLevel, text: string): string {
  return text.replace(/(^|\n)(?!$)/g, (start) => start + PRIORITY[level]);
}
