import { createHmac } from "node:crypto";
import {
  type CloudflareStandIn,
  type DigitalOceanStandIn,
  type DiscordAppStandIn,
  type GameServer,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  startDiscordAppStandIn,
  startGameServer,
  waitUntil,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, sendFromVm, runningVm as startedVm, startWorker, workerVars } from "./worker.ts";

const PLAY = "play.example.co.uk";
const PANEL = "panel.example.co.uk";
const SECRET = "a test secret shared by the VM and the Worker";

let discord: DiscordAppStandIn;
let game: GameServer;
let digitalocean: DigitalOceanStandIn | undefined;
let cloudflare: CloudflareStandIn | undefined;
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
  await Promise.all([digitalocean?.close(), cloudflare?.close()]);
  worker = undefined;
});

async function setUp(
  opts: {
    droplets?: Parameters<typeof startDigitalOceanStandIn>[0] extends infer O
      ? O extends { droplets?: infer D }
        ? D
        : never
      : never;
    snapshots?: Array<{ name: string; sizeGigabytes?: number; region?: string; createdAt?: string }>;
    vars?: Record<string, string>;
    omit?: string[];
  } = {},
) {
  digitalocean = await startDigitalOceanStandIn({
    droplets: opts.droplets ?? [],
    snapshots: opts.snapshots ?? [
      { name: "mcops-play.example.co.uk-2026-11-20-0300", sizeGigabytes: 7, region: "fra1" },
    ],
    timings: { createMs: 300, powerOnMs: 100, shutdownMs: 100, snapshotMs: 200 },
  });
  cloudflare = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: PANEL, content: "198.51.100.20", proxied: true },
      { zone: "example.co.uk", name: PLAY, content: "198.51.100.20", proxied: false },
    ],
  });
  const vars = workerVars(
    { app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET },
    opts.vars,
  );
  for (const k of opts.omit ?? []) delete vars[k];
  worker = await startWorker(vars);
  return { endpoint: `${worker.url}/interactions`, url: worker.url };
}

const fromVm = (path: string, body: unknown, at = Date.now(), secret = SECRET) =>
  sendFromVm(worker?.url ?? "", secret, path, body, at);
const runningVm = () => startedVm(digitalocean as DigitalOceanStandIn);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(100);
  }
}
const status = async (endpoint: string) =>
  (await discord.command(endpoint, { name: "status" })).body?.data?.content ?? "";

/**
 * What an attack on the Worker found (races between a step and the requests that come in meanwhile, runs that never
 * ended, settings that do not parse), each kept as a test of the behaviour that replaced it.
 */
describe("a VM secret that is not set", () => {
  for (const [label, opts] of [
    ["empty", { vars: { VM_SECRET: "" } }],
    ["unset", { omit: ["VM_SECRET"] }],
  ] as const) {
    it(`refuses a request signed with the empty key (VM_SECRET ${label})`, async () => {
      const { endpoint } = await setUp({ ...opts, omit: "omit" in opts ? [...opts.omit] : [] });
      const text = JSON.stringify({ serverState: "running", players: [] });
      const at = String(Date.now());
      const sig = createHmac("sha256", Buffer.alloc(0)).update(`v2:POST\n/vm/heartbeat\n${at}\n${text}`).digest("hex");
      const response = await fetch(`${worker?.url}/vm/heartbeat`, {
        method: "POST",
        body: text,
        headers: { "x-mcops-timestamp": at, "x-mcops-signature": sig },
      });
      // WebCrypto refuses a zero-length HMAC key: the Worker fails closed.
      expect(response.status).not.toBe(200);
      expect(await status(endpoint)).toMatch(/^❔ No word from the VM yet/);
    });
  }
});

