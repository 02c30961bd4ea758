import { durationSchema, fromBackupEnv, serverIdSchema, setting, textfileDirField } from "@mcops/core/config";
import type { ToolContext } from "@mcops/core/tool";
import * as z from "zod/mini";

/** What `certs check` reads from backup.env (or the environment), each field declared once. */
export const fields = {
  /** How long before a certificate expires `certs check` fails (exit 1) and says so. */
  CERT_WARN: setting(durationSchema, { default: "14d" }),
  BACKUP_TEXTFILE_DIR: textfileDirField,
  SERVER_ID: setting(z.optional(serverIdSchema)),
};

/** `certs check`'s settings: the fields above from backup.env and the environment. */
export function checkSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(fields, { paths: ctx.paths, env: ctx.env });
}

export type CheckSettings = ReturnType<typeof checkSettings>;
