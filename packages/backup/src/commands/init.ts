import { JobError } from "@mcops/core/errors";
import type { ToolContext } from "@mcops/core/tool";
import type { Settings } from "@mcops/world/settings";
import { repositoryJob, whileLocked } from "../job.ts";

/** `backup init`: creates the repository, and refuses to touch one that exists. */
export async function runInit(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  settings: Settings,
): Promise<number> {
  const { logger, restic } = repositoryJob(ctx, settings);
  return whileLocked(ctx, "backup init", async () => {
    if (await restic.exists()) {
      throw new JobError("the repository already exists; it is not initialised again", {
        where: settings.RESTIC_REPOSITORY,
        hint: "nothing to do: backups go into it as they are",
      });
    }
    await restic.init();
    logger.info(`repository initialised at ${settings.RESTIC_REPOSITORY}`);
    ctx.stdout.write(
      `Initialised the restic repository at ${settings.RESTIC_REPOSITORY}.\nKeep a copy of ${settings.RESTIC_PASSWORD_FILE} somewhere safe: without it the backups cannot be read.\n`,
    );
    return 0;
  });
}
