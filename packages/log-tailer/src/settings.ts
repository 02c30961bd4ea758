import {
  clientKeySchema,
  dockerSocketField,
  fail,
  field,
  panelUrlSchema,
  serverIdSchema,
  setting,
  textfileDirField,
  worldDirField,
  yesNoSchema,
} from "@mcops/core/config";
import { durationMs } from "@mcops/core/format";
import * as z from "zod/mini";

/** A crash loop: `count` crashes within `windowMs`. */
export interface CrashLoopRule {
  count: number;
  windowMs: number;
}

/** `3/10m`: that many crashes within that long make a crash loop (2 to 100 crashes); `off`: none is watched for. */
export const crashLoopSchema = z.pipe(
  field((value, ctx) => {
    if (/^(off|no|0)$/i.test(value)) return;
    const match = /^(\d{1,3})\/(.+)$/.exec(value);
    const count = Number(match?.[1]);
    if (!match || !(count >= 2 && count <= 100) || !durationMs(match[2] as string)) {
      fail(ctx, "is not a crash count and a time", "write it like 3/10m (three crashes within ten minutes), or off");
    }
  }),
  z.transform((value: string): CrashLoopRule | undefined => {
    const match = /^(\d{1,3})\/(.+)$/.exec(value);
    return match ? { count: Number(match[1]), windowMs: durationMs(match[2] as string) as number } : undefined;
  }),
);

/**
 * What the tailer reads of backup.env (docs/system.md 2.1): the volume whose logs/latest.log it follows; the crash-loop
 * rule; and the panel, needed only to stop a server in a crash loop (CRASH_LOOP_STOP=yes).
 */
export const fields = {
  WORLD_DIR: worldDirField,
  CRASH_LOOP: setting(crashLoopSchema, { default: "3/10m" }),
  CRASH_LOOP_STOP: setting(yesNoSchema, { default: "no" }),
  CONTROL_URL: setting(z.optional(panelUrlSchema)),
  CONTROL_KEY: setting(z.optional(clientKeySchema), { secret: true }),
  SERVER_ID: setting(z.optional(serverIdSchema)),
  /** Docker's event stream tells an out-of-memory kill of the server's container, which the game cannot log. */
  DOCKER_SOCKET: dockerSocketField,
  /** node_exporter's textfile directory, for mcops_log_tailer.prom (the crashes counted). */
  BACKUP_TEXTFILE_DIR: textfileDirField,
};
