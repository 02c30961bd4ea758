import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signVmRequest } from "@mcops/core/vm-signature";
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
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningWorker, sendFromVm, runningVm as startedVm, startWorker, workerVars } from "./worker.ts";

/**
 * The Worker in workerd (wrangler dev), against the Discord application stand-in (which signs interactions with a
 * test key and records the reply edits), DigitalOcean and Cloudflare stand-ins, and a real protocol game server.
 */
const PLAY = "play.example.co.uk";
const PANEL = "panel.example.co.uk";
const OLD_IP = "198.51.100.20";
const SECRET = "a test secret shared by the VM and the Worker";

let discord: DiscordAppStandIn;
let game: GameServer;
let digitalocean: DigitalOceanStandIn;
let cloudflare: CloudflareStandIn;
let worker: RunningWorker;
let endpoint: string;

beforeAll(async () => {
  discord = await startDiscordAppStandIn();
  game = await startGameServer();
});
afterAll(async () => {
  await game.close();
  await discord.close();
});

beforeEach(async () => {
  // Hibernated: no droplet, the snapshot hibernate took.
  digitalocean = await startDigitalOceanStandIn({
    droplets: [],
    snapshots: [
      { name: "mcops-play.example.co.uk-2026-11-20-0300", sizeGigabytes: 7, region: "fra1" },
      // Another server's world on the same account, newer: never revived here, never pruned.
      {
        name: "mcops-play2.example.co.uk-2026-11-20-0400",
        sizeGigabytes: 5,
        region: "fra1",
        createdAt: new Date(Date.now() - 3_600_000).toISOString(),
      },
    ],
    timings: { createMs: 300, powerOnMs: 100 },
  });
  cloudflare = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: PANEL, content: OLD_IP, proxied: true },
      { zone: "example.co.uk", name: PLAY, content: OLD_IP, proxied: false },
    ],
  });
  worker = await startWorker(
    workerVars({ app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET }),
  );
  endpoint = `${worker.url}/interactions`;
});

afterEach(async () => {
  await worker.close();
  await Promise.all([digitalocean.close(), cloudflare.close()]);
});

/** A request of the VM, signed as its idle monitor signs it. */
const fromVm = (path: string, body: unknown, at = Date.now(), secret = SECRET) =>
  sendFromVm(worker.url, secret, path, body, at);

