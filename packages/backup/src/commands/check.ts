import type { ToolContext } from "@mcops/core/tool";
import type { Settings } from "@mcops/world/settings";
import { repositoryJob, whileLocked } from "../job.ts";

/** `backup check`: restic's integrity check of the repository, maybe reading part of the data (docs/system.md 4.5). */
export async function runCheck(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  options: { readDataSubset?: string | undefined },
  settings: Settings,
): Promise<number> {
  const { logger, restic } = repositoryJob(ctx, settings);
  return whileLocked(ctx, "backup check", async () => {
    logger.info(
      `checking the repository${options.readDataSubset ? ` (reading ${options.readDataSubset} of the data)` : ""}`,
    );
    // restic 0.11 reads a percentage as one part in turn: a different part each day.
    const out = await restic.check(options.readDataSubset, Math.floor(ctx.clock.now() / 86_400_000));
    ctx.stdout.write(out);
    logger.info("repository check passed: no errors were found");
    return 0;
  });
}
