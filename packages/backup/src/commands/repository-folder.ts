import { ConfigError } from "@mcops/core/errors";
import { parseJsonOrUndefined } from "@mcops/core/format";
import type { ToolContext } from "@mcops/core/tool";
import * as z from "zod/mini";
import { type RcloneRemote, repositoryFolder, tooWide, unitSafe } from "../repository-folder.ts";

const dumpSchema = z.record(z.string(), z.object({ type: z.optional(z.string()), remote: z.optional(z.string()) }));

/**
 * `backup repository-folder`: prints the folder on this machine's disk that RESTIC_REPOSITORY writes to, and nothing
 * for a repository elsewhere. install.sh allows the idle monitor's unit to write there (a drop-in with ReadWritePaths).
 * Its settings are RESTIC_REPOSITORY alone (and the file it came from): nothing else of backup.env is read or checked.
 */
export async function runRepositoryFolder(
  ctx: Pick<ToolContext, "stdout" | "runner">,
  settings: { RESTIC_REPOSITORY: string; file: string },
): Promise<number> {
  const repository = settings.RESTIC_REPOSITORY;
  let remotes: Record<string, RcloneRemote> = {};
  if (repository.startsWith("rclone:")) {
    const dump = await ctx.runner.run("rclone", ["config", "dump"], {});
    const parsed = dump.code === 0 ? dumpSchema.safeParse(parseJsonOrUndefined(dump.stdout)) : undefined;
    if (parsed?.success) remotes = parsed.data;
  }
  const folder = repositoryFolder(repository, remotes);
  if (folder === undefined) return 0;
  if (!unitSafe(folder)) {
    throw new ConfigError(`the repository's folder ${JSON.stringify(folder)} cannot be written into a unit file`, {
      where: settings.file,
      hint: "move the repository to a folder whose name has no spaces, quotes or %, or add ReadWritePaths= to the idle monitor's unit by hand",
    });
  }
  const wide = tooWide(folder);
  if (wide) {
    throw new ConfigError(`the repository's folder ${folder} is not allowed to the idle monitor: ${wide}`, {
      where: settings.file,
      hint: "give the repository a folder of its own, e.g. /srv/restic or /mnt/backup/restic",
    });
  }
  ctx.stdout.write(`${folder}\n`);
  return 0;
}
