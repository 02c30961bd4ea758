import { resolve } from "node:path";
import type { ToolContext } from "@mcops/core/tool";

/**
 * The operator's local `.env` (docs/system.md 2.3): what revive and hibernate read on the operator's computer, and
 * `discord-control register` too (the Discord application's id and bot token sit in the same file). Not for the
 * Worker, which has no files.
 */

/** Where the local `.env` is: `--config`, else MCOPS_ENV_FILE, else ./.env. */
export type LocalFiles = Pick<ToolContext, "env"> & { envFile?: string | undefined };

export function envFilePath(ctx: LocalFiles): string {
  return resolve(ctx.envFile ?? ctx.env.MCOPS_ENV_FILE ?? ".env");
}
