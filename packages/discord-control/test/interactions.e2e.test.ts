import { type AddressInfo, connect, createServer } from "node:net";
import {
  type CloudflareStandIn,
  type DigitalOceanStandIn,
  type DiscordAppStandIn,
  type DiscordStandIn,
  type GameServer,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  startDiscordAppStandIn,
  startDiscordStandIn,
  startGameServer,
  waitUntil,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, sendFromVm, runningVm as startedVm, startWorker, workerVars } from "./worker.ts";

/**
 * Who the Worker answers (the group's guild, each interaction once) and how its replies end (a 429 waited out, an
 * expired token's outcome posted to the channel), against the Discord application and channel webhook stand-ins.
 */
const PLAY = "play.example.co.uk";
const PANEL = "panel.example.co.uk";
const SECRET = "a test secret shared by the VM and the Worker";

let discord: DiscordAppStandIn;
let game: GameServer;
let digitalocean: DigitalOceanStandIn | undefined;
let cloudflare: CloudflareStandIn | undefined;
let channel: DiscordStandIn | undefined;
let worker: RunningWorker | undefined;

beforeAll(async () => {
  discord = await startDiscordAppStandIn();
  game = await startGameServer();
});
afterAll(async () => {
  await game.close();
  await discord.close();
});
afterEach(async () => {
  await worker?.close();
  await Promise.all([digitalocean?.close(), cloudflare?.close(), channel?.close()]);
  worker = undefined;
  channel = undefined;
});

async function setUp(opts: { vars?: Record<string, string>; hibernated?: boolean } = {}) {
  digitalocean = await startDigitalOceanStandIn({
    droplets: [],
    snapshots: [{ name: "mcops-play.example.co.uk-2026-11-20-0300", sizeGigabytes: 7, region: "fra1" }],
    timings: { createMs: 300, powerOnMs: 100, shutdownMs: 100, snapshotMs: 200 },
  });
  cloudflare = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: PANEL, content: "198.51.100.20", proxied: true },
      { zone: "example.co.uk", name: PLAY, content: "198.51.100.20", proxied: false },
    ],
  });
  worker = await startWorker(
    workerVars({ app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET }, opts.vars),
  );
  return `${worker.url}/interactions`;
}

const fromVm = (path: string, body: unknown) => sendFromVm(worker?.url ?? "", SECRET, path, body);
const admin = () => [discord.roles.admin];

