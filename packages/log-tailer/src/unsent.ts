import { closeSync, constants, fstatSync, openSync, readSync, renameSync, rmSync } from "node:fs";
import { CATEGORIES } from "@mcops/core/categories";
import { describeIssue } from "@mcops/core/config";
import { formatBytes, formatSpan } from "@mcops/core/format";
import { isErrno } from "@mcops/core/fs";
import { EMBED_LIMITS, type Notice, truncate } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import { redact } from "@mcops/core/secrets";
import * as z from "zod/mini";
import { saveJson, stateFile } from "./state-files.ts";

/**
 * The messages a stop left unsent (Discord slow or unreachable past the stop's time for its posts), kept in the state
 * dir (`log-tailer-<hash>-unsent.json`) and posted first at the next start. The log position is saved past their lines
 * all the same: the lines are never read again, so this file is the only place those messages still exist.
 */

/** At most this many are kept; the oldest beyond them are dropped (each said in the log, and how many). */
export const UNSENT_MAX = 50;

/**
 * The most the file can hold, checked before it is read: UNSENT_MAX notices cut to Discord's embed limits, JSON
 * writing a character in at most 6 bytes (`\u001f`), and their other fields (colour, category, time) in the rest.
 */
const UNSENT_MAX_BYTES = UNSENT_MAX * ((EMBED_LIMITS.title + EMBED_LIMITS.description) * 6 + 512);

/** One saved message: a Notice as the notifier takes it, with its time. */
const savedNoticeSchema = z.object({
  title: z.string().check(z.maxLength(EMBED_LIMITS.title)),
  description: z.optional(z.string().check(z.maxLength(EMBED_LIMITS.description))),
  colour: z.optional(z.int().check(z.minimum(0), z.maximum(0xffffff))),
  category: z.optional(z.enum(CATEGORIES)),
  fromGame: z.optional(z.boolean()),
  // Epoch ms, within what a Date can show: the embed's timestamp is made from it.
  time: z.int().check(z.minimum(0), z.maximum(8.64e15)),
});
type SavedNotice = z.infer<typeof savedNoticeSchema>;

const unsentSchema = z.object({ notices: z.array(savedNoticeSchema).check(z.maxLength(UNSENT_MAX)) });

/** A message the announcer had not posted when the stop's time ran out. */
export interface Pending {
  /** Undefined while it is still being made (a crash loop's, while the panel stops the server). */
  notice: Notice | undefined;
  /** Epoch ms when it was queued: its time in the channel when the notice has none. */
  queuedAt: number;
}

export interface UnsentStore {
  readonly file: string;
  /** What the last stop left, oldest first; none without a file. A broken file is one WARN line and set aside. */
  read(): Notice[];
  /** Records what a stop left: one WARN line per message, the newest UNSENT_MAX saved for the next start. */
  save(left: readonly Pending[], budgetMs: number): void;
  /** The saved messages have been posted (or given up by the notifier, which logged why): the file goes. */
  remove(): void;
}