describe("runs end", () => {
  it("takes a failed snapshot again, and a /start during the hibernation wakes the server once it ends", async () => {
    const { endpoint } = await setUp();
    await runningVm();
    digitalocean?.inject({ kind: "action-errors", actionType: "snapshot" });
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(202);
    await waitFor(async () => /⚠️ the snapshot .* failed/.test(await status(endpoint)), "the snapshot error", 30_000);
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.type).toBe(5);
    await waitUntil(() => /^Server is up/.test(discord.reply(start.token) ?? ""), "the server up again", 60_000);
    const snapshots = digitalocean?.actions().filter((a) => a.type === "snapshot");
    expect(snapshots?.map((a) => a.status)).toEqual(["errored", "completed"]);
    expect(digitalocean?.droplets()).toHaveLength(1);
    expect(digitalocean?.droplets()[0]?.status).toBe("active");
  });

  it("a hibernation given up with the VM shut down does not leave /start answering 'already up'", async () => {
    const { endpoint } = await setUp();
    await runningVm();
    // The autopilot's heartbeat (the game still up); then the VM stops the game, backs up and asks.
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    digitalocean?.inject({ kind: "action-errors", actionType: "snapshot", times: 10 });
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(202);
    await waitFor(
      async () => /Could not hibernate|Not hibernated/.test(await status(endpoint)),
      "the run's end",
      60_000,
    );
    // The droplet was shut down for its snapshot and is off: the server is not up.
    expect(digitalocean?.droplets()[0]?.status).toBe("off");
    expect(await status(endpoint)).not.toMatch(/^🟢 Running/);
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.data?.content ?? "").not.toMatch(/already up/);
    expect(start.body?.type).toBe(5);
    await waitUntil(() => /^Server is up/.test(discord.reply(start.token) ?? ""), "the server up again", 60_000);
    expect(digitalocean?.droplets()[0]?.status).toBe("active");
  }, 120_000);

  it("ends a hibernation whose droplet was destroyed by hand; a /start meanwhile makes the VM again", async () => {
    const { endpoint } = await setUp();
    const id = await runningVm();
    digitalocean?.inject({ kind: "action-hangs", actionType: "shutdown" });
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(202);
    await waitFor(
      async () => /Waiting for the VM to be off/.test(await status(endpoint)),
      "the shutdown asked",
      30_000,
    );
    const shutdown = digitalocean?.actions().find((a) => a.type === "shutdown");
    digitalocean?.settleAction(shutdown?.id as number, "errored");
    await fetch(`${digitalocean?.url}/v2/droplets/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${digitalocean?.token}` },
    });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    await waitUntil(() => /^Server is up/.test(discord.reply(start.token) ?? ""), "the server up again", 60_000);
    expect(digitalocean?.droplets()).toHaveLength(1);
    expect(digitalocean?.droplets()[0]?.id).not.toBe(id);
  });
});

