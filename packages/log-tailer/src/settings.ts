import {
  clientKeySchema,
  dockerSocketField,
  fail,
  field,
  fromBackupEnv,
  panelUrlSchema,
  pickFields,
  serverIdSchema,
  setting,
  textfileDirField,
  worldDirField,
  yesNoSchema,
} from "@mcops/core/config";
import { ConfigError } from "@mcops/core/errors";
import { durationMs } from "@mcops/core/format";
import type { ToolContext } from "@mcops/core/tool";
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

export interface TailerOptions {
  /** The log to follow; default <WORLD_DIR>/logs/latest.log from backup.env. */
  file?: string | undefined;
  /** Ignore the saved position and read the file from its beginning. */
  fromStart?: boolean | undefined;
}

/**
 * backup.env's fields (docs/system.md 2.1): WORLD_DIR only without --file; the panel only for CRASH_LOOP_STOP, which
 * cannot work without it (exit 78 before anything is followed).
 */
export function loadSettings(ctx: Pick<ToolContext, "paths" | "env">, options: TailerOptions) {
  const names = Object.keys(fields).filter((name) => name !== "WORLD_DIR" || !options.file) as (keyof typeof fields)[];
  const settings = fromBackupEnv(pickFields(fields, names), { paths: ctx.paths, env: ctx.env });
  const panel = [settings.CONTROL_URL, settings.CONTROL_KEY, settings.SERVER_ID];
  if (settings.CRASH_LOOP && settings.CRASH_LOOP_STOP && panel.some((value) => value === undefined)) {
    throw new ConfigError("CRASH_LOOP_STOP=yes needs the panel to stop the server", {
      where: settings.file,
      hint: "add CONTROL_URL, CONTROL_KEY and SERVER_ID (docs/system.md 2.1), or set CRASH_LOOP_STOP=no",
    });
  }
  return settings as typeof settings & { WORLD_DIR?: string | undefined };
}

/** What the service is handed: backup.env's fields, WORLD_DIR among them unless --file names the log. */
export type TailerSettings = ReturnType<typeof loadSettings>;
