import { CATEGORIES, type Category } from "@mcops/core/categories";
import { isoSeconds } from "@mcops/core/clock";
import { redactWebhookUrl } from "@mcops/core/config";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { oneLine } from "@mcops/core/log";
import type { BackupRun } from "@mcops/core/records";
import type { NotificationEntry } from "./notifications.ts";
import type { CurrentSettings } from "./settings-store.ts";
import type { ServerStatus } from "./status.ts";

/**
 * The one page, drawn on the server: plain HTML forms, one stylesheet, no script at all (the Content-Security-Policy
 * forbids every script). Everything that comes from files, logs, the panel or the game is escaped.
 */
const CATEGORY_LABELS: Record<Category, [label: string, detail: string]> = {
  join: ["Player joined", "a player joins the game"],
  leave: ["Player left", "a player leaves the game"],
  death: ["Player died", "death messages from the game"],
  start: ["Server started", "the game is ready (Done …! For help)"],
  stop: ["Server stopped", "the game shuts down"],
  crash: ["Crashes and errors", "a crash, or errors of the server's main thread"],
  backup: ["Backups", "started, completed, failed"],
  idle: ["Idle monitor", "idle backup triggered, idle stop"],
  restart: ["Scheduled restarts", "warning, restart, result"],
  health: ["Health alerts", "a crash loop, a filling disk, lag, memory"],
};

export interface Flash {
  kind: "ok" | "error";
  text: string;
}

interface PageModel {
  user: string;
  csrf: string;
  settings: CurrentSettings;
  status: ServerStatus;
  flash: Flash | undefined;
  now: number;
  version: string;
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/** `2026-11-21 06:00 UTC` */
function when(ms: number): string {
  return `${isoSeconds(ms).slice(0, 16).replace("T", " ")} UTC`;
}

function ago(ms: number, now: number): string {
  const d = now - ms;
  return d < 60_000 ? "just now" : `${formatDuration(d).replace(/ \d+ s$/, "")} ago`;
}

function time(ms: number, now: number): string {
  return `<time datetime="${esc(isoSeconds(ms))}" title="${esc(when(ms))}">${esc(ago(ms, now))}</time>`;
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
${body}
</body>
</html>
`;
}

/** A short page for errors and refusals (401, 403, 404, ...). */
export function messagePage(title: string, text: string): string {
  return layout(title, `<main class="narrow"><h1>${esc(title)}</h1><p>${esc(text)}</p></main>`);
}

function flashBox(flash: Flash | undefined): string {
  if (!flash) return "";
  const role = flash.kind === "error" ? "alert" : "status";
  return `<p class="flash ${flash.kind}" role="${role}">${esc(flash.text)}</p>`;
}

function settingsForm(model: PageModel): string {
  const s = model.settings;
  const current = s.webhookUrl
    ? `Now: <code>${esc(redactWebhookUrl(s.webhookUrl))}</code> <span class="muted">(from ${esc(s.source)})</span>. Leave the field empty to keep it.`
    : "No address is set: notifications are off until one is saved here or in webhook.env.";
  const boxes = CATEGORIES.map((c) => {
    const [label, detail] = CATEGORY_LABELS[c];
    return `<label class="check"><input type="checkbox" name="events" value="${c}"${s.events[c] ? " checked" : ""}>
<span><b>${esc(label)}</b> <span class="muted">${esc(detail)}</span></span></label>`;
  }).join("\n");
  const forget = s.jsonHasUrl
    ? `<label class="check small"><input type="checkbox" name="forget" value="1"><span>Remove the address from webhook.json (the tools then use webhook.env)</span></label>`
    : "";
  return `<section class="card" aria-labelledby="settings-title">
<h2 id="settings-title">Notifications</h2>
${flashBox(model.flash)}
${s.problem ? `<p class="flash error" role="alert">The tools cannot read their webhook settings, so they post nothing: ${esc(s.problem)}</p>` : ""}
<form method="post" action="/settings" class="stack">
<input type="hidden" name="csrf" value="${esc(model.csrf)}">
<input type="hidden" name="version" value="${esc(s.version)}">
<label for="webhook_url" class="field">Discord webhook address</label>
<input id="webhook_url" name="webhook_url" type="text" inputmode="url" autocomplete="off" spellcheck="false" placeholder="https://discord.com/api/webhooks/…/…">
<p class="hint">${current}</p>
${forget}
<fieldset>
<legend>Post these events</legend>
${boxes}
</fieldset>
<div class="actions"><button type="submit">Save</button></div>
</form>
<form method="post" action="/test" class="test">
<input type="hidden" name="csrf" value="${esc(model.csrf)}">
<button type="submit" class="secondary">Send test message</button>
<span class="hint">to the saved address, whatever the categories</span>
</form>
</section>`;
}

function panelPart(status: ServerStatus): string {
  if ("error" in status.panel)
    return `<dd class="bad">unknown <span class="why">${esc(status.panel.error)}</span></dd>`;
  const r = status.panel.resources;
  const up = r.state === "running" && r.uptimeMs > 0 ? `, up ${formatDuration(r.uptimeMs)}` : "";
  const extra =
    r.state === "offline"
      ? ""
      : ` <span class="muted">· ${esc(formatBytes(r.memoryBytes))} memory · ${esc(r.cpuPercent.toFixed(0))}% CPU</span>`;
  const suspended = r.isSuspended ? " (suspended)" : "";
  return `<dd><span class="state ${esc(r.state)}">${esc(r.state)}</span>${esc(suspended + up)}${extra}</dd>`;
}

function playersPart(status: ServerStatus): string {
  const p = status.players;
  if ("error" in p) return `<dd class="bad">unknown <span class="why">${esc(p.error)}</span></dd>`;
  const names = p.ping.names.length ? ` <span class="muted">${esc(p.ping.names.join(", "))}</span>` : "";
  return `<dd>${esc(p.ping.online)} of ${esc(p.ping.max)} online${names}</dd>`;
}

/** A backup's figures from its record, put into words here: "took 42 s · added 12.3 MiB · ...". */
function backupFacts(run: BackupRun): string {
  return [
    run.tookMs !== undefined && `took ${formatDuration(run.tookMs)}`,
    run.addedBytes !== undefined && `added ${formatBytes(run.addedBytes)}`,
    run.repositoryBytes !== undefined && `repository ${formatBytes(run.repositoryBytes)}`,
    run.snapshot && `snapshot ${run.snapshot}`,
  ]
    .filter(Boolean)
    .join(" · ");
}

/** The idle monitor's latest figures: tick rate, memory over its limit, free space; stale ones say how old they are. */
function healthPart(status: ServerStatus, now: number): string {
  const health = status.health;
  if (!health) return `<dd class="muted">no figures yet: the idle monitor writes them at each decision</dd>`;
  const percent = (ratio: number) => `${Math.round(ratio * 100)} %`;
  const figures = [
    health.tps === undefined ? undefined : `${health.tps.toFixed(1)} TPS`,
    health.memory === undefined ? undefined : `memory ${percent(health.memory)} of its limit`,
    health.volumeFree === undefined ? undefined : `${percent(health.volumeFree)} free on the volume's disk`,
    health.cacheFree === undefined ? undefined : `${percent(health.cacheFree)} free on restic's cache's disk`,
  ].filter((figure): figure is string => figure !== undefined);
  return `<dd>${esc(figures.join(" · ") || "nothing measured")} <span class="muted">(${time(health.at, now)})</span></dd>`;
}

