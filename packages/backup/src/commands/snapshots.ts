import type { ToolContext } from "@mcops/core/tool";
import type { Snapshot } from "@mcops/world/restic";
import type { Settings } from "@mcops/world/settings";
import { repositoryJob } from "../job.ts";

/** `backup snapshots`: the repository's snapshots as a table, or restic's JSON (docs/system.md 4.5). */
export async function runSnapshots(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "runner" | "signal">,
  options: { json?: boolean | undefined },
  settings: Settings,
): Promise<number> {
  const { restic } = repositoryJob(ctx, settings);
  const snapshots = await restic.snapshots();
  ctx.stdout.write(
    options.json ? `${JSON.stringify(snapshots, null, 2)}\n` : formatSnapshots(snapshots, settings.WORLD_DIR),
  );
  return 0;
}

function formatSnapshots(snapshots: Snapshot[], worldDir: string): string {
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
