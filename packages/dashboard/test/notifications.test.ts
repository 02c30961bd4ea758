import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recentNotifications } from "../src/notifications.ts";

let dir: TempDir;
const write = (name: string, text: string) =>
  writeFileSync(join(dir.path, name), `${text.trim().replace(/^\s+/gm, "")}\n`);
beforeEach(() => {
  dir = tempDir("mcops-recent-");
  mkdirSync(dir.path, { recursive: true });
});
afterEach(() => dir.cleanup());

describe("recent notifications, from the tools' logs", () => {
  it("are the notifier's outcome lines of every tool's log, newest first", () => {
    write(
      "mc-backup.log",
      `2026-11-21T06:00:00Z INFO === Backup started ===
       2026-11-21T06:00:00Z INFO notification "Backup started" sent
       2026-11-21T06:00:01Z INFO backing up /srv/w to rclone:g:mc
       2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 12.3 MiB
       2026-11-21T06:00:43Z ERROR notification "Backup completed" not sent: the webhook does not exist: it was deleted or its address is wrong (404 Unknown Webhook, code 10015) — create a webhook again in the channel's settings and put its address in /etc/mc-backup/webhook.json`,
    );
    write(
      "mc-log-tailer.log",
      `2026-11-21T07:00:00Z INFO following /srv/w/logs/latest.log
       2026-11-21T07:00:05Z INFO join Steve: Steve joined the game (line 12)
       2026-11-21T07:00:05Z INFO notification "Steve joined the game" not sent: the join category is off
       2026-11-21T07:03:00Z INFO death Steve: Steve was slain by Zombie (line 40)
       2026-11-21T07:03:00Z INFO notification "Steve was slain by Zombie" sent`,
    );
    write(
      "mc-restart.log",
      `2026-11-21T10:55:00Z INFO countdown of 5 minutes starts (2 players online)
       2026-11-21T10:55:01Z INFO notification "Scheduled restart warning" sent`,
    );
    expect(recentNotifications(dir.path)).toEqual([
      {
        time: Date.parse("2026-11-21T10:55:01Z"),
        source: "restart-with-warning",
        title: "Scheduled restart warning",
        outcome: "sent",
        category: undefined,
        detail: undefined,
      },
      {
        time: Date.parse("2026-11-21T07:03:00Z"),
        source: "log-tailer",
        title: "Steve was slain by Zombie",
        outcome: "sent",
        category: undefined,
        detail: undefined,
      },
      {
        time: Date.parse("2026-11-21T07:00:05Z"),
        source: "log-tailer",
        title: "Steve joined the game",
        outcome: "off",
        category: "join",
        detail: undefined,
      },
      {
        time: Date.parse("2026-11-21T06:00:43Z"),
        source: "backup",
        title: "Backup completed",
        outcome: "failed",
        category: undefined,
        // Discord's own words (Unknown Webhook) are the log's, not the page's.
        detail:
          "the webhook does not exist: it was deleted or its address is wrong (HTTP 404) — create a webhook again in the channel's settings and put its address in /etc/mc-backup/webhook.json",
      },
      {
        time: Date.parse("2026-11-21T06:00:00Z"),
        source: "backup",
        title: "Backup started",
        outcome: "sent",
        category: undefined,
        detail: undefined,
      },
    ]);
  });

  it("list no event whose outcome is not logged (no webhook set), nor lines that only look like outcomes", () => {
    write(
      "mc-idle-monitor.log",
      `2026-11-21T08:00:00Z INFO 0 players online [ping], server running, empty for 30 min 0 s; someone played since the last backup: idle backup now
       2026-11-21T08:00:01Z DEBUG notification "Idle backup triggered" sent
       2026-11-21T08:00:02Z WARN notification "Idle backup triggered" not sent: something
       2026-11-21T08:00:03Z INFO notification "Idle backup triggered" sent to https://discord.com/api/webhooks/1/***`,
    );
    expect(recentNotifications(dir.path)).toEqual([]);
  });

  it("are the newest `count` of them, the dashboard's test messages included", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `2026-11-21T06:0${i}:00Z INFO notification "Test message" sent`);
    write("mc-dashboard.log", `2026-11-21T05:59:00Z INFO listening on http://127.0.0.1:8088\n${lines.join("\n")}`);
    const entries = recentNotifications(dir.path);
    expect(entries).toHaveLength(8);
    expect(entries[0]).toMatchObject({ source: "dashboard", title: "Test message", outcome: "sent" });
    expect(entries[0]?.time).toBe(Date.parse("2026-11-21T06:09:00Z"));
    expect(recentNotifications(dir.path, 20)).toHaveLength(10);
  });

  it("are none when there are no logs", () => {
    expect(recentNotifications(join(dir.path, "nowhere"))).toEqual([]);
  });
});
