import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventJournal, record } from "@mcops/core/events";
import { createLogger } from "@mcops/core/log";
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
/** The logs in the directory, and no records yet: logs the tools wrote before they kept records. */
const paths = () => ({ logDir: dir.path, stateDir: join(dir.path, "state") });

describe("recent notifications, from the tools' logs written before the records", () => {
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
    expect(recentNotifications(paths())).toEqual([
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
    expect(recentNotifications(paths())).toEqual([]);
  });

  it("are the newest `count` of them, the dashboard's test messages included", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `2026-11-21T06:0${i}:00Z INFO notification "Test message" sent`);
    write("mc-dashboard.log", `2026-11-21T05:59:00Z INFO listening on http://127.0.0.1:8088\n${lines.join("\n")}`);
    const entries = recentNotifications(paths());
    expect(entries).toHaveLength(8);
    expect(entries[0]).toMatchObject({ source: "dashboard", title: "Test message", outcome: "sent" });
    expect(entries[0]?.time).toBe(Date.parse("2026-11-21T06:09:00Z"));
    expect(recentNotifications(paths(), 20)).toHaveLength(10);
  });

  it("are none when there are no logs", () => {
    expect(recentNotifications({ logDir: join(dir.path, "nowhere"), stateDir: join(dir.path, "nowhere") })).toEqual([]);
  });
});

describe("recent notifications, from the tools' records", () => {
  it("are the records of every notifying tool, the failures in the page's words from their codes", () => {
    const at = (iso: string) => Date.parse(iso);
    const log = eventJournal(paths(), "log-tailer");
    log.append({
      type: "notification",
      at: at("2026-11-22T07:00:05Z"),
      title: "Steve joined",
      outcome: "off",
      category: "join",
    });
    log.append({ type: "notification", at: at("2026-11-22T07:03:00Z"), title: "Steve died", outcome: "sent" });
    eventJournal(paths(), "backup").append({
      type: "notification",
      at: at("2026-11-22T06:00:43Z"),
      title: "Backup completed",
      outcome: "failed",
      failure: {
        kind: "token",
        status: 401,
        // What Discord said stays in the log: the page builds its words from the code.
        reason: "the webhook token is not accepted (401 Invalid Webhook Token REMOTE-WORDS, code 50027)",
        hint: "copy the webhook address again into /etc/mc-backup/webhook.json",
      },
    });
    // A log line of a tool that keeps records is not read: its record says what became of the post.
    write("mc-log-tailer.log", '2026-11-22T08:00:00Z INFO notification "From the log" sent');
    expect(recentNotifications(paths())).toEqual([
      {
        time: at("2026-11-22T07:03:00Z"),
        source: "log-tailer",
        title: "Steve died",
        outcome: "sent",
        category: undefined,
        detail: undefined,
      },
      {
        time: at("2026-11-22T07:00:05Z"),
        source: "log-tailer",
        title: "Steve joined",
        outcome: "off",
        category: "join",
        detail: undefined,
      },
      {
        time: at("2026-11-22T06:00:43Z"),
        source: "backup",
        title: "Backup completed",
        outcome: "failed",
        category: undefined,
        detail:
          "the webhook token is not accepted (HTTP 401) — copy the webhook address again into /etc/mc-backup/webhook.json",
      },
    ]);
  });

  it("skip a line of the events file that is not a record (cut short, another version's, forged)", () => {
    mkdirSync(join(dir.path, "state", "events"), { recursive: true });
    writeFileSync(
      join(dir.path, "state", "events", "restart-with-warning.jsonl"),
      [
        '{"type":"notification","at":1,"title":"ok","outcome":"sent"}',
        '{"type":"notification","at":2,"title":"x","outcome":"exploded"}',
        '{"type":"notification","at":"3","title":"x","outcome":"sent"}',
        "not json",
        '{"type":"notification","at":4,"title":"cut',
      ].join("\n"),
    );
    expect(recentNotifications(paths()).map((e) => e.title)).toEqual(["ok"]);
  });

  it("show a death message as its log line does: no bidirectional, zero-width or line-break character; a long one cut", () => {
    const logger = createLogger({ events: eventJournal(paths(), "log-tailer") });
    for (let i = 0; i < 7; i++)
      record(logger, { type: "notification", at: 1000 + i, title: `Steve joined ${i}`, outcome: "sent" });
    record(logger, {
      type: "notification",
      at: 2000,
      title: `Alex was slain by Steve using [\u202edrowS\u202c]\u2028\u200b@everyone ${"x".repeat(66_000)}`,
      outcome: "sent",
    });
    const entries = recentNotifications(paths());
    expect(entries[0]?.title).toMatch(
      /^Alex was slain by Steve using \[\\u202edrowS\\u202c\]\\u2028\\u200b@everyone x+…$/,
    );
    // One long title does not push the tool's earlier posts off the list.
    expect(entries.map((e) => e.title)).toContain("Steve joined 6");
    // A record put there by other means is shown the same way.
    eventJournal(paths(), "log-tailer").append({
      type: "notification",
      at: 3000,
      title: "A\u202eB\nC",
      outcome: "sent",
    });
    expect(recentNotifications(paths())[0]?.title).toBe("A\\u202eB | C");
  });
});
