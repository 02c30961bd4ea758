import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "./clock.ts";
import { isErrno } from "./fs.ts";
import { type Logger, oneLine, toolLogger } from "./log.ts";
import { LOG_FILES, type LoggingTool, toolLogPath } from "./log-events.ts";
import { readLogTail, tailLines } from "./log-lines.ts";
import type { Paths } from "./paths.ts";
import { type EventJournal, recordLine, ToolRecord } from "./records.ts";
import { legacyRecords } from "./records-legacy.ts";
import { redact } from "./secrets.ts";

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

const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

/**
 * A tool's journal: appends a record, rotating the file first when it is full; throws when it cannot write. The file
 * is opened without following a link and without blocking, and written only when it is a regular file (a FIFO or a
 * device put in its place is refused, never written to or waited on); mode 0640 in a 0750 directory, like the logs.
 */
export function eventJournal(paths: Pick<Paths, "stateDir">, tool: LoggingTool): EventJournal {
  const file = eventsFile(paths, tool);
  return {
    append(record) {
      mkdirSync(join(file, ".."), { recursive: true, mode: 0o750 });
      rotateIfFull(file);
      const fd = openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o640);
      try {
        if (!fstatSync(fd).isFile()) throw Object.assign(new Error("not a regular file"), { code: "EFTYPE" });
        writeSync(fd, `${JSON.stringify(record)}\n`);
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** Past ROTATE_BYTES the file becomes `.1`; another writer that rotated it first (the file is gone) is no failure. */
function rotateIfFull(file: string): void {
  const stat = lstatSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size < ROTATE_BYTES) return;
  try {
    renameSync(file, `${file}.1`);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
}

/** The longest title a record keeps (Discord's own limit for a title) and the longest of its other texts. */
const TITLE_CHARS = 256;
const TEXT_CHARS = 2000;

/**
 * What a record keeps of a text: as its log line shows it (secrets redacted, line breaks and invisible characters
 * written visibly: oneLine), cut to a bound. A reason may quote restic's repository address and a title holds the
 * game's text; a reader (the dashboard, another process that never knew the secrets) shows the record as it is.
 */
function cleaned(record: ToolRecord): ToolRecord {
  const text = (value: string, max: number) => {
    const line = oneLine(redact(value));
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  };
  const copy = JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
  const walk = (value: Record<string, unknown>): void => {
    for (const [key, field] of Object.entries(value)) {
      if (typeof field === "string") value[key] = text(field, key === "title" ? TITLE_CHARS : TEXT_CHARS);
      else if (field && typeof field === "object") walk(field as Record<string, unknown>);
    }
  };
  walk(copy);
  return copy as ToolRecord;
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
  if (!logger.events) return;
  try {
    const kept = ToolRecord.safeParse(cleaned(record));
    // A record its readers would refuse is not written: they would take the tool for silent.
    if (!kept.success) throw Object.assign(new Error("not a valid record"), { code: "EINVAL" });
    logger.events.append(kept.data);
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

/**
 * A tool's records, oldest first: the rotated file's, then the current one's. What the tool's log says from before its
 * first record (the tools were upgraded since; until the events file is first rotated) comes first, read as the
 * versions before wrote it (records-legacy.ts): an upgraded dashboard shows the last backup before the first new one.
 */
export function readRecords(
  paths: Pick<Paths, "stateDir" | "logDir">,
  tool: LoggingTool,
  maxBytes = READ_BYTES,
): ToolRecord[] {
  const file = eventsFile(paths, tool);
  const rotated = recordsIn(`${file}.1`, maxBytes);
  const records = [...rotated, ...recordsIn(file, maxBytes)];
  if (rotated.length > 0) return records;
  const log = toolLogPath(paths, tool);
  const older = legacyRecords([...readLogTail(`${log}.1`, maxBytes), ...readLogTail(log, maxBytes)]);
  const first = records[0]?.at;
  if (first === undefined) return older;
  // A line of the same second as the first record may be that record's own line.
  const before = Math.floor(first / 1000) * 1000;
  return [...older.filter((record) => record.at < before), ...records];
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
