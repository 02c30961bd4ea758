import { JobError } from "@mcops/core/errors";
import { resticFor, takeBackupLock } from "./backup.ts";
import type { Snapshot } from "./restic.ts";
import { type BackupContext, backupLogger, loadSettings } from "./settings.ts";

/** `backup snapshots`, `backup check`, `backup prune`, `backup init`: the repository operations of docs/system.md 4.5. */

function setup(ctx: BackupContext) {
  const settings = loadSettings(ctx);
  const logger = backupLogger(ctx);
  return { settings, logger, restic: resticFor(ctx, settings, logger) };
}

async function locked<T>(ctx: BackupContext, tool: string, fn: () => Promise<T>): Promise<T> {
  const lock = await takeBackupLock(ctx, tool);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

export function formatSnapshots(snapshots: Snapshot[], worldDir: string): string {
  if (snapshots.length === 0) return "No snapshots yet.\n";
  const rows = snapshots.map((s) => [
    s.short_id,
    s.time.replace(/T(\d\d:\d\d:\d\d).*$/, " $1"),
    s.hostname,
    (s.tags ?? []).join(","),
    s.paths.map((p) => (p.startsWith(`${worldDir}/`) ? p.slice(worldDir.length + 1) : p)).join(" "),
  ]);
  const header = ["ID", "Time (UTC)", "Host", "Tags", "Paths"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    `${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] as number))).join("  ")}\n`;
  return (
    line(header) +
    line(widths.map((w) => "-".repeat(w))) +
    rows.map(line).join("") +
    `${snapshots.length} snapshot${snapshots.length === 1 ? "" : "s"}\n`
  );
}

export async function runSnapshots(ctx: BackupContext, options: { json?: boolean | undefined }): Promise<number> {
  const { settings, restic } = setup(ctx);
  const snapshots = await restic.snapshots();
  ctx.stdout.write(
    options.json ? `${JSON.stringify(snapshots, null, 2)}\n` : formatSnapshots(snapshots, settings.WORLD_DIR),
  );
  return 0;
}

export async function runCheck(ctx: BackupContext, options: { readDataSubset?: string | undefined }): Promise<number> {
  const { logger, restic } = setup(ctx);
  return locked(ctx, "backup check", async () => {
    logger.info(
      `checking the repository${options.readDataSubset ? ` (reading ${options.readDataSubset} of the data)` : ""}`,
    );
    const out = await restic.check(options.readDataSubset);
    ctx.stdout.write(out);
    logger.info("repository check passed: no errors were found");
    return 0;
  });
}

export async function runPrune(ctx: BackupContext): Promise<number> {
  const { settings, logger, restic } = setup(ctx);
  return locked(ctx, "backup prune", async () => {
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

export async function runInit(ctx: BackupContext): Promise<number> {
  const { settings, logger, restic } = setup(ctx);
  return locked(ctx, "backup init", async () => {
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