describe("requests that come in while a step waits", () => {
  it("keeps a /start and a heartbeat that arrive while the alarm waits on DigitalOcean; a replay stays refused", async () => {
    const { endpoint } = await setUp();
    digitalocean?.inject({ kind: "delay", ms: 3000, route: "POST /v2/droplets" });
    const a = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    await waitUntil(
      () => (digitalocean?.requests ?? []).some((r) => r.method === "POST" && r.path === "/v2/droplets"),
      "the create under way",
      20_000,
    );
    const b = await discord.command(endpoint, { name: "start", roles: [discord.roles.start], user: "alex" });
    expect(b.body?.type).toBe(5);
    const beat = await fromVm("/vm/heartbeat", { serverState: "offline", players: [] });
    expect(beat.status).toBe(200);
    await waitUntil(
      () => [a, b].every((x) => /^Server is up/.test(discord.reply(x.token) ?? "")),
      "both replies at the end",
      60_000,
    );
    const replay = await fetch(`${worker?.url}/vm/heartbeat`, {
      method: "POST",
      body: beat.text,
      headers: beat.headers,
    });
    expect(replay.status).toBe(401);
  });

  it("keeps a /start that arrives while the ended run's replies are being edited", async () => {
    const { createServer } = await import("node:http");
    // Discord slow to take the edits: the run has ended and its replies are still being edited.
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        if (req.method === "PATCH") await sleep(2500);
        const r = await fetch(`${discord.url}${req.url}`, {
          method: req.method,
          headers: { "content-type": "application/json" },
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        res.writeHead(r.status, { "content-type": "application/json" });
        res.end(await r.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    const port = (proxy.address() as { port: number }).port;
    try {
      const { endpoint } = await setUp({ vars: { DISCORD_API_URL: `http://127.0.0.1:${port}/api/v10` } });
      const a = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
      await waitFor(async () => !/^Waking/.test(await status(endpoint)), "the run's end", 30_000);
      const b = await discord.command(endpoint, { name: "start", roles: [discord.roles.start], user: "alex" });
      expect(b.body?.type).toBe(5);
      await waitUntil(() => /^Server is up/.test(discord.reply(b.token) ?? ""), "B's reply at the end", 90_000);
      expect(discord.reply(a.token)).toMatch(/^Server is up/);
    } finally {
      proxy.close();
    }
  }, 120_000);
});

describe("settings and state", () => {
  it("keeps 2 snapshots when KEEP_SNAPSHOTS is not a number, and deletes no other", async () => {
    const day = 86_400_000;
    const { endpoint } = await setUp({
      vars: { KEEP_SNAPSHOTS: "two" },
      snapshots: [
        {
          name: "mcops-play.example.co.uk-2026-11-18-0300",
          region: "fra1",
          createdAt: new Date(Date.now() - 3 * day).toISOString(),
        },
        {
          name: "mcops-play.example.co.uk-2026-11-19-0300",
          region: "fra1",
          createdAt: new Date(Date.now() - 2 * day).toISOString(),
        },
      ],
    });
    await runningVm();
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(202);
    await waitFor(async () => /^💤/.test(await status(endpoint)), "hibernated", 30_000);
    expect(digitalocean?.snapshots().map((x) => x.name)).toContain("mcops-play.example.co.uk-2026-11-19-0300");
    expect(digitalocean?.snapshots()).toHaveLength(2);
    expect(worker?.output()).toContain('KEEP_SNAPSHOTS="two" is not a number of snapshots of 1 or more: keeping 2');
  });

  it("takes back a /stop when someone types /start while the server is up", async () => {
    const { endpoint } = await setUp();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const stop = await discord.command(endpoint, { name: "stop", roles: [discord.roles.admin] });
    expect(stop.body?.data?.content).toMatch(/^Asked the VM/);
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.data?.content).toMatch(/already up/);
    const beat = await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    expect(beat.body.hibernate).toBe(false);
  });

  it("starts the game again when a /start answered 'already up' raced an autopilot hibernation that stopped it", async () => {
    const { endpoint } = await setUp();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.data?.content).toMatch(/already up/);
    // Meanwhile the VM stopped the game for its autopilot hibernation: its request is refused (the /start since),
    // and the refusal tells it to start the game again.
    const refused = await fromVm("/vm/hibernate", { players: 0 });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: "a /start asked for the server since", start: true });
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(409);
    // Its next heartbeat is told too (a VM that missed the refusal's word starts the game then).
    const beat = await fromVm("/vm/heartbeat", { serverState: "offline", players: [] });
    expect(beat.body).toEqual({ hibernate: false, start: true });
  });

  it("tells the VM of a /start once; then the VM's own idle clock decides, not a 15-minute hold", async () => {
    const { endpoint } = await setUp();
    await runningVm();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.data?.content).toMatch(/already up/);
    // A heartbeat while the game is stopping (the panel's state) is told, but does not count as heard.
    expect((await fromVm("/vm/heartbeat", { serverState: "stopping", players: [] })).body.start).toBe(true);
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(409);
    // Heard with the game running: the VM restarts its idle clock; the /start holds nothing off any more.
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: [] })).body).toEqual({
      hibernate: false,
      start: true,
    });
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: [] })).body.start).toBe(false);
    // Its IDLE_HIBERNATE_AFTER (shorter than 15 minutes, say) later the VM asks, and the Worker hibernates it.
    expect((await fromVm("/vm/hibernate", { players: 0 })).status).toBe(202);
  });

  it("does not start a stopped game at a heartbeat with no /start asked, nor while a /stop is pending", async () => {
    const { endpoint } = await setUp();
    expect((await fromVm("/vm/heartbeat", { serverState: "offline", players: [] })).body.start).toBe(false);
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.data?.content).toMatch(/already up/);
    // A /stop after the /start takes it back: the VM is asked to hibernate, not to start the game.
    await discord.command(endpoint, { name: "stop", roles: [discord.roles.admin] });
    const beat = await fromVm("/vm/heartbeat", { serverState: "offline", players: [] });
    expect(beat.body).toEqual({ hibernate: { force: false }, start: false });
  });

  it("keeps /status within Discord's 2000 characters however many play", async () => {
    const { endpoint } = await setUp();
    const names = Array.from({ length: 100 }, (_, i) => `_a_a_a_a_a_a_${String(i).padStart(3, "0")}`);
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: names, online: 100 })).status).toBe(200);
    const content = await status(endpoint);
    expect(content.length).toBeLessThanOrEqual(2000);
    expect(content).toMatch(/^🟢 Running\. 100 players online: .* and 80 more\./);
  });
});