describe("discord-control Worker: who may ask", () => {
  it("answers a PING with a PONG, and anything unsigned, forged, altered or stale with 401", async () => {
    expect(await discord.ping(endpoint)).toMatchObject({ status: 200, body: { type: 1 } });
    const body = JSON.stringify({ type: 1 });
    expect((await discord.send(endpoint, body, {})).status).toBe(401);
    const signed = discord.sign(body);
    expect((await discord.send(endpoint, JSON.stringify({ type: 2 }), signed)).status).toBe(401);
    const forged = { ...signed, "x-signature-ed25519": "ab".repeat(64) };
    expect((await discord.send(endpoint, body, forged)).status).toBe(401);
    const stale = discord.sign(body, Math.floor(Date.now() / 1000) - 600);
    expect((await discord.send(endpoint, body, stale)).status).toBe(401);
    expect((await discord.send(endpoint, `{"type":1,"pad":"${"x".repeat(70_000)}"}`, {})).status).toBe(413);
  });

  it("refuses /start and /stop privately to a member without the role", async () => {
    const start = await discord.command(endpoint, { name: "start", roles: [] });
    expect(start.body).toMatchObject({
      type: 4,
      data: { content: `You need the <@&${discord.roles.start}> role to start the server.`, flags: 64 },
    });
    const stop = await discord.command(endpoint, { name: "stop", roles: [discord.roles.start] });
    expect(stop.body?.data).toMatchObject({ flags: 64, content: expect.stringMatching(/role to stop the server/) });
    expect(digitalocean.requests).toEqual([]);
  });

  it("takes heartbeats only when signed, fresh and newer than the last; /status shows the latest", async () => {
    expect((await discord.command(endpoint, { name: "status" })).body?.data?.content).toMatch(
      /^❔ No word from the VM yet/,
    );
    const backup = Date.now() - 3 * 3600_000;
    const beat = { serverState: "running", players: ["Steve", "Alex_2", "<@everyone>"], lastBackup: backup };
    const sent = await fromVm("/vm/heartbeat", beat);
    expect(sent).toMatchObject({ status: 200, body: { hibernate: false, start: false } });
    // The same request again (a replay), a forged one, one from a clock ten minutes off.
    const replay = await fetch(`${worker.url}/vm/heartbeat`, {
      method: "POST",
      body: sent.text,
      headers: sent.headers,
    });
    expect(replay.status).toBe(401);
    expect((await fromVm("/vm/heartbeat", beat, Date.now(), "another secret")).status).toBe(401);
    expect((await fromVm("/vm/heartbeat", beat, Date.now() - 10 * 60_000)).status).toBe(401);
    const status = (await discord.command(endpoint, { name: "status" })).body?.data?.content;
    expect(status).toBe(
      `🟢 Running. 2 players online: Steve, Alex\\_2. Last backup <t:${Math.floor(backup / 1000)}:R>.`,
    );
  });

  it("refuses /stop while players are online unless forced, then asks the VM at its next heartbeat", async () => {
    await fromVm("/vm/heartbeat", { serverState: "running", players: ["Steve"] });
    const admin = [discord.roles.admin];
    const refused = await discord.command(endpoint, { name: "stop", roles: admin });
    expect(refused.body?.data?.content).toBe("1 player online: Steve. Type `/stop force:true` to hibernate it anyway.");
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: ["Steve"] })).body.hibernate).toBe(false);
    const forced = await discord.command(endpoint, { name: "stop", roles: admin, options: { force: true } });
    expect(forced.body?.data?.content).toMatch(/^Asked the VM to hibernate/);
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: [] })).body.hibernate).toEqual({
      force: true,
    });
  });
});

