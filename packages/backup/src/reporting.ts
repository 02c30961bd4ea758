import { exchange, POLICIES } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { type Gauge, writeGauges } from "@mcops/core/textfile";
import { USER_AGENT } from "@mcops/core/version";

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
  const target = pingTarget(url, kind);
  try {
    // Loaded when a ping is sent: ky's import builds a Request, which loads fetch's undici (~40 ms of every run's start).
    const { default: ky } = await import("ky");
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

/**
 * Where a ping of `kind` goes: the address itself on success, `/start` or `/fail` added to its path, before its query
 * (Healthchecks' `?create=1` of a slug address, `?rid=<run id>`: https://healthchecks.io/docs/http_api/), so that
 * `…/ping/abc?create=1` starts at `…/ping/abc/start?create=1`, not `…/ping/abc?create=1/start` (a success ping).
 */
export function pingTarget(url: string, kind: "start" | "success" | "fail"): string {
  if (kind === "success") return url;
  const target = new URL(url);
  target.pathname = `${target.pathname.replace(/\/+$/, "")}/${kind}`;
  return target.href;
}

export interface BackupMetrics {
  success: boolean;
  time: number;
  durationSeconds: number;
  addedBytes?: number | undefined;
  repositoryBytes?: number | undefined;
  autosaveOffSeconds?: number | undefined;
  /** From save-all flush to "Saved the game". */
  saveSeconds?: number | undefined;
}

export function writeTextfile(dir: string | undefined, metrics: BackupMetrics, serverId: string, logger: Logger): void {
  const seconds = (ms: number) => Math.round(ms / 1000);
  const gauges: Gauge[] = [
    {
      name: "mcops_backup_last_run_success",
      help: "1 when the last backup succeeded.",
      value: metrics.success ? 1 : 0,
    },
    {
      name: "mcops_backup_last_run_timestamp_seconds",
      help: "When the last backup ended.",
      value: seconds(metrics.time),
    },
    {
      name: "mcops_backup_duration_seconds",
      help: "How long the last backup took.",
      value: metrics.durationSeconds,
      digits: 3,
    },
  ];
  if (metrics.success) {
    gauges.push({
      name: "mcops_backup_last_success_timestamp_seconds",
      help: "When the last successful backup ended.",
      value: seconds(metrics.time),
    });
  }
  if (metrics.addedBytes !== undefined) {
    gauges.push({ name: "mcops_backup_added_bytes", help: "What the last backup added.", value: metrics.addedBytes });
  }
  if (metrics.repositoryBytes !== undefined) {
    gauges.push({
      name: "mcops_backup_repository_bytes",
      help: "The repository's size after the last backup.",
      value: metrics.repositoryBytes,
    });
  }
  if (metrics.autosaveOffSeconds !== undefined) {
    gauges.push({
      name: "mcops_backup_autosave_off_seconds",
      help: "How long autosave was off during the last backup.",
      value: metrics.autosaveOffSeconds,
      digits: 3,
    });
  }
  if (metrics.saveSeconds !== undefined) {
    gauges.push({
      name: "mcops_backup_save_seconds",
      help: "From save-all flush to the game's Saved the game in the last backup: the main thread's stall.",
      value: metrics.saveSeconds,
      digits: 3,
    });
  }
  // A failed run keeps the figures of the last successful one, so an alert on their age still works.
  writeGauges(gauges, {
    dir,
    file: "mcops_backup.prom",
    serverId,
    logger,
    keep: metrics.success ? [] : SUCCESS_FIGURES,
  });
}

/** The figures of the last successful backup. */
const SUCCESS_FIGURES = [
  "mcops_backup_last_success_timestamp_seconds",
  "mcops_backup_added_bytes",
  "mcops_backup_repository_bytes",
  "mcops_backup_autosave_off_seconds",
  "mcops_backup_save_seconds",
];
