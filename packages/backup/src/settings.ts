import { fromBackupEnv, pickFields } from "@mcops/core/config";
import type { ToolContext } from "@mcops/core/tool";
import { fields, loadSettings } from "@mcops/world/settings";

/**
 * backup's settings. Its fields (backup.env, docs/system.md 2.1: each with its default, flag and help) are declared
 * once in @mcops/world/settings, beside the world snapshot they configure, because jar-download's pre-upgrade snapshot
 * reads the same file whole. Here are the loaders of the commands that need nothing else; a backup's loader
 * (commands/run.ts loadOrReport: it also reports a broken file), restore's and the drill's (each checks its arguments
 * first) are with their commands.
 */

/** The repository commands' settings: backup.env and the environment, no flag. */
export function repositorySettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return loadSettings(ctx);
}

/** repository-folder's: RESTIC_REPOSITORY alone (install.sh runs it before the rest of backup.env is filled in). */
export function repositoryFolderSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(pickFields(fields, ["RESTIC_REPOSITORY"]), { paths: ctx.paths, env: ctx.env });
}
