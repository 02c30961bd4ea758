import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DiscordStandIn, startDiscordStandIn, virtualClock } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CATEGORIES, type Category } from "../../src/categories.ts";
import type { NotifyConfig } from "../../src/config/index.ts";
import {
  buildMessage,
  COLOURS,
  createNotifier,
  EMBED_LIMITS,
  escapeGameText,
  type NotifierOptions,
  toolNotifier,
  truncate,
} from "../../src/http/notifier.ts";
import { createLogger } from "../../src/log.ts";
import type { Paths } from "../../src/paths.ts";
import { clearSecrets, registerSecret } from "../../src/secrets.ts";

const allOn = Object.fromEntries(CATEGORIES.map((c) => [c, true])) as Record<Category, boolean>;
let discord: DiscordStandIn;
let paths: Paths;

function config(overrides: Partial<NotifyConfig> = {}): NotifyConfig {
  return {
    webhookUrl: discord.webhookUrl(),
    source: "/etc/mc-backup/webhook.env",
    events: { ...allOn },
    playHost: "play.example.com",
    ...overrides,
  };
}

function notifier(overrides: Partial<NotifierOptions> = {}) {
  return createNotifier({ config: config(), paths, backoffMs: 10, ...overrides });
}

beforeEach(async () => {
  const root = mkdtempSync(join(tmpdir(), "mcops-notifier-"));
  paths = { configDir: root, logDir: root, stateDir: root, runDir: join(root, "run") };
  discord = await startDiscordStandIn();
});

afterEach(async () => {
  await discord.close();
});

describe("buildMessage", () => {
  it("makes one embed with the colour, the play host as footer and the time", () => {
    const message = buildMessage(
      {
        title: "Player joined",
        description: "Steve joined the game",
        colour: COLOURS.success,
        time: Date.UTC(2026, 10, 21, 6),
      },
      { playHost: "play.example.com", now: 0 },
    );
    expect(message).toEqual({
      embeds: [
        {
          title: "Player joined",
          description: "Steve joined the game",
          color: 5763719,
          footer: { text: "play.example.com" },
          timestamp: "2026-11-21T06:00:00.000Z",
        },
      ],
      allowed_mentions: { parse: [] },
    });
  });

  it("keeps @everyone broken in text escaped before (a file name in a backup's warning) once hidden characters go", () => {
    const name = escapeGameText("locked @everyone.dat");
    const message = buildMessage(
      { title: "Backup completed", description: `1 file could not be read: ${name} and @here\u202e`, colour: 1 },
      { now: 0 },
    );
    expect(message.embeds?.[0]?.description).toBe(
      "1 file could not be read: locked @\u200beveryone.dat and @\u200bhere",
    );
  });

  it("never puts a registered secret in any field, game text or not", () => {
    registerSecret("hunter2SECRETpw");
    const reason = "unable to open repository at sftp:mcops:hunter2SECRETpw@127.0.0.1:/repo";
    for (const fromGame of [false, true]) {
      const text = JSON.stringify(
        buildMessage(
          { title: `failed: ${reason}`, description: reason, fromGame },
          { playHost: "hunter2SECRETpw", now: 0 },
        ),
      );
      expect(text).not.toContain("hunter2SECRETpw");
      expect(text).toContain("***");
    }
    clearSecrets();
  });

  it("escapes text from the game so it cannot format or ping", () => {
    expect(
      escapeGameText("**bold** _it_ `code` ~~s~~ ||spoiler|| > quote # head [link](x) <@123> @everyone @here"),
    ).toBe(
      "\\*\\*bold\\*\\* \\_it\\_ \\`code\\` \\~\\~s\\~\\~ \\|\\|spoiler\\|\\| > quote # head \\[link\\]\\(x\\) \\<@123> @\u200beveryone @\u200bhere",
    );
    expect(escapeGameText("# big\n> quote\n  - item\na-b")).toBe("\\# big\n\\> quote\n  \\- item\na-b");
    const message = buildMessage(
      { title: "Death", description: "Alex was slain by @everyone", fromGame: true },
      { now: 0 },
    );
    expect(message.embeds?.[0]?.description).toBe("Alex was slain by @\u200beveryone");
  });

  it("leaves control, bidirectional and zero-width characters out of every field, and keeps line breaks", () => {
    const message = buildMessage(
      {
        title: "Backup failed: world \u202edlrow\u2066x\u2069\u200b\ufeff\u001b[2J",
        description: "level-name \u202ename\u200f\r\nsecond line\u0085\u2028 @everyone",
        fromGame: true,
      },
      { playHost: "play\u202e.example.test", now: 0 },
    );
    const embed = message.embeds?.[0];
    expect(embed?.title).toBe("Backup failed: world dlrowx\\[2J");
    expect(embed?.description).toBe("level-name name\nsecond line @\u200beveryone");
    expect(embed?.footer?.text).toBe("play.example.test");
    const plain = buildMessage({ title: "Restore of \u202eworld done" }, { now: 0 });
    expect(plain.embeds?.[0]?.title).toBe("Restore of world done");
  });

  it("leaves out every invisible format character: tag characters, deprecated format controls, interlinear annotations", () => {
    // `\u{e0041}\u{e0042}` shows nothing in Discord and reads "AB" to whatever copies the text.
    const message = buildMessage(
      {
        title: "Steve\u{e0001}\u{e0041}\u{e0042}\u{e007f} was slain by \u206eZombie\ufff9x\ufffa\ufffb",
        description: "@every\u206aone @he\u00adre",
        fromGame: true,
      },
      { now: 0 },
    );
    expect(message.embeds?.[0]?.title).toBe("Steve was slain by Zombiex");
    expect(message.embeds?.[0]?.description).toBe("@\u200beveryone @\u200bhere");
    expect(message.allowed_mentions).toEqual({ parse: [] });
  });

  it("cuts text to Discord's limits instead of failing", () => {
    const message = buildMessage(
      { title: "t".repeat(300), description: "d".repeat(5000) },
      { playHost: "f".repeat(2100), now: 0 },
    );
    const embed = message.embeds?.[0];
    expect(embed?.title).toHaveLength(EMBED_LIMITS.title);
    expect(embed?.title?.endsWith("…")).toBe(true);
    expect(embed?.footer?.text).toHaveLength(EMBED_LIMITS.footer);
    const total = (embed?.title?.length ?? 0) + (embed?.description?.length ?? 0) + (embed?.footer?.text.length ?? 0);
    expect(total).toBe(EMBED_LIMITS.total);
  });

  it("never cuts a character in half", () => {
    expect(truncate(`${"a".repeat(8)}😀😀`, 10)).toBe(`${"a".repeat(8)}…`);
    expect(truncate("short", 10)).toBe("short");
  });
});

