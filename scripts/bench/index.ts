import { benchBackup } from "./backup.ts";
import { benchDiscordControl } from "./discord-control.ts";
import { benchDrill } from "./drill.ts";
import { benchIdleMonitor } from "./idle-monitor.ts";
import { benchLogTailer, benchLogTailerHole } from "./log-tailer.ts";
import { benchRestoreArea } from "./restore-area.ts";
import { benchWebhook } from "./webhook.ts";

/**
 * `npm run bench`: every benchmark of the toolkit, each printed as ratios against a baseline run in the same process.
 * Later tools add theirs here. `npm run bench -- webhook` runs one.
 */
const benches: Record<string, () => void | Promise<void>> = {
  webhook: () => benchWebhook(),
  backup: () => benchBackup(),
  drill: () => benchDrill(),
  "restore-area": () => benchRestoreArea(),
  "log-tailer": () => benchLogTailer(),
  "log-tailer-hole": () => benchLogTailerHole(),
  "idle-monitor": () => benchIdleMonitor(),
  "discord-control": () => benchDiscordControl(),
};

const wanted = process.argv.slice(2);
for (const [name, bench] of Object.entries(benches)) {
  if (wanted.length && !wanted.includes(name)) continue;
  await bench();
  console.log("");
}