describe("discord-control Worker: /start", () => {
  it("revives a hibernated server: one droplet, DNS, the game answered, the reply edited as each step ends", async () => {
    const answer = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(answer).toMatchObject({ status: 200, body: { type: 5 } });
    await waitUntil(() => /^Server is up at /.test(discord.reply(answer.token) ?? ""), "the last edit", 60_000);
    expect(discord.reply(answer.token)).toMatch(new RegExp(`^Server is up at ${PLAY} \\(\\d+ s\\)$`));
    const edits = discord.edits.filter((e) => e.token === answer.token).map((e) => e.content);
    expect(edits.length).toBeGreaterThanOrEqual(4);
    expect(edits.join("\n")).toMatch(
      /✅ Created droplet mcops \(s-2vcpu-4gb, fra1\) from mcops-play\.example\.co\.uk-2026-11-20-0300/,
    );
    expect(edits.join("\n")).toMatch(/✅ DNS points at 203\.0\.113\.\d+/);
    const droplets = digitalocean.droplets();
    expect(droplets).toHaveLength(1);
    const ip = droplets[0]?.networks.v4.find((n) => n.type === "public")?.ip_address;
    expect(cloudflare.records().map((r) => [r.name, r.content, r.proxied])).toEqual(
      expect.arrayContaining([
        [PANEL, ip, true],
        [PLAY, ip, false],
      ]),
    );
  });

  it("joins two /start at once into one run: one droplet, both replies followed to the end", async () => {
    const roles = [discord.roles.start];
    const [a, b] = await Promise.all([
      discord.command(endpoint, { name: "start", roles }),
      discord.command(endpoint, { name: "start", roles, user: "alex" }),
    ]);
    expect([a.body?.type, b.body?.type]).toEqual([5, 5]);
    await waitUntil(
      () => [a, b].every((x) => /^Server is up/.test(discord.reply(x.token) ?? "")),
      "both replies at the end",
      60_000,
    );
    expect(digitalocean.droplets()).toHaveLength(1);
    expect(digitalocean.requests.filter((r) => r.method === "POST" && r.path === "/v2/droplets")).toHaveLength(1);
  });

  it("makes one droplet when DigitalOcean answers the create 500 after making it and its list lags (Gamocosm #138)", async () => {
    digitalocean.lagList({ requests: 4 });
    digitalocean.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });
    const answer = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    await waitUntil(() => /^Server is up at /.test(discord.reply(answer.token) ?? ""), "the last edit", 60_000);
    expect(digitalocean.droplets()).toHaveLength(1);
    expect(digitalocean.requests.filter((r) => r.method === "POST" && r.path === "/v2/droplets")).toHaveLength(1);
    // The run looked for it by its own tag, and the list did not show it at first.
    const lookups = digitalocean.requests.filter((r) => r.path.startsWith("/v2/droplets?tag_name=mcops-run%3A"));
    expect(lookups.length).toBeGreaterThan(1);
    expect(digitalocean.droplets()[0]?.tags).toContain("mcops-server:play_example_co_uk");
  });

  it("makes one droplet when the Worker restarts while DigitalOcean makes it (the create's answer never seen) and its list lags", async () => {
    const kept = mkdtempSync(join(tmpdir(), "mcops-worker-restart-"));
    const vars = workerVars({ app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET });
    await worker.close();
    worker = await startWorker(vars, { persistTo: kept });
    try {
      digitalocean.lagList({ requests: 4 });
      // The create is answered 3 s late: the Worker stops (a deploy, an eviction) before it sees the answer.
      digitalocean.inject({ kind: "delay", ms: 3000, route: "POST /v2/droplets" });
      const answer = await discord.command(`${worker.url}/interactions`, {
        name: "start",
        roles: [discord.roles.start],
      });
      const creates = () => digitalocean.requests.filter((r) => r.method === "POST" && r.path === "/v2/droplets");
      await waitUntil(() => creates().length === 1, "the create asked", 30_000);
      await worker.close();
      await waitUntil(() => digitalocean.droplets().length === 1, "DigitalOcean made the droplet", 30_000);
      let most = 1;
      const watch = setInterval(() => {
        most = Math.max(most, digitalocean.droplets().length);
      }, 10);
      try {
        worker = await startWorker(vars, { persistTo: kept });
        await waitUntil(() => /^Server is up at /.test(discord.reply(answer.token) ?? ""), "the last edit", 90_000);
      } finally {
        clearInterval(watch);
      }
      expect(digitalocean.droplets()).toHaveLength(1);
      expect(creates()).toHaveLength(1);
      expect(most).toBe(1);
    } finally {
      await worker.close();
      rmSync(kept, { recursive: true, force: true });
    }
  }, 180_000);

  it("gives up after six failed tries and says why, in the reply and in /status", async () => {
    // This server's snapshot gone; another server's is still there, and is not taken for this one's.
    for (const snapshot of digitalocean.snapshots().filter((s) => s.name.startsWith("mcops-play.example.co.uk-"))) {
      await fetch(`${digitalocean.url}/v2/snapshots/${snapshot.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${digitalocean.token}` },
      });
    }
    const answer = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    // Six tries are five waits (0.3 s doubling: 9.3 s) and six alarms of workerd's: a minute was not enough on a machine
    // with a load of 10 (a fresh clone's CI run).
    await waitUntil(() => /^Could not/.test(discord.reply(answer.token) ?? ""), "the run to give up", 150_000);
    expect(discord.reply(answer.token)).toBe(
      "Could not wake the server up: there is no snapshot of play.example.co.uk to revive from (6 tries).",
    );
    expect(digitalocean.droplets()).toEqual([]);
    expect((await discord.command(endpoint, { name: "status" })).body?.data?.content).toMatch(
      /^❔ No word from the VM yet/,
    );
  }, 180_000);

  it("carries on at the next alarm after a DigitalOcean error midway", async () => {
    // Four: the client tries a read 4 times (DigitalOcean's answers name no wait for a 500), then the step fails.
    digitalocean.inject({ kind: "status", status: 500, route: "GET /v2/droplets/:id", times: 4 });
    const answer = await discord.command(endpoint, { name: "start", roles: [discord.roles.admin] });
    // The error is one edit among several: it is looked for in every edit, since the next alarm's edit can replace it
    // before a look at the newest one comes round on a busy machine.
    const shown = () => discord.edits.some((e) => e.token === answer.token && /⚠️ .*500/.test(e.content));
    await waitUntil(shown, "the error shown", 60_000);
    await waitUntil(() => /^Server is up/.test(discord.reply(answer.token) ?? ""), "the end", 60_000);
    expect(digitalocean.droplets()).toHaveLength(1);
  });
});

