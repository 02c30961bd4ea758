import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "./clock.ts";
import { isErrno } from "./fs.ts";
import { type Logger, toolLogger } from "./log.ts";
import { LOG_FILES, type LoggingTool, toolLogPath } from "./log-events.ts";
import { readLogTail, tailLines } from "./log-lines.ts";
import type { Paths } from "./paths.ts";
import { type EventJournal, recordLine, ToolRecord } from "./records.ts";
import { legacyRecords } from "./records-legacy.ts";

/**
 * A tool's records (records.ts), one JSON line each in `<stateDir>/events/<tool>.jsonl`: what the dashboard, the idle
 * monitor, `backup status` and the heartbeat read instead of the tool's log. Bounded: past ROTATE_BYTES the file
 * becomes `<tool>.jsonl.1` (the one before is dropped), and a reader takes at most READ_BYTES of each, from the end.
 */

/** A file this large is rotated before the next record: about 5,000 backups' records. */
export const ROTATE_BYTES = 1024 * 1024;
/** What a reader takes from the end of each file, unless it asks for less. */
export const READ_BYTES = 256 * 1024;

/** The events file of a tool. */
export function eventsFile(paths: Pick<Paths, "stateDir">, tool: LoggingTool): string {
  return join(paths.stateDir, "events", `${tool}.jsonl`);
}

/** A tool's journal: appends a record, rotating the file first when it is full; throws when it cannot write. */
export function eventJournal(paths: Pick<Paths, "stateDir">, tool: LoggingTool): EventJournal {
  const file = eventsFile(paths, tool);
  return {
    append(record) {
      mkdirSync(join(file, ".."), { recursive: true, mode: 0o755 });
      if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) >= ROTATE_BYTES) renameSync(file, `${file}.1`);
      appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o644 });
    },
  };
}

/** The loggers that said their journal cannot be written: said once, not at every record. */
const journalBroken = new WeakSet<Logger>();

/**
 * Writes `record` as its log line (recordLine) and appends it to the logger's journal, when it has one. A record that
 * cannot be written (a full disk, a state directory root cannot write) costs one WARN line, once, and never the run:
 * the log line was written already.
 */
export function record(logger: Logger, record: ToolRecord, options?: { echo?: boolean }): void {
  const { level, text } = recordLine(record);
  if (level === "ERROR") logger.error(text, options);
  else logger.info(text, options);
  try {
    logger.events?.append(record);
    journalBroken.delete(logger);
  } catch (error) {
    if (journalBroken.has(logger)) return;
    journalBroken.add(logger);
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    logger.warn(`cannot keep the ${record.type} record (${code}); the dashboard and the idle monitor miss it`);
  }
}

/** The records in the last `maxBytes` of `file`; a line that is not one (cut short, another version's) is skipped. */
function recordsIn(file: string, maxBytes: number): ToolRecord[] {
  return tailLines(file, maxBytes).flatMap((line) => {
    if (!line) return [];
    try {
      const parsed = ToolRecord.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    } catch {
      return [];
    }
  });
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    return true;
  }
}

/**
 * A tool's records, oldest first: the rotated file's, then the current one's. A tool that has written none yet (the
 * tools were upgraded since its last run) is read from its log as the versions before wrote it (records-legacy.ts),
 * so the dashboard shows the last backup before the first new one.
 */
export function readRecords(
  paths: Pick<Paths, "stateDir" | "logDir">,
  tool: LoggingTool,
  maxBytes = READ_BYTES,
): ToolRecord[] {
  const file = eventsFile(paths, tool);
  if (exists(file) || exists(`${file}.1`)) return [...recordsIn(`${file}.1`, maxBytes), ...recordsIn(file, maxBytes)];
  const log = toolLogPath(paths, tool);
  return legacyRecords([...readLogTail(`${log}.1`, maxBytes), ...readLogTail(log, maxBytes)]);
}

/**
 * A tool's logger with its records: its file in the log directory (LOG_FILES) and its events file in the state
 * directory, as toolLogger writes lines (stderr by hand, warnings under cron and systemd).
 */
export function recordingLogger(
  ctx: {
    paths: Pick<Paths, "logDir" | "stateDir">;
    stderr: Parameters<typeof toolLogger>[0]["stderr"];
    env: NodeJS.ProcessEnv;
    clock?: Clock | undefined;
  },
  tool: LoggingTool,
): Logger {
  return toolLogger({
    logDir: ctx.paths.logDir,
    file: LOG_FILES[tool],
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
    events: eventJournal(ctx.paths, tool),
  });
}