describe("createNotifier", () => {
  it("posts a message the Discord stand-in accepts and records", async () => {
    const result = await notifier().send({
      title: "Server started",
      description: "Done (3.5s)",
      colour: COLOURS.success,
      category: "start",
    });
    expect(result).toEqual({ status: "sent", attempts: 1 });
    expect(discord.messages[0]?.body.embeds[0]).toMatchObject({ title: "Server started", color: COLOURS.success });
    expect(discord.messages[0]?.wait).toBe(true);
  });

  it("does nothing, without error, when no webhook is configured", async () => {
    const result = await createNotifier({ config: config({ webhookUrl: undefined }), paths }).send({ title: "x" });
    expect(result).toEqual({ status: "disabled" });
    expect(discord.requests).toHaveLength(0);
  });

  it("sends nothing for a category that is off, and everything else", async () => {
    const n = createNotifier({ config: config({ events: { ...allOn, death: false } }), paths });
    expect(await n.send({ title: "died", category: "death" })).toEqual({ status: "filtered", category: "death" });
    expect((await n.send({ title: "joined", category: "join" })).status).toBe("sent");
    expect((await n.send({ title: "no category" })).status).toBe("sent");
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["joined", "no category"]);
  });

  it("drops a message Discord holds longer than a minute: one line, no wait, and the next post waits for no one", async () => {
    discord.inject({ kind: "rate-limit", retryAfterSeconds: 600 });
    const lines: string[] = [];
    const logger = createLogger({ echo: { write: (t: string) => lines.push(t) } });
    // Time passes only when the notifier sleeps: a wait for Discord shows as virtual time, however busy the machine.
    const clock = virtualClock(Date.now());
    const n = notifier({ logger, clock });
    const started = clock.now();
    const first = await n.send({ title: "Backup completed" });
    expect(first).toMatchObject({ status: "failed", kind: "rate-limited", reason: "rate limited for 600 s" });
    // The window is now blocked for everyone: the next post is dropped at once instead of sleeping ten minutes.
    expect(await n.send({ title: "Server restarting in 5 minutes" })).toMatchObject({ kind: "rate-limited" });
    expect(clock.now() - started).toBe(0);
    expect(lines.filter((l) => / ERROR /.test(l))).toEqual([
      expect.stringMatching(/ERROR notification "Backup completed" not sent: rate limited for 600 s — /),
      expect.stringMatching(/ERROR notification "Server restarting in 5 minutes" not sent: rate limited for 600 s — /),
    ]);
    expect(discord.requests).toHaveLength(1);
  });

  it("a service posts no more to a deleted webhook, says it once, and posts again once the settings change", async () => {
    const file = join(paths.configDir, "webhook.env");
    writeFileSync(file, `WEBHOOK_URL=${discord.webhookUrl()}\n`, { mode: 0o600 });
    const lines: string[] = [];
    const logger = createLogger({ echo: { write: (t: string) => lines.push(t) } });
    const n = toolNotifier({ paths, env: {}, logger });
    discord.inject({ kind: "status", status: 404, body: { message: "Unknown Webhook", code: 10015 } });
    expect(await n.send({ title: "one" })).toMatchObject({ status: "failed", kind: "gone" });
    expect(await n.send({ title: "two" })).toMatchObject({ status: "failed", kind: "gone" });
    expect(discord.requests).toHaveLength(1);
    expect(lines.filter((l) => / ERROR /.test(l))).toHaveLength(1);
    // A new address saved (here: the same file written again, later) is tried.
    writeFileSync(file, `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.com\n`, { mode: 0o600 });
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(await n.send({ title: "three" })).toMatchObject({ status: "sent" });
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["three"]);
  });

  it("reports Discord's own reason for a refused message, and logs it once", async () => {
    discord.inject({
      kind: "status",
      status: 400,
      body: {
        message: "Invalid Form Body",
        code: 50035,
        errors: {
          embeds: {
            "0": {
              description: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 4096 or fewer in length." }] },
            },
          },
        },
      },
    });
    const lines: string[] = [];
    const logger = createLogger({ echo: { write: (t: string) => lines.push(t) } });
    const result = await notifier({ logger }).send({ title: "x" });
    expect(result).toMatchObject({
      status: "failed",
      reason:
        "the message was refused (400 Invalid Form Body, code 50035: embeds.0.description: Must be 4096 or fewer in length.)",
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ERROR notification "x" not sent: the message was refused/);
  });

  it("logs each outcome in one line: sent, category off, failed; nothing without a webhook", async () => {
    const lines: string[] = [];
    const logger = createLogger({ echo: { write: (t: string) => lines.push(t) }, echoLevel: "DEBUG" });
    registerSecret("hunter2-secret");
    const n = notifier({ logger, config: config({ events: { ...allOn, join: false } }) });
    expect((await n.send({ title: "Steve left the game", category: "leave" })).status).toBe("sent");
    expect((await n.send({ title: "Steve joined the game", category: "join" })).status).toBe("filtered");
    discord.deleteWebhook(0);
    expect((await n.send({ title: "key hunter2-secret" })).status).toBe("failed");
    await createNotifier({ config: config({ webhookUrl: undefined }), paths, logger }).send({ title: "nowhere" });
    clearSecrets();
    expect(lines.map((l) => l.replace(/^\S+ /, "").trimEnd())).toEqual([
      'INFO notification "Steve left the game" sent',
      'INFO notification "Steve joined the game" not sent: the join category is off',
      'ERROR notification "key ***" not sent: the webhook does not exist: it was deleted or its address is wrong ' +
        "(404 Unknown Webhook, code 10015) — create a webhook again in the channel's settings and put its address in " +
        "/etc/mc-backup/webhook.env",
    ]);
    expect(lines.join("")).not.toContain(discord.webhooks[0]?.token as string);
    expect(lines.join("")).not.toContain("/api/webhooks/");
  });

  it("never throws, even when the rate window's files cannot be written", async () => {
    const n = notifier({ paths: { ...paths, rateDir: "/proc" } });
    const result = await n.send({ title: "x" });
    expect(result).toMatchObject({
      status: "failed",
      reason: expect.stringMatching(/^the message could not be sent \(/),
    });
    expect(discord.messages).toHaveLength(0);
  });

  it("gives up after the last try when the host cannot be reached", async () => {
    const url = discord.webhookUrl();
    await discord.close();
    const result = await createNotifier({
      config: config({ webhookUrl: url }),
      paths,
      backoffMs: 5,
      maxAttempts: 3,
    }).send({ title: "x" });
    expect(result).toMatchObject({
      status: "failed",
      reason: expect.stringMatching(/^cannot reach the webhook host 127\.0\.0\.1:\d+ \(ECONNREFUSED\) after 3 tries$/),
    });
    discord = await startDiscordStandIn();
  });

  it("shares the rate limit between notifiers (as between processes) and never draws a 429", async () => {
    await discord.close();
    // The stand-in's window is shorter than the notifiers' by 200 ms: a post reserved at the window's end may reach it
    // a little later or sooner than the first one did (a busy machine), and that is not what this test is about. Two
    // notifiers that did not share the limit would post six at once, and draw 429s whatever the margin.
    discord = await startDiscordStandIn({ rateLimit: { limit: 3, windowMs: 400 } });
    const rate = { limit: 3, windowMs: 600 };
    const a = notifier({ rate });
    const b = notifier({ rate });
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).send({ title: `m${i}` })));
    expect(results.every((r) => r.status === "sent")).toBe(true);
    expect(discord.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(discord.messages).toHaveLength(8);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
  });

  it("shares it between the units of two servers (their own run dirs, one MCOPS_RATE_DIR)", async () => {
    await discord.close();
    // The stand-in's window is shorter than the notifiers' by 200 ms: a post reserved at the window's end may reach it
    // a little later or sooner than the first one did (a busy machine), and that is not what this test is about. Two
    // notifiers that did not share the limit would post six at once, and draw 429s whatever the margin.
    discord = await startDiscordStandIn({ rateLimit: { limit: 3, windowMs: 400 } });
    const rate = { limit: 3, windowMs: 600 };
    const rateDir = join(paths.runDir, "shared");
    const a = notifier({ rate, paths: { ...paths, runDir: join(paths.runDir, "alpha"), rateDir } });
    const b = notifier({ rate, paths: { ...paths, runDir: join(paths.runDir, "beta"), rateDir } });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).send({ title: `m${i}` })));
    expect(results.every((r) => r.status === "sent")).toBe(true);
    expect(discord.requests.filter((r) => r.status === 429)).toHaveLength(0);
  });

  it("posts an address without a version to /api/v10 and waits out its 429 in seconds", async () => {
    discord.inject({ kind: "rate-limit", retryAfterSeconds: 1.5 });
    const clock = virtualClock(Date.now());
    const started = clock.now();
    expect(await notifier({ clock }).send({ title: "After a 429" })).toEqual({ status: "sent", attempts: 2 });
    expect(discord.requests.map((r) => r.path.replace(/\/\d+\/\*\*\*/, "/{id}/***"))).toEqual([
      "/api/v10/webhooks/{id}/***?wait=true",
      "/api/v10/webhooks/{id}/***?wait=true",
    ]);
    expect(clock.now() - started).toBeGreaterThanOrEqual(1500);
    expect(clock.now() - started).toBeLessThan(2000);
  });

  it("reads X-RateLimit-Reset-After first: 429 {retry_after: 1500} with Reset-After 1.5 waits 1.5 s, not 25 minutes", async () => {
    // The default version's 429 (an unversioned path): retry_after in milliseconds, X-RateLimit-Reset-After seconds.
    discord.inject({
      kind: "status",
      status: 429,
      body: { message: "You are being rate limited.", retry_after: 1500, global: false },
      headers: { "Retry-After": "1500", "X-RateLimit-Reset-After": "1.5", "X-RateLimit-Scope": "user" },
    });
    const clock = virtualClock(Date.now());
    const started = clock.now();
    expect(await notifier({ clock }).send({ title: "After a 429" })).toEqual({ status: "sent", attempts: 2 });
    expect(clock.now() - started).toBeGreaterThanOrEqual(1500);
    expect(clock.now() - started).toBeLessThan(2000);
  });

  it("holds every post of the machine, to any webhook, after a global 429; a shared one holds only its webhook", async () => {
    await discord.close();
    discord = await startDiscordStandIn({
      webhooks: [0, 1].map((i) => ({ id: `12345678901234567${i}`, token: `t${i}` })),
    });
    const clock = virtualClock(Date.now());
    const lines: string[] = [];
    const logger = createLogger({ echo: { write: (t: string) => lines.push(t) } });
    const to = (index: number) =>
      notifier({ clock, logger, config: config({ webhookUrl: discord.webhookUrl(index) }) });

    discord.inject({ kind: "rate-limit", retryAfterSeconds: 600, scope: "shared" });
    expect(await to(0).send({ title: "held" })).toMatchObject({ kind: "rate-limited" });
    expect(await to(1).send({ title: "other webhook" })).toEqual({ status: "sent", attempts: 1 });

    discord.inject({ kind: "rate-limit", retryAfterSeconds: 600, global: true });
    const global = await to(1).send({ title: "global" });
    expect(global).toMatchObject({ kind: "rate-limited", hint: expect.stringMatching(/every post from this machine/) });
    const requests = discord.requests.length;
    // Another webhook, another notifier (as another process): dropped at once, without asking Discord.
    const third = await createNotifier({ config: config({ webhookUrl: discord.webhookUrl(0) }), paths, clock }).send({
      title: "any webhook",
    });
    expect(third).toMatchObject({ kind: "rate-limited" });
    expect(discord.requests).toHaveLength(requests);
  });

  it("does not hold the machine's posts for good after a global 429 asking for a year (the hold is bounded)", async () => {
    await discord.close();
    discord = await startDiscordStandIn({
      webhooks: [0, 1].map((i) => ({ id: `12345678901234567${i}`, token: `t${i}` })),
    });
    const clock = virtualClock(Date.now());
    // A proxy or an odd answer: a year of retry_after with global: true, on the versioned path (seconds).
    discord.inject({
      kind: "status",
      status: 429,
      body: { message: "You are being rate limited.", retry_after: 365 * 24 * 3600, global: true },
      headers: { "X-RateLimit-Global": "true", "X-RateLimit-Scope": "global" },
    });
    const to = (index: number) => notifier({ clock, config: config({ webhookUrl: discord.webhookUrl(index) }) });
    expect(await to(0).send({ title: "held" })).toMatchObject({ kind: "rate-limited" });
    // A day later, every tool of the machine posts again (to any webhook): the file does not keep a year's hold.
    clock.advance(24 * 3600_000);
    expect(await to(1).send({ title: "a day later" })).toEqual({ status: "sent", attempts: 1 });
  });

  it("holds back when Discord's headers say the bucket is empty", async () => {
    await discord.close();
    // Discord's own limit is tighter than ours: only its X-RateLimit headers can keep us from a 429.
    discord = await startDiscordStandIn({ rateLimit: { limit: 2, windowMs: 700 } });
    const n = notifier();
    for (let i = 0; i < 4; i++) expect((await n.send({ title: `m${i}` })).status).toBe("sent");
    expect(discord.requests.filter((r) => r.status === 429)).toHaveLength(0);
  });
});

