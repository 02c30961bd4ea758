import { z } from "zod";

/**
 * restic's JSON outputs, each read through one schema. Read off the real binaries of Debian 11 (0.11.0), 12 (0.14.0)
 * and 13 (0.18.0); where a version differs, the schema says which and how. Fields a version adds and the tools do not
 * read are let through unread (zod drops unknown keys).
 */

/** A snapshot id, short (8 hex characters) or whole (64). */
const SnapshotIdSchema = z.string().regex(/^[0-9a-f]{8,64}$/);

/**
 * `backup --json`'s last message. `snapshot_id` is the short id up to 0.17 and the whole 64-character id from 0.18.
 * 0.17 adds `data_added_packed` and `backup_start`/`backup_end` (unread).
 */
export const BackupSummarySchema = z.object({
  message_type: z.literal("summary"),
  snapshot_id: SnapshotIdSchema,
  data_added: z.number().nonnegative().default(0),
});

/** `backup --json`'s progress message (status); every field can be missing at the start. */
export const BackupStatusSchema = z.object({
  message_type: z.literal("status"),
  percent_done: z.number().default(0),
  bytes_done: z.number().default(0),
  total_bytes: z.number().default(0),
  seconds_remaining: z.number().optional(),
});

/**
 * `backup --json`'s message for a file it could not read: `item` since 0.12; 0.11 names it only in `error.Path`.
 * `error.Err` is the errno where the reason is one. restic 0.14 writes these to stderr, 0.16 on to stdout.
 */
export const BackupErrorSchema = z.object({
  message_type: z.literal("error"),
  item: z.string().optional(),
  error: z
    .object({ Path: z.string().optional(), Err: z.number().optional(), message: z.string().optional() })
    .partial()
    .nullish(),
});

/**
 * One entry of `snapshots --json`. `tags` is absent when a snapshot has none. 0.17 adds `program_version` (unread) and
 * `summary`, the backup's own figures: `data_added` (what the backup added, where no record of it is kept) and
 * `total_bytes_processed` (every file's size: what a restore of it writes) are read.
 * `short_id` is the id's first 8 characters in every version.
 */
export const SnapshotSchema = z.object({
  id: SnapshotIdSchema,
  short_id: SnapshotIdSchema,
  time: z.string(),
  hostname: z.string(),
  tags: z
    .array(z.string())
    .nullish()
    .transform((tags) => tags ?? undefined),
  paths: z.array(z.string()),
  summary: z
    .object({
      data_added: z.number().nonnegative().optional(),
      total_bytes_processed: z.number().nonnegative().optional(),
    })
    .optional(),
});
export const SnapshotsSchema = z.array(SnapshotSchema).nullable();

/**
 * `stats --json`: `total_size` in every mode and version; 0.14 adds `snapshots_count`, 0.17 the compression figures
 * of raw-data (unread).
 */
export const StatsSchema = z.object({ total_size: z.number().nonnegative() });

/**
 * One line of `ls --json`: the snapshot first, then its nodes. The kind is `struct_type` in every version; 0.17 also
 * says it as `message_type`. `size` only for files.
 */
export const LsLineSchema = z.discriminatedUnion("struct_type", [
  z.object({ struct_type: z.literal("snapshot") }),
  z.object({
    struct_type: z.literal("node"),
    path: z.string(),
    type: z.string(),
    size: z.number().nonnegative().optional(),
  }),
]);

/**
 * `restore --json` from 0.17 (older versions print text only) says an entry it could not write as an `error` message,
 * on stderr; its other messages (`status`, `summary`, `exit_error`; `verbose_status` with `-vv`, which the tools do not
 * ask for: restic 0.17 and 0.18 say every file only in their last pass, once all are written) are passed over.
 */
export const RestoreErrorSchema = z.object({
  message_type: z.literal("error"),
  item: z.string().default("?"),
  error: z.object({ message: z.string() }).partial().nullish(),
});

/** A fatal error of a command run with --json (0.17.1 on), on stderr beside its exit code. */
export const ExitErrorSchema = z.object({ message_type: z.literal("exit_error"), message: z.string() });

/** What every JSON message of restic's has: its kind. */
export const MessageTypeSchema = z.object({ message_type: z.string() });

/** A line of restic's as JSON, or undefined when it is not (restic's text lines, rclone's notices). */
export function jsonLine(line: string): unknown {
  if (!line.startsWith("{")) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** A line of restic's JSON read through `schema`, or undefined when it is not one (not JSON, or another message). */
export function readJsonLine<T>(schema: z.ZodType<T>, line: string): T | undefined {
  const parsed = schema.safeParse(jsonLine(line));
  return parsed.success ? parsed.data : undefined;
}