function backupPart(status: ServerStatus, now: number): string {
  const { current, last } = status.backup;
  const parts: string[] = [];
  if (current?.startedAt !== undefined) {
    parts.push(`<span class="state starting">running</span> since ${time(current.startedAt, now)}`);
  }
  if (last) {
    const at = last.endedAt ?? last.startedAt;
    const stamp = at === undefined ? "" : ` ${time(at, now)}`;
    if (last.result === "done") {
      parts.push(
        `<span class="state running">done</span>${stamp} <span class="muted">${esc(backupFacts(last))}</span>`,
      );
    } else if (last.result === "failed") {
      parts.push(
        `<span class="state offline">failed</span>${stamp}${last.tookMs === undefined ? "" : ` <span class="muted">after ${esc(formatDuration(last.tookMs))}</span>`} <span class="why">${esc(oneLine(last.reason ?? ""))}</span>`,
      );
    } else {
      parts.push(
        `<span class="state stopping">did not finish</span>${stamp} <span class="why">started, but no end in the log (killed?)</span>`,
      );
    }
  }
  return `<dd>${parts.length ? parts.join("<br>") : '<span class="muted">none in the backup log</span>'}</dd>`;
}

const SOURCE_NAMES: Record<NotificationEntry["source"], string> = {
  backup: "backup",
  "log-tailer": "game log",
  "idle-monitor": "idle monitor",
  "restart-with-warning": "restart",
  dashboard: "dashboard",
};

function notificationsPart(entries: NotificationEntry[], now: number): string {
  if (entries.length === 0) return `<p class="muted">None in the tools' logs yet.</p>`;
  const rows = entries.map((e) => {
    const result =
      e.outcome === "failed"
        ? `<span class="bad">not sent</span> <span class="why">${esc(e.detail ?? "")}</span>`
        : e.outcome === "off"
          ? `<span class="muted">off</span> <span class="why">the ${esc(e.category ?? "")} category is off, so it was not posted</span>`
          : "sent";
    return `<tr><td>${time(e.time, now)}</td><td>${esc(e.title)}</td><td class="muted">${esc(SOURCE_NAMES[e.source])}</td><td>${result}</td></tr>`;
  });
  return `<table>
<thead><tr><th>When</th><th>Message</th><th>From</th><th>Result</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
<p class="hint">From the tools' logs, where each message's outcome is written: sent; off (its category is off here, so it was not posted); or not sent, and why. While no webhook address is set nothing is posted, and nothing is listed.</p>`;
}

export function dashboardPage(model: PageModel): string {
  const { status, now } = model;
  const body = `<header class="top">
<h1>mcops <span class="muted">dashboard</span></h1>
<p class="who">signed in as <b>${esc(model.user)}</b></p>
</header>
<main class="grid">
${settingsForm(model)}
<section class="card" aria-labelledby="status-title">
<h2 id="status-title">Server</h2>
<dl class="facts">
<dt>State</dt>${panelPart(status)}
<dt>Players</dt>${playersPart(status)}
<dt>Last backup</dt>${backupPart(status, now)}
<dt>Health</dt>${healthPart(status, now)}
</dl>
<h2>Recent notifications</h2>
${notificationsPart(status.notifications, now)}
</section>
</main>
<footer class="muted">mcops ${esc(model.version)} · settings in <code>${esc(model.settings.file)}</code> · panel and game asked ${esc(ago(status.checkedAt, now))}</footer>`;
  return layout("mcops dashboard", body);
}