describe("discord-control Worker: hibernation asked by the VM", () => {
  const runningVm = () => startedVm(digitalocean);

  it("refuses a heartbeat's signed body posted to /vm/hibernate: the signature covers the endpoint", async () => {
    await runningVm();
    // Signed for /vm/heartbeat (never sent there, so not a replay), with players online, posted to /vm/hibernate.
    const beat = JSON.stringify({ serverState: "running", players: ["Steve", "Alex"], online: 2 });
    const headers = await signVmRequest(SECRET, { method: "POST", path: "/vm/heartbeat", body: beat }, Date.now());
    const moved = await fetch(`${worker.url}/vm/hibernate`, { method: "POST", body: beat, headers });
    expect(moved.status).toBe(401);
    expect(await moved.json()).toEqual({ error: expect.stringMatching(/^bad signature/) });
    expect((await discord.command(endpoint, { name: "status" })).body?.data?.content).toMatch(/^❔ No word/);
    expect(digitalocean.requests.filter((r) => r.method === "POST" && r.path.includes("/actions"))).toEqual([]);
  });

  it("refuses a request dated more than 30 s ahead without moving the replay mark", async () => {
    const ahead = await fromVm("/vm/heartbeat", { serverState: "running", players: [] }, Date.now() + 299_000);
    expect(ahead).toMatchObject({ status: 401, body: { error: expect.stringMatching(/^dated ahead/) } });
    // The VM's real requests go on being taken.
    expect((await fromVm("/vm/heartbeat", { serverState: "running", players: [] })).status).toBe(200);
  });

  it("ignores the requests of the boot it hibernated: /status stays hibernated, /start revives", async () => {
    await runningVm();
    const boot = "0f6e6d1c-4b1e-4e57-9a8a-6f0d3f1b2c3d";
    await fromVm("/vm/heartbeat", { serverState: "running", players: [], bootId: boot });
    const stop = await discord.command(endpoint, { name: "stop", roles: [discord.roles.admin] });
    expect((await fromVm("/vm/hibernate", { players: 0, bootId: boot })).status).toBe(202);
    // The VM's last heartbeat, signed while it went to sleep, arrives once the droplet is destroyed.
    const late = Date.now() + 1;
    await waitUntil(() => /^💤 Hibernated in/.test(discord.reply(stop.token) ?? ""), "the hibernation's end", 60_000);
    const beat = await fromVm("/vm/heartbeat", { serverState: "running", players: [], bootId: boot }, late);
    expect(beat).toMatchObject({ status: 409, body: { error: expect.stringMatching(/boot was hibernated/) } });
    expect((await discord.command(endpoint, { name: "status" })).body?.data?.content).toMatch(/^💤 Hibernated since/);
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.type).toBe(5);
    // The revived VM is a new boot: its heartbeat is taken.
    const revived = await fromVm("/vm/heartbeat", { serverState: "offline", players: [], bootId: "a-new-boot" });
    expect(revived.status).toBe(200);
  });

  it("refuses a hibernate request with a bad, stale or replayed signature", async () => {
    await runningVm();
    expect((await fromVm("/vm/hibernate", { players: 0 }, Date.now(), "not the secret")).status).toBe(401);
    expect((await fromVm("/vm/hibernate", { players: 0 }, Date.now() - 6 * 60_000)).status).toBe(401);
    const first = await fromVm("/vm/heartbeat", { serverState: "offline", players: [] });
    const replay = await fetch(`${worker.url}/vm/hibernate`, {
      method: "POST",
      body: first.text,
      headers: first.headers,
    });
    expect(replay.status).toBe(401);
    expect(digitalocean.requests.filter((r) => r.method === "POST" && r.path.includes("/actions"))).toEqual([]);
  });

  it("snapshots, then destroys, keeps the newest snapshots, and /status says what it costs asleep", async () => {
    await runningVm();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const stop = await discord.command(endpoint, { name: "stop", roles: [discord.roles.admin] });
    expect((await fromVm("/vm/heartbeat", { serverState: "offline", players: [] })).body.hibernate).toEqual({
      force: false,
    });
    expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 202 });
    await waitUntil(() => /^💤 Hibernated in/.test(discord.reply(stop.token) ?? ""), "the hibernation's end", 60_000);
    expect(digitalocean.droplets()).toEqual([]);
    const snapshots = digitalocean.snapshots().map((s) => s.name);
    expect(snapshots).toHaveLength(3);
    expect(snapshots).toContain("mcops-play.example.co.uk-2026-11-20-0300");
    expect(snapshots).toContain("mcops-play2.example.co.uk-2026-11-20-0400");
    const edits = discord.edits
      .filter((e) => e.token === stop.token)
      .map((e) => e.content)
      .join("\n");
    expect(edits).toMatch(/✅ Shut mc down[\s\S]*✅ Snapshot mcops-\S+ taken \(\d+ GB\)[\s\S]*✅ Destroyed droplet mc/);
    // The destroy came after the snapshot was listed.
    const paths = digitalocean.requests.map((r) => `${r.method} ${r.path.replace(/\?.*/, "")}`);
    expect(paths.indexOf("GET /v2/snapshots")).toBeGreaterThan(-1);
    expect(paths.indexOf("GET /v2/snapshots")).toBeLessThan(paths.findIndex((p) => /^DELETE \/v2\/droplets/.test(p)));
    const status = (await discord.command(endpoint, { name: "status" })).body?.data?.content;
    expect(status).toMatch(
      /^💤 Hibernated since <t:\d+:R>\. Asleep it costs \$\d+\.\d\d a month \(\d+ GB snapshot\)\. Type \/start to wake it\.$/,
    );
  });

  it("remembers a hibernation whose droplet is destroyed though deleting older snapshots fails: not 'already up'", async () => {
    await worker.close();
    const vars = { KEEP_SNAPSHOTS: "1" };
    worker = await startWorker(
      workerVars({ app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET }, vars),
    );
    endpoint = `${worker.url}/interactions`;
    await runningVm();
    const boot = "5d1c1f9e-2a4d-4c55-8e0b-7d9f6a1e2b01";
    // The autopilot's heartbeat (the game still up), then the game stopped, backed up, and the request.
    await fromVm("/vm/heartbeat", { serverState: "running", players: [], bootId: boot });
    // DigitalOcean refuses to delete the older snapshot for longer than the run's tries.
    digitalocean.inject({ kind: "status", status: 500, route: "DELETE /v2/snapshots/:id", times: 20 });
    expect(await fromVm("/vm/hibernate", { players: 0, bootId: boot })).toMatchObject({ status: 202 });
    const status = async () => (await discord.command(endpoint, { name: "status" })).body?.data?.content ?? "";
    for (let i = 0; i < 600 && !/Could not hibernate|deleting older snapshots failed/.test(await status()); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(digitalocean.droplets()).toEqual([]);
    // The droplet is gone and its snapshot kept: the server is hibernated, whatever became of the older snapshot.
    expect(await status()).toMatch(/^💤 Hibernated since/);
    const start = await discord.command(endpoint, { name: "start", roles: [discord.roles.start] });
    expect(start.body?.type).toBe(5);
    await waitUntil(() => /^Server is up at /.test(discord.reply(start.token) ?? ""), "the revive's end", 60_000);
    expect(digitalocean.droplets()).toHaveLength(1);
  }, 120_000);

  it("hibernates when the Worker restarts while DigitalOcean takes the snapshot it asked for (its answer never seen)", async () => {
    await worker.close();
    await digitalocean.close();
    // A snapshot that takes a while, as a real one does (minutes): the droplet has it pending meanwhile.
    digitalocean = await startDigitalOceanStandIn({
      droplets: [],
      snapshots: [{ name: "mcops-play.example.co.uk-2026-11-20-0300", sizeGigabytes: 7, region: "fra1" }],
      timings: { createMs: 300, powerOnMs: 100, snapshotMs: 15_000 },
    });
    const kept = mkdtempSync(join(tmpdir(), "mcops-worker-restart-"));
    const vars = workerVars({ app: discord, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET });
    worker = await startWorker(vars, { persistTo: kept });
    try {
      await runningVm();
      await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
      // The shutdown and the snapshot are answered 2 s late: the Worker stops before it sees the snapshot's answer.
      digitalocean.inject({ kind: "delay", ms: 2000, route: "POST /v2/droplets/:id/actions", times: 2 });
      expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 202 });
      const asked = () =>
        digitalocean.requests.some(
          (r) => r.method === "POST" && (r.body as { type?: string } | undefined)?.type === "snapshot",
        );
      await waitUntil(asked, "the snapshot asked", 30_000);
      await worker.close();
      await waitUntil(() => digitalocean.actions().some((a) => a.type === "snapshot"), "the snapshot begun", 30_000);
      worker = await startWorker(vars, { persistTo: kept });
      endpoint = `${worker.url}/interactions`;
      const status = async () => (await discord.command(endpoint, { name: "status" })).body?.data?.content ?? "";
      for (let i = 0; i < 600 && !/^💤|Could not hibernate/.test(await status()); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await status()).toMatch(/^💤 Hibernated since/);
      expect(digitalocean.droplets()).toEqual([]);
      // The snapshot asked before the restart is the one kept: not a second one.
      expect(digitalocean.actions().filter((a) => a.type === "snapshot")).toHaveLength(1);
    } finally {
      await worker.close();
      rmSync(kept, { recursive: true, force: true });
    }
  }, 180_000);

  it("hibernates when DigitalOcean shuts the droplet down but answers the shutdown 500", async () => {
    await runningVm();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    digitalocean.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets/:id/actions" });
    expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 202 });
    const status = async () => (await discord.command(endpoint, { name: "status" })).body?.data?.content ?? "";
    for (let i = 0; i < 600 && !/^💤|Could not hibernate/.test(await status()); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await status()).toMatch(/^💤 Hibernated since/);
    expect(digitalocean.droplets()).toEqual([]);
  }, 120_000);

  it("aborts when a player is online before the shutdown: nothing undone, the droplet kept", async () => {
    await runningVm();
    await fromVm("/vm/heartbeat", { serverState: "running", players: [] });
    const stop = await discord.command(endpoint, { name: "stop", roles: [discord.roles.admin] });
    // Someone starts the game again from the panel and joins before the VM's request is acted on.
    const steve = await game.join("Steve");
    try {
      expect(await fromVm("/vm/hibernate", { players: 0 })).toMatchObject({ status: 202 });
      await waitUntil(() => /^Not hibernated/.test(discord.reply(stop.token) ?? ""), "the run's end", 60_000);
      expect(discord.reply(stop.token)).toBe(
        "Not hibernated: 1 player online before the shutdown: hibernation aborted, the droplet is kept.",
      );
      expect(digitalocean.droplets()).toHaveLength(1);
      expect(digitalocean.requests.filter((r) => r.method === "POST" && r.path.includes("/actions"))).toEqual([]);
    } finally {
      await steve.leave();
    }
  });
});
