import { durationSchema, serverIdSchema, setting, textfileDirField } from "@mcops/core/config";
import * as z from "zod/mini";

/** What `certs check` reads from backup.env (or the environment), each field declared once. */
export const fields = {
  /** How long before a certificate expires `certs check` fails (exit 1) and says so. */
  CERT_WARN: setting(durationSchema, { default: "14d" }),
  BACKUP_TEXTFILE_DIR: textfileDirField,
  SERVER_ID: setting(z.optional(serverIdSchema)),
};