describe("toolNotifier", () => {
  it("picks up a changed webhook.json without a restart, and keeps the last good settings when it breaks", async () => {
    const { chmodSync, utimesSync, writeFileSync } = await import("node:fs");
    const { toolNotifier } = await import("../../src/http/notifier.ts");
    const lines: string[] = [];
    const echo = {
      write: (l: string) => {
        lines.push(l);
        return true;
      },
    };
    const logger = createLogger({ echo, echoLevel: "INFO" });
    const json = join(paths.configDir, "webhook.json");
    const write = (text: string, at: number) => {
      writeFileSync(json, text);
      chmodSync(json, 0o600);
      utimesSync(json, at, at);
    };
    write(JSON.stringify({ webhook_url: discord.webhookUrl(), events: { join: true } }), 1000);
    const tool = toolNotifier({ paths, env: {}, logger });
    expect((await tool.send({ title: "Steve joined", category: "join" })).status).toBe("sent");

    write(JSON.stringify({ webhook_url: discord.webhookUrl(), events: { join: false } }), 2000);
    expect(await tool.send({ title: "Alex joined", category: "join" })).toEqual({
      status: "filtered",
      category: "join",
    });
    expect(lines.some((l) => l.includes("INFO notification settings changed: using the new ones"))).toBe(true);

    write("{ not json", 3000);
    expect((await tool.send({ title: "Notch joined", category: "join" })).status).toBe("filtered");
    expect((await tool.send({ title: "Notch joined again", category: "join" })).status).toBe("filtered");
    expect(lines.filter((l) => l.includes("ERROR the changed notification settings are not valid"))).toHaveLength(1);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Steve joined"]);
  });
});
