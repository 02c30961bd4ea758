import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@mcops/core/fs";
import { exchange, POLICIES } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { USER_AGENT } from "@mcops/core/version";
import ky from "ky";

/**
 * The optional extras of a backup: a dead-man's-switch ping (Healthchecks style: `<url>/start`, `<url>` on success,
 * `<url>/fail`), and a Prometheus textfile for node_exporter's textfile collector. Neither may fail the backup.
 */
export async function ping(
  url: string | undefined,
  kind: "start" | "success" | "fail",
  logger: Logger,
  body = "",
): Promise<void> {
  if (!url) return;
  const target = kind === "success" ? url : `${url.replace(/\/+$/, "")}/${kind}`;
  try {
    const { response } = await exchange(POLICIES.healthcheck, {
      where: new URL(target).host,
      // A ping repeated says the same thing twice: harmless.
      idempotent: true,
      send: (signal) =>
        ky.post(target, {
          body: body.slice(-10_000),
          timeout: false,
          retry: 0,
          throwHttpErrors: false,
          signal,
          headers: { "user-agent": USER_AGENT },
        }),
    });
    await response.body?.cancel().catch(() => undefined);
    if (!response.ok) logger.warn(`dead-man's-switch ping ${kind} failed (answered ${response.status})`);
  } catch (error) {
    logger.warn(`dead-man's-switch ping ${kind} failed (${(error as Error).message})`);
  }
}

export interface BackupMetrics {
  success: boolean;
  time: number;
  durationSeconds: number;
  addedBytes?: number | undefined;
  repositoryBytes?: number | undefined;
  autosaveOffSeconds?: number | undefined;
}

export function writeTextfile(dir: string | undefined, metrics: BackupMetrics, serverId: string, logger: Logger): void {
  if (!dir) return;
  const labels = `{server="${serverId}"}`;
  const lines = [
    "# HELP mcops_backup_last_run_success 1 when the last backup succeeded.",
    "# TYPE mcops_backup_last_run_success gauge",
    `mcops_backup_last_run_success${labels} ${metrics.success ? 1 : 0}`,
    "# HELP mcops_backup_last_run_timestamp_seconds When the last backup ended.",
    "# TYPE mcops_backup_last_run_timestamp_seconds gauge",
    `mcops_backup_last_run_timestamp_seconds${labels} ${Math.round(metrics.time / 1000)}`,
    "# HELP mcops_backup_duration_seconds How long the last backup took.",
    "# TYPE mcops_backup_duration_seconds gauge",
    `mcops_backup_duration_seconds${labels} ${metrics.durationSeconds.toFixed(3)}`,
  ];
  if (metrics.success) {
    lines.push(
      "# HELP mcops_backup_last_success_timestamp_seconds When the last successful backup ended.",
      "# TYPE mcops_backup_last_success_timestamp_seconds gauge",
      `mcops_backup_last_success_timestamp_seconds${labels} ${Math.round(metrics.time / 1000)}`,
    );
  }
  if (metrics.addedBytes !== undefined) {
    lines.push("# TYPE mcops_backup_added_bytes gauge", `mcops_backup_added_bytes${labels} ${metrics.addedBytes}`);
  }
  if (metrics.repositoryBytes !== undefined) {
    lines.push(
      "# TYPE mcops_backup_repository_bytes gauge",
      `mcops_backup_repository_bytes${labels} ${metrics.repositoryBytes}`,
    );
  }
  if (metrics.autosaveOffSeconds !== undefined) {
    lines.push(
      "# TYPE mcops_backup_autosave_off_seconds gauge",
      `mcops_backup_autosave_off_seconds${labels} ${metrics.autosaveOffSeconds.toFixed(3)}`,
    );
  }
  const file = join(dir, "mcops_backup.prom");
  if (!metrics.success) lines.push(...carriedOver(file, lines));
  try {
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(file, `${lines.join("\n")}\n`, 0o644);
  } catch (error) {
    logger.warn(`could not write the Prometheus textfile in ${dir} (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** The figures of the last successful backup: a failed run keeps them, so an alert on their age still works. */
const SUCCESS_FIGURES = [
  "mcops_backup_last_success_timestamp_seconds",
  "mcops_backup_added_bytes",
  "mcops_backup_repository_bytes",
  "mcops_backup_autosave_off_seconds",
];

/** The success figures (with their HELP and TYPE lines) of the previous file that this run did not write itself. */
function carriedOver(file: string, lines: readonly string[]): string[] {
  const name = (line: string) => /^(?:# (?:HELP|TYPE) )?(\w+)/.exec(line)?.[1];
  const written = new Set(lines.map(name));
  const missing = SUCCESS_FIGURES.filter((figure) => !written.has(figure));
  if (!missing.length) return [];
  let previous: string;
  try {
    previous = readFileSync(file, "utf8");
  } catch {
    return []; // no earlier run, or unreadable: nothing to keep
  }
  return previous.split("\n").filter((line) => {
    const figure = name(line);
    return figure !== undefined && missing.includes(figure);
  });
}
