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
  it("are the events each tool posts for, newest first, with the titles of their messages", () => {
    write(
      "mc-backup.log",
      `2026-11-21T06:00:00Z INFO === Backup started ===
       2026-11-21T06:00:01Z INFO backing up /srv/w to rclone:g:mc
       2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 12.3 MiB`,
    );
    write(
      "mc-log-tailer.log",
      `2026-11-21T07:00:00Z INFO following /srv/w/logs/latest.log
       2026-11-21T07:00:05Z INFO join Steve: Steve joined the game (line 12)
       2026-11-21T07:03:00Z INFO death Steve: Steve was slain by Zombie (line 40)
       2026-11-21T07:04:00Z INFO start: Done (4.2s)! For help, type "help" (line 41)`,
    );
    write(
      "mc-idle-monitor.log",
      `2026-11-21T08:00:00Z INFO 0 players online [ping], server running, empty for 30 min 0 s; someone played since the last backup: idle backup now
       2026-11-21T08:10:00Z INFO 0 players online [ping], server running, empty for 40 min 0 s; nothing to do`,
    );
    write(
      "mc-restart.log",
      `2026-11-21T10:55:00Z INFO countdown of 5 minutes starts (2 players online)
       2026-11-21T11:00:00Z INFO sending the restart signal (after a 5 minutes countdown)
       2026-11-21T11:00:30Z INFO the server is running again (5 min 30 s after the countdown began)`,
    );
    const entries = recentNotifications(dir.path, 20);
    expect(entries.map((e) => [e.title, e.category, e.source, e.outcome])).toEqual([
      ["Server restarted", "restart", "restart-with-warning", "raised"],
      ["Restart triggered", "restart", "restart-with-warning", "raised"],
      ["Scheduled restart warning", "restart", "restart-with-warning", "raised"],
      ["Idle backup triggered", "idle", "idle-monitor", "raised"],
      ["Server started", "start", "log-tailer", "raised"],
      ["Steve was slain by Zombie", "death", "log-tailer", "raised"],
      ["Steve joined the game", "join", "log-tailer", "raised"],
      ["Backup completed", "backup", "backup", "raised"],
      ["Backup started", "backup", "backup", "raised"],
    ]);
    expect(entries[0]?.time).toBe(Date.parse("2026-11-21T11:00:30Z"));
    expect(recentNotifications(dir.path)).toHaveLength(8);
  });

  it("show a failed post on the event it belongs to, and a logged success as sent", () => {
    write(
      "mc-backup.log",
      `2026-11-21T06:00:00Z INFO === Backup started ===
       2026-11-21T06:00:01Z DEBUG notification "Backup started" sent to https://discord.com/api/webhooks/1/***
       2026-11-21T06:00:42Z INFO === Backup done === took 42 s
       2026-11-21T06:00:43Z ERROR notification "Backup completed" not sent: the webhook does not exist (404) — create a webhook again`,
    );
    const [done, started] = recentNotifications(dir.path);
    expect(done).toMatchObject({
      title: "Backup completed",
      outcome: "failed",
      detail: "the webhook does not exist (404) — create a webhook again",
    });
    expect(started).toMatchObject({ title: "Backup started", outcome: "sent" });
  });

  it("include the dashboard's own test messages, once each", () => {
    write(
      "mc-dashboard.log",
      `2026-11-21T06:00:00Z INFO listening on http://127.0.0.1:8088
       2026-11-21T06:01:00Z DEBUG notification "Test message" sent to https://discord.com/api/webhooks/1/***
       2026-11-21T06:01:00Z INFO notification "Test message" sent to https://discord.com/api/webhooks/1/*** (by admin)`,
    );
    expect(recentNotifications(dir.path)).toEqual([
      {
        time: Date.parse("2026-11-21T06:01:00Z"),
        source: "dashboard",
        title: "Test message",
        category: undefined,
        outcome: "sent",
        detail: undefined,
      },
    ]);
  });

  it("are none when there are no logs", () => {
    expect(recentNotifications(join(dir.path, "nowhere"))).toEqual([]);
  });
});