export function unsentStore(paths: Paths, logFile: string, logger: Logger): UnsentStore {
  const file = stateFile(paths, logFile, "unsent");

  /** A file that is not ours to post from: one WARN line, moved out of the way so the next stop can write its own. */
  function setAside(why: string): Notice[] {
    const aside = `${file}.broken`;
    let outcome: string;
    try {
      renameSync(file, aside);
      outcome = `set aside as ${aside}`;
    } catch (error) {
      outcome = `left where it is (it cannot be moved: ${(error as NodeJS.ErrnoException).code})`;
    }
    logger.warn(`${file} is not a list of unsent messages (${why}): ${outcome}; nothing in it is posted`);
    return [];
  }

  return {
    file,
    read() {
      let read: { text: string } | { broken: string };
      try {
        read = readBounded(file);
      } catch (error) {
        if (isErrno(error, "ENOENT")) return [];
        return setAside(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      if ("broken" in read) return setAside(read.broken);
      let value: unknown;
      try {
        value = JSON.parse(read.text);
      } catch {
        return setAside("not JSON");
      }
      const result = unsentSchema.safeParse(value);
      if (!result.success) {
        const issue = result.error.issues[0] as z.core.$ZodIssue;
        return setAside(`${issue.path.join(".") || "the file"}: ${describeIssue(issue)}`);
      }
      return result.data.notices;
    },
    save(left, budgetMs) {
      const unmade = left.filter((pending) => !pending.notice).length;
      if (unmade > 0) {
        logger.warn(
          `${unmade} message(s) still being made when the service stopped (a crash loop's, while the panel stops the server) not sent`,
        );
      }
      const made = left.flatMap((pending) => (pending.notice ? [saved(pending.notice, pending.queuedAt)] : []));
      if (made.length === 0) return;
      const kept = made.slice(-UNSENT_MAX);
      const dropped = made.slice(0, made.length - kept.length);
      const written = saveJson(file, { notices: kept }, logger);
      // WARN, not the notifier's ERROR: the message is not lost (the next start posts it), and the dashboard's
      // "recent notifications" counts only ERROR lines as failed; the next start's line says what became of it.
      const reason = `the service stopped before Discord took it (a stop waits ${formatSpan(budgetMs)} for its posts)`;
      for (const notice of dropped) {
        logger.warn(notSent(notice.title, reason, `more than ${UNSENT_MAX} were left: the oldest are dropped`));
      }
      const next = written ? `saved in ${file}: it is posted at the next start` : "it could not be saved (said above)";
      for (const notice of kept) logger.warn(notSent(notice.title, reason, next));
      if (dropped.length > 0) {
        logger.warn(
          `${dropped.length} of the ${made.length} messages the stop left are dropped: at most ${UNSENT_MAX} are kept`,
        );
      }
    },
    remove() {
      try {
        rmSync(file, { force: true });
      } catch (error) {
        logger.warn(
          `cannot remove ${file} (${(error as NodeJS.ErrnoException).code}): its messages are posted again at the next start`,
        );
      }
    },
  };
}

/**
 * A notice as saved: redacted (no secret goes into the file, and none is cut in half below) and cut as the notifier
 * cuts an embed, so each saved message is bounded; its time is kept, so the channel shows when it happened.
 */
function saved(notice: Notice, queuedAt: number): SavedNotice {
  return {
    title: truncate(redact(notice.title), EMBED_LIMITS.title),
    ...(notice.description ? { description: truncate(redact(notice.description), EMBED_LIMITS.description) } : {}),
    ...(notice.colour === undefined ? {} : { colour: notice.colour }),
    ...(notice.category ? { category: notice.category } : {}),
    ...(notice.fromGame ? { fromGame: true } : {}),
    time: Math.round(notice.time ?? queuedAt),
  };
}

/**
 * The file's text, never more than UNSENT_MAX_BYTES: opened non-blocking and without following a link, so that a FIFO
 * or a link where the file should be is refused, not waited on or followed.
 */
function readBounded(file: string): { text: string } | { broken: string } {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { broken: "not a regular file" };
    if (stat.size > UNSENT_MAX_BYTES) {
      return { broken: `${formatBytes(stat.size)}, more than ${UNSENT_MAX} messages take` };
    }
    const buffer = Buffer.alloc(stat.size);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, length);
      if (read === 0) break;
      length += read;
    }
    return { text: buffer.subarray(0, length).toString("utf8") };
  } finally {
    closeSync(fd);
  }
}

/**
 * The notifier's not-sent line, as a WARN: no record (the message is not lost, and the dashboard's "recent
 * notifications" shows what became of it at the next start).
 */
function notSent(title: string, reason: string, hint: string): string {
  return `notification "${title}" not sent: ${reason} — ${hint}`;
}
