import type { ToolContext } from "@mcops/core/tool";
import type { Settings } from "@mcops/world/settings";
import { repositoryJob, whileLocked } from "../job.ts";

/** `backup prune`: the forced clean of docs/system.md 4.5 and 8, after clearing stale locks. */
export async function runPrune(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  settings: Settings,
): Promise<number> {
  const { logger, restic } = repositoryJob(ctx, settings);
  return whileLocked(ctx, "backup prune", async () => {
    const r = settings.retention;
    logger.info(
      `forced clean: forget --keep-last ${r.keepLast} --keep-daily ${r.keepDaily} --keep-weekly ${r.keepWeekly} --prune`,
    );
    await restic.unlock();
    ctx.stdout.write(await restic.forget(r, settings.tags, true));
    logger.info("forced clean done");
    return 0;
  });
}