describe("who the Worker answers", () => {
  it("refuses an interaction sent again byte for byte: a captured /stop force:true re-arms nothing", async () => {
    const endpoint = await setUp();
    await fromVm("/vm/heartbeat", { serverState: "running", players: ["Steve"] });
    const stop = await discord.command(endpoint, { name: "stop", roles: admin(), options: { force: true } });
    expect(stop.body?.data?.content).toMatch(/^Asked the VM to hibernate/);
    const start = await discord.command(endpoint, { name: "start", roles: admin() });
    expect(start.body?.data?.content).toMatch(/already up/);
    // The /stop's bytes and signature, captured and sent again within the signature's 5 minutes.
    const replay = await discord.send(endpoint, stop.sent.body, stop.sent.headers);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({
      type: 4,
      data: { content: "This interaction was answered already.", allowed_mentions: { parse: [] }, flags: 64 },
    });
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: ["Steve"] })).body.hibernate).toBe(false);
  });

  it("refuses /status privately in another guild, in a DM and from a user install, saying nothing of the server", async () => {
    const endpoint = await setUp();
    await fromVm("/vm/heartbeat", { serverState: "running", players: ["Steve"] });
    const elsewhere = [
      { from: "guild" as const, guildId: "123456789012345678" },
      { from: "dm" as const },
      { from: "user-install" as const },
    ];
    for (const where of elsewhere) {
      const answer = await discord.command(endpoint, { name: "status", ...where });
      expect(answer.body?.data?.flags, JSON.stringify(where)).toBe(64);
      expect(answer.body?.data?.content).not.toMatch(/Steve|Running/);
    }
    const dm = await discord.command(endpoint, { name: "status", from: "dm" });
    expect(dm.body?.data?.content).toBe("Use this in the group's Discord server, not in a DM.");
    const start = await discord.command(endpoint, { name: "start", roles: admin(), from: "user-install" });
    expect(start.body?.data).toMatchObject({ flags: 64, content: expect.stringMatching(/only in the group's/) });
    expect(digitalocean?.requests).toEqual([]);
    // In the group's guild it answers.
    expect((await discord.command(endpoint, { name: "status" })).body?.data?.content).toMatch(/Steve/);
  });
});

describe("replies that end", () => {
  it("waits out a 429 on a reply edit (retry_after) and edits again, with Discord's User-Agent", async () => {
    const endpoint = await setUp();
    discord.inject({ kind: "rate-limit", retryAfterSeconds: 1.5 });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    await waitUntil(() => /^Server is up/.test(discord.reply(start.token) ?? ""), "the reply's end", 60_000);
    const requests = discord.editRequests.filter((r) => r.token === start.token);
    const limited = requests.findIndex((r) => r.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = requests[limited + 1];
    expect(next?.status).toBe(200);
    expect((next?.at ?? 0) - (requests[limited]?.at ?? 0)).toBeGreaterThanOrEqual(1500);
    const agents = new Set(discord.edits.filter((e) => e.token === start.token).map((e) => e.userAgent));
    expect([...agents]).toEqual([expect.stringMatching(/^DiscordBot \(https:\/\/\S+, \S+\)$/)]);
  });

  it("posts the outcome to the channel when the reply's token expired, and /status keeps it", async () => {
    channel = await startDiscordStandIn();
    const endpoint = await setUp({ vars: { OUTCOME_WEBHOOK_URL: channel.webhookUrl() } });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    discord.expire(start.token);
    const [message] = await channel.waitForMessages(1, 60_000);
    expect(message?.body).toMatchObject({
      content: expect.stringMatching(new RegExp(`^Server is up at ${PLAY} \\(\\d+ s\\)$`)),
      allowed_mentions: { parse: [] },
    });
    expect(discord.reply(start.token)).toBeUndefined();
    const status = (await discord.command(endpoint, { name: "status" })).body?.data?.content;
    expect(status).toMatch(/\nLast run \(<t:\d+:R>\): Server is up at /);
  });

  it("posts the outcome to a copied webhook address (no API version) through a 429: as /api/v10, its wait in seconds", async () => {
    channel = await startDiscordStandIn();
    // The address as Discord's Copy Webhook URL gives it. Posted to as it is, Discord's default version would answer
    // retry_after 1500 (milliseconds), read as 1500 s: over the 30 s a post waits, the outcome lost.
    const endpoint = await setUp({ vars: { OUTCOME_WEBHOOK_URL: channel.webhookUrl() } });
    channel.inject({ kind: "rate-limit", retryAfterSeconds: 1.5, scope: "user" });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    discord.expire(start.token);
    const [message] = await channel.waitForMessages(1, 60_000);
    expect(message?.body.content).toMatch(/^Server is up at /);
    expect(channel.requests.map((r) => r.status)).toEqual([429, 204]);
    expect(channel.requests.every((r) => r.path.startsWith("/api/v10/webhooks/"))).toBe(true);
    const [limited, posted] = channel.requests;
    expect((posted?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1500);
  });

  it("hands a reply that would expire before the run ends over to the channel, saying so", async () => {
    channel = await startDiscordStandIn();
    // The next look (POLL_MS) comes after the reply's life (REPLY_MS): its token would expire before it.
    const endpoint = await setUp({
      vars: { OUTCOME_WEBHOOK_URL: channel.webhookUrl(), REPLY_MS: "5000", POLL_MS: "6000" },
    });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    await waitUntil(() => /can follow no longer/.test(discord.reply(start.token) ?? ""), "the hand-over", 60_000);
    expect(discord.reply(start.token)).toMatch(
      /^Waking the server up…\n[\s\S]*\nThis reply can follow no longer \(Discord allows 15 minutes\): the outcome will be posted in this channel\.$/,
    );
    const [message] = await channel.waitForMessages(1, 60_000);
    expect(message?.body.content).toMatch(/^Server is up at /);
    expect(discord.reply(start.token)).toMatch(/can follow no longer/);
  });
});

describe("a reply's last edit that Discord fails", () => {
  it("edits the reply with the outcome again when Discord answers its last edit 500 once", async () => {
    // The game behind a gate the test opens: the run waits in its game phase until then.
    let open = false;
    const [gameHost, gamePort] = game.address.split(":");
    const gate = createServer((socket) => {
      if (!open) return socket.destroy();
      const upstream = connect(Number(gamePort), gameHost);
      socket.pipe(upstream).pipe(socket);
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
    });
    await new Promise<void>((resolve) => gate.listen(0, "127.0.0.1", () => resolve()));
    try {
      const gateAddress = `127.0.0.1:${(gate.address() as AddressInfo).port}`;
      const endpoint = await setUp({ vars: { GAME_ADDRESS: gateAddress } });
      const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
      await waitUntil(
        () => /Waiting for the game to answer/.test(discord.reply(start.token) ?? ""),
        "the game phase",
        60_000,
      );
      // The next edit is the last one (the outcome): Discord answers it 500, once.
      discord.inject({ kind: "status", status: 500 });
      open = true;
      await waitUntil(
        () => discord.editRequests.some((r) => r.token === start.token && r.status === 500),
        "the failed edit",
        60_000,
      );
      await waitUntil(() => /^Server is up at /.test(discord.reply(start.token) ?? ""), "the reply's end", 30_000);
    } finally {
      gate.close();
    }
  }, 120_000);
});

describe("/start during the /stop hand-off", () => {
  it("never answers 'already up' once the VM was told to hibernate: a revive follows, its hibernate request is refused", async () => {
    const endpoint = await setUp();
    await startedVm(digitalocean as DigitalOceanStandIn);
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    await discord.command(endpoint, { name: "stop", roles: admin() });
    // The heartbeat that hands the /stop over: the VM now stops the game and backs up.
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: [] })).body.hibernate).toEqual({
      force: false,
    });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.type).toBe(5);
    expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 409 });
    await waitUntil(() => /^Server is up/.test(discord.reply(start.token) ?? ""), "the reply's end", 60_000);
    // The run has ended: the VM's request, tried again, is still refused (a /start asked for the server).
    expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 409 });
    expect(digitalocean?.droplets()).toHaveLength(1);
    expect(digitalocean?.requests.filter((r) => r.method === "DELETE")).toEqual([]);
  });
});
