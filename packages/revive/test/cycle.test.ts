import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dns, hibernate, OLD_IP, PANEL, PLAY, revive, startWorld, type World, waitFor } from "./harness.ts";

let world: World;
afterEach(() => world?.close());

function titles(): string[] {
  return world.discord.messages.map((m) => m.body.embeds[0].title);
}

function aRecords(): Array<[string, string, boolean]> {
  return world.cloudflare
    .records("example.co.uk")
    .filter((r) => r.type === "A")
    .map((r) => [r.name, r.content, r.proxied] as [string, string, boolean])
    .sort();
}

describe("hibernate → revive", () => {
  it("snapshots and destroys the VM, then brings it back with DNS repointed and the game answering", async () => {
    world = await startWorld();
    const [before] = world.digitalocean.droplets();
    expect(await hibernate(world.ctx(), { yes: true, runner: world.runner })).toBe(0);

    expect(world.panel.signals()).toEqual(["stop"]);
    expect(world.ssh).toEqual([
      [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        "ConnectTimeout=15",
        `root@${before?.networks.v4.find((n) => n.type === "public")?.ip_address}`,
        "/opt/mc-tools/backup",
      ],
    ]);
    expect(world.digitalocean.actions().map((a) => `${a.type}:${a.status}`)).toEqual([
      "shutdown:completed",
      "snapshot:completed",
      "destroy:completed",
    ]);
    expect(world.digitalocean.droplets()).toEqual([]);
    const [snapshot] = world.digitalocean.snapshots();
    // The server's identity (the play host) is in the snapshot's name.
    expect(snapshot?.name).toMatch(/^mcops-play\.example\.co\.uk-\d{4}-\d\d-\d\d-\d{4}$/);
    const printed = world.out.join("");
    expect(printed).toMatch(/Snapshot mcops-.* taken \(30 GB\)/);
    expect(printed).toContain(
      "costs $1.80/month hibernated (30 GB snapshot at $0.06/GB) instead of $24.00/month running",
    );
    expect(titles()).toEqual(["Server hibernated"]);

    // Hibernating again: nothing to do.
    world.out.length = 0;
    expect(await hibernate(world.ctx(), { yes: true, runner: world.runner })).toBe(0);
    expect(world.out.join("")).toMatch(/^Already hibernated: snapshot mcops-/);

    world.out.length = 0;
    expect(await revive(world.ctx())).toBe(0);
    const [after] = world.digitalocean.droplets();
    expect(after).toMatchObject({ name: "mc", size_slug: "s-2vcpu-4gb", status: "active", region: { slug: "fra1" } });
    // Its tags: hibernation's, the server's, and the run's own.
    const tags = after?.tags ?? [];
    expect(tags.filter((t) => !t.startsWith("mcops-run:")).sort()).toEqual([
      "mcops",
      "mcops-server:play_example_co_uk",
      "minecraft",
    ]);
    expect(tags.filter((t) => t.startsWith("mcops-run:"))).toEqual([expect.stringMatching(/^mcops-run:[0-9a-f]{16}$/)]);
    expect(after?.image.id).toBe(Number(snapshot?.id));
    const ip = after?.networks.v4.find((n) => n.type === "public")?.ip_address as string;
    expect(aRecords()).toEqual([
      [PANEL, ip, true],
      [PLAY, ip, false],
    ]);
    expect(world.panel.signals()).toEqual(["stop", "start"]);
    const steps = world.out.join("");
    for (const line of [
      /Created droplet mc \(s-2vcpu-4gb, fra1\) from mcops-.* \(\d+ ms\)/,
      /The panel answers/,
      /Started the game server/,
      /The game answers on 127\.0\.0\.1:\d+ \(/,
      /^Revived in /m,
    ]) {
      expect(steps).toMatch(line);
    }
    expect(titles()).toEqual(["Server hibernated", "Server revived"]);
  });

  it("says on stderr, in one line, when its message could not be posted (a deleted webhook)", async () => {
    world = await startWorld();
    world.discord.deleteWebhook(0);
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    expect(world.err.join("")).toMatch(
      /^\S+Z ERROR notification "Server hibernated" not sent: the webhook does not exist: .*\n$/,
    );
  });

  it("refuses while players are online, and touches nothing", async () => {
    world = await startWorld();
    const steve = await world.game.join("Steve");
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toMatchObject({
      exitCode: 75,
      message: "1 player is online: not hibernating",
    });
    expect(world.digitalocean.actions()).toEqual([]);
    expect(world.panel.signals()).toEqual([]);
    await steve.leave();
  });

  it("refuses when the game does not answer a ping and the panel says it runs, unless --force", async () => {
    world = await startWorld({ GAME_ADDRESS: "127.0.0.1:1" });
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toMatchObject({
      exitCode: 75,
      message: expect.stringMatching(/^nobody can tell who plays: the game does not answer a ping/),
      hint: expect.stringContaining("--force"),
    });
    expect(world.digitalocean.actions()).toEqual([]);
    expect(world.panel.signals()).toEqual([]);
    expect(world.ssh).toEqual([]);
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner, force: true })).resolves.toBe(0);
    expect(world.out.join("")).toMatch(/The game does not answer a ping .*; going on because of --force/);
  });

  it.each([Number.NaN, -1, 0, 1.5])("refuses --keep %s before anything, so no snapshot is lost to it", async (keep) => {
    world = await startWorld({}, { snapshots: [{ name: "mcops-2026-01-01-0000", createdAt: "2026-01-01T00:00:00Z" }] });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true, keep })).rejects.toMatchObject({
      exitCode: 2,
      message: `--keep ${keep} is not a number of snapshots to keep`,
    });
    expect(world.digitalocean.actions()).toEqual([]);
    expect(world.digitalocean.snapshots()).toHaveLength(1);
  });

  it("a failed last backup stops everything before the shutdown", async () => {
    world = await startWorld();
    world.sshExit = 1;
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toThrow(
      /^the last backup on the VM failed \(ssh exit 1\): backup: restic failed$/,
    );
    expect(world.digitalocean.actions()).toEqual([]);
    expect(world.digitalocean.droplets()[0]?.status).toBe("active");
  });

  it("powers off when the clean shutdown fails; a shutdown still pending stops it with what to do", async () => {
    world = await startWorld();
    world.digitalocean.inject({ kind: "action-errors", actionType: "shutdown" });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).resolves.toBe(0);
    expect(world.out.join("")).toMatch(/Powered mc off \(the clean shutdown failed\)/);
    await world.close();

    world = await startWorld();
    world.digitalocean.inject({ kind: "action-hangs", actionType: "shutdown" });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toMatchObject({
      message: "mc is still shutting down (DigitalOcean has the shutdown pending)",
      hint: "nothing was destroyed; run hibernate again in a few minutes: it carries on",
    });
    // Run again while the shutdown is still pending: the same plain answer, nothing else done.
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toThrow(/still shutting down/);
    expect(world.digitalocean.droplets()).toHaveLength(1);
  });

  it("after a shutdown that hung, a re-run waits for that shutdown and powers off, without stopping or backing up again", async () => {
    world = await startWorld();
    world.digitalocean.inject({ kind: "action-hangs", actionType: "shutdown" });
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toThrow(/still shutting down/);
    expect(world.ssh).toHaveLength(1);
    expect(world.panel.signals()).toEqual(["stop"]);
    // DigitalOcean gives up on the shutdown in the end; the droplet is still active.
    const shutdown = world.digitalocean.actions().find((a) => a.type === "shutdown");
    world.digitalocean.settleAction(shutdown?.id ?? 0, "errored");
    expect(world.digitalocean.droplets()[0]?.status).toBe("active");

    expect(await hibernate(world.ctx(), { yes: true, runner: world.runner })).toBe(0);
    expect(world.ssh).toHaveLength(1);
    expect(world.panel.signals()).toEqual(["stop"]);
    expect(world.digitalocean.actions().map((a) => a.type)).toEqual(["shutdown", "power_off", "snapshot", "destroy"]);
    expect(world.out.join("")).toMatch(
      /Carrying on with the shutdown asked for at .*\n[\s\S]*Powered mc off \(the clean shutdown failed\)/,
    );
    expect(world.digitalocean.droplets()).toEqual([]);
  });

  it("runs the last backup and shuts the VM down only once the panel says offline (the panel's real timing)", async () => {
    // Once told to stop, the server stays "stopping" (a large world saving) until the test says otherwise.
    world = await startWorld({}, {}, {}, { timings: { startMs: 50, stopMs: 600_000 } });
    expect(world.panel.timing.powerDelayMs).toBeGreaterThan(0);
    const run = hibernate(world.ctx(), { yes: true, runner: world.runner });
    // The tool has looked at least twice since the server began stopping, and waits.
    await world.panel.waitForPolls("stopping", 2);
    expect(world.ssh).toEqual([]);
    expect(world.digitalocean.actions()).toEqual([]);
    world.panel.setState("offline");
    expect(await run).toBe(0);
    expect(world.ssh).toHaveLength(1);
    expect(world.digitalocean.actions().map((a) => a.type)).toEqual(["shutdown", "snapshot", "destroy"]);
  });

  it("knows it is hibernated when a run was stopped between destroying the droplet and noting the snapshot", async () => {
    world = await startWorld();
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    const file = join(world.dir.path, ".mcops-state.json");
    const state = JSON.parse(readFileSync(file, "utf8"));
    const [snapshot] = world.digitalocean.snapshots();
    // As the state was just before the destroy: the snapshot asked for, not yet noted as kept.
    state.snapshot = { dropletId: Number(snapshot?.resource_id), name: snapshot?.name, actionId: 1 };
    delete state.snapshotId;
    writeFileSync(file, JSON.stringify(state));
    world.out.length = 0;
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    expect(world.out.join("")).toContain(`Already hibernated: snapshot ${snapshot?.name}`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ snapshotId: snapshot?.id });
    expect(await revive(world.ctx())).toBe(0);
  });

  it("keeps the droplet when the snapshot fails, and takes a new one on the next run", async () => {
    world = await startWorld();
    world.digitalocean.inject({ kind: "action-errors", actionType: "snapshot" });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toMatchObject({
      message: expect.stringMatching(/^the snapshot mcops-.* failed$/),
      hint: "the droplet mc was kept (powered off): run hibernate again to take a new snapshot, or power it on from the control panel",
    });
    expect(world.digitalocean.droplets()).toHaveLength(1);
    expect(world.digitalocean.snapshots()).toEqual([]);
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    expect(world.digitalocean.droplets()).toEqual([]);
    expect(world.digitalocean.snapshots()).toHaveLength(1);
  });

  it("keeps the droplet when the snapshot never completes, and waits for the same snapshot when run again", async () => {
    world = await startWorld();
    world.digitalocean.inject({ kind: "action-hangs", actionType: "snapshot" });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toThrow(
      /^the snapshot mcops-.* did not finish in 2\.0 s$/,
    );
    expect(world.digitalocean.droplets()).toHaveLength(1);
    const state = JSON.parse(readFileSync(join(world.dir.path, ".mcops-state.json"), "utf8"));
    expect(state.snapshot.actionId).toBeGreaterThan(0);
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toThrow(/did not finish/);
    expect(world.digitalocean.actions().filter((a) => a.type === "snapshot")).toHaveLength(1);
    expect(world.digitalocean.droplets()).toHaveLength(1);
  });

  it("keeps the newest snapshots only (KEEP_SNAPSHOTS), and never others", async () => {
    world = await startWorld(
      { KEEP_SNAPSHOTS: "2" },
      {
        snapshots: [
          { name: "mcops-play.example.co.uk-2026-01-01-0000", createdAt: "2026-01-01T00:00:00Z" },
          { name: "mcops-play.example.co.uk-2026-02-01-0000", createdAt: "2026-02-01T00:00:00Z" },
          { name: "keep-me", createdAt: "2025-01-01T00:00:00Z" },
          // The earlier naming, of a droplet this server does not know: another's (a test droplet's) world.
          { name: "mcops-2025-06-01-0000", createdAt: "2025-06-01T00:00:00Z" },
          // Another server's, on the same account.
          { name: "mcops-play2.example.co.uk-2025-01-01-0000", createdAt: "2025-01-01T00:00:00Z" },
        ],
      },
    );
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    const names = world.digitalocean
      .snapshots()
      .map((s) => s.name)
      .sort();
    const taken = names.filter(
      (n) => /^mcops-play\.example\.co\.uk-20\d\d-\d\d-\d\d-\d{4}$/.test(n) && !n.includes("-2026-0"),
    );
    expect(taken).toHaveLength(1);
    expect(names.filter((n) => !taken.includes(n))).toEqual([
      "keep-me",
      "mcops-2025-06-01-0000",
      "mcops-play.example.co.uk-2026-02-01-0000",
      "mcops-play2.example.co.uk-2025-01-01-0000",
    ]);
    expect(world.out.join("")).toMatch(
      /Deleted 1 older snapshot \(keeping 2\): mcops-play\.example\.co\.uk-2026-01-01-0000 \(/,
    );
  });

  it("prunes a snapshot of the earlier naming (mcops-<date>) taken of this server's droplet, and no other", async () => {
    world = await startWorld({ KEEP_SNAPSHOTS: "1" }, { snapshots: [{ name: "mcops-2025-06-01-0000" }] });
    const [droplet] = world.digitalocean.droplets();
    // A snapshot an earlier version took of this very droplet.
    const asked = await fetch(`${world.digitalocean.url}/v2/droplets/${droplet?.id}/actions`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.digitalocean.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "snapshot", name: "mcops-2026-01-01-0000" }),
    });
    expect(asked.status).toBe(201);
    await waitFor(() => world.digitalocean.snapshots().some((s) => s.name === "mcops-2026-01-01-0000"));
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    const names = world.digitalocean.snapshots().map((s) => s.name);
    expect(names).toHaveLength(2);
    expect(names[0]).toBe("mcops-2025-06-01-0000");
    expect(names[1]).toMatch(/^mcops-play\.example\.co\.uk-/);
    expect(world.out.join("")).toMatch(/Deleted 1 older snapshot \(keeping 1\): mcops-2026-01-01-0000 \(/);
  });

  it("powers on a droplet that is there but off, instead of creating another", async () => {
    world = await startWorld();
    const [droplet] = world.digitalocean.droplets();
    world.digitalocean.inject({ kind: "action-errors", actionType: "snapshot" });
    await expect(hibernate(world.ctx(), { yes: true, skipBackup: true })).rejects.toThrow(/snapshot .* failed/);
    expect(world.digitalocean.droplets()[0]?.status).toBe("off");
    expect(await revive(world.ctx())).toBe(0);
    expect(world.digitalocean.droplets().map((d) => [d.id, d.status])).toEqual([[droplet?.id, "active"]]);
    expect(world.out.join("")).toMatch(/Powered mc on/);
  });

  it("waits out DigitalOcean's and Cloudflare's 429 and carries on", async () => {
    world = await startWorld();
    world.digitalocean.inject({ kind: "rate-limit", retryAfterSeconds: 1, route: "GET /v2/droplets" });
    world.cloudflare.inject({ kind: "rate-limit", retryAfterSeconds: 1, route: "zones" });
    const started = Date.now();
    await dns(world.ctx(), {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(world.digitalocean.requests.map((r) => r.status)).toContain(429);
    expect(world.cloudflare.requests.map((r) => r.status)).toContain(429);
    expect(world.cloudflare.writes()).toHaveLength(2);
  });

  it("says in one line which field of which route changed when a vendor answers another shape", async () => {
    world = await startWorld();
    const [droplet] = world.digitalocean.droplets();
    const renamed = { droplets: [{ ...droplet, networks: { ipv4: [] } }], links: {}, meta: { total: 1 } };
    world.digitalocean.inject({ kind: "status", status: 200, body: renamed, route: "GET /v2/droplets" });
    await expect(dns(world.ctx(), {})).rejects.toMatchObject({
      message:
        "DigitalOcean answered GET /droplets?tag_name=mcops-server%3Aplay_example_co_uk&page=1&per_page=200 in an unexpected shape: droplets.0.networks.v4: expected array, got missing",
    });
    const zones = { success: true, errors: [], messages: [], result: [{ id: 7, name: "example.co.uk" }] };
    world.cloudflare.inject({ kind: "status", status: 200, body: zones, route: "zones" });
    await expect(dns(world.ctx(), { ip: "203.0.113.9" })).rejects.toMatchObject({
      message:
        "Cloudflare answered GET /zones?name=example.co.uk in an unexpected shape: result.0.id: expected string, got number 7",
    });
    expect(world.cloudflare.writes()).toEqual([]);
  });

  it("stops when DigitalOcean refuses the token, with what to do", async () => {
    world = await startWorld();
    world.digitalocean.revokeToken();
    await expect(hibernate(world.ctx(), { yes: true })).rejects.toMatchObject({
      message: "DigitalOcean refused the token (401 unauthorized: Unable to authenticate you)",
      where: "DIGITALOCEAN_ACCESS_TOKEN",
    });
    await expect(revive(world.ctx())).rejects.toThrow(/DigitalOcean refused the token/);
  });
});

describe("revive dns", () => {
  it("writes only what differs: the panel proxied, the play name DNS only", async () => {
    world = await startWorld();
    await dns(world.ctx(), { ip: OLD_IP });
    expect(world.out.join("")).toBe(
      `DNS already right, nothing written:\n  ${PANEL} (panel): ${OLD_IP} (proxied), already right\n  ${PLAY} (play): ${OLD_IP} (DNS only), already right\n`,
    );
    expect(world.cloudflare.writes()).toEqual([]);

    world.out.length = 0;
    await dns(world.ctx(), { ip: "203.0.113.9", dryRun: true });
    expect(world.out.join("")).toContain(`${PLAY} (play): ${OLD_IP} (DNS only) → 203.0.113.9 (DNS only)`);
    expect(world.cloudflare.writes()).toEqual([]);

    await dns(world.ctx(), {});
    const ip = world.digitalocean.droplets()[0]?.networks.v4.find((n) => n.type === "public")?.ip_address;
    expect(aRecords()).toEqual([
      [PANEL, ip, true],
      [PLAY, ip, false],
    ]);
    expect(world.cloudflare.writes()).toHaveLength(2);
  });

  it("removes a second A record left on an old address, then has nothing to write", async () => {
    world = await startWorld();
    const zone = world.cloudflare.zones()[0]?.id;
    const added = await fetch(`${world.cloudflare.url}/client/v4/zones/${zone}/dns_records`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.cloudflare.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "A", name: PLAY, content: "198.51.100.99", proxied: false, ttl: 1 }),
    });
    expect(added.status).toBe(200);
    world.cloudflare.reset();
    await dns(world.ctx(), { ip: "203.0.113.9" });
    expect(aRecords().filter(([name]) => name === PLAY)).toEqual([[PLAY, "203.0.113.9", false]]);
    expect(world.out.join("")).toMatch(
      /DNS updated \(3 records\)[\s\S]*other A record removed: 198\.51\.100\.99 \(DNS only\)/,
    );
    world.out.length = 0;
    world.cloudflare.reset();
    await dns(world.ctx(), { ip: "203.0.113.9" });
    expect(world.out.join("")).toMatch(/^DNS already right, nothing written/);
    expect(world.cloudflare.writes()).toEqual([]);
  });

  it("takes a 200 whose envelope says success: false as the failure it is", async () => {
    world = await startWorld();
    const body = {
      success: false,
      errors: [{ code: 81057, message: "Record already exists." }],
      messages: [],
      result: null,
    };
    world.cloudflare.inject({ kind: "status", status: 200, body, route: "dns_write" });
    await expect(dns(world.ctx(), { ip: "203.0.113.9" })).rejects.toMatchObject({
      message: "Cloudflare answered 200: 81057 Record already exists.",
    });
  });

  it("takes an address that is not IPv4 as a usage error", async () => {
    world = await startWorld();
    await expect(dns(world.ctx(), { ip: "999.1.1.1" })).rejects.toMatchObject({ exitCode: 2 });
    expect(world.cloudflare.writes()).toEqual([]);
  });

  it("creates missing records in the zone of a public suffix (example.co.uk)", async () => {
    world = await startWorld({ SERVER_ADDR: "mc.example.co.uk", PANEL_URL: "https://games.example.co.uk" });
    await dns(world.ctx(), { ip: "203.0.113.9" });
    expect(aRecords()).toEqual(
      [
        ["games.example.co.uk", "203.0.113.9", true],
        ["mc.example.co.uk", "203.0.113.9", false],
        [PANEL, OLD_IP, true],
        [PLAY, OLD_IP, false],
      ].sort() as Array<[string, string, boolean]>,
    );
  });

  it("works with an account-owned token, which /user/tokens/verify refuses, verifying it on its account", async () => {
    world = await startWorld({}, {}, { tokenOwner: "account" });
    await dns(world.ctx(), { ip: "203.0.113.9" });
    expect(aRecords()).toEqual([
      [PANEL, "203.0.113.9", true],
      [PLAY, "203.0.113.9", false],
    ]);
    const verifies = world.cloudflare.requests.filter((r) => r.route === "verify");
    expect(verifies.map((r) => [r.path.replace(/[0-9a-f]{32}/, "<account>"), r.status])).toEqual([
      ["/client/v4/user/tokens/verify", 401],
      ["/client/v4/accounts/<account>/tokens/verify", 200],
    ]);
  });

  it("stops before any change when an account-owned token is expired or unknown, in one line", async () => {
    world = await startWorld({}, {}, { tokenOwner: "account" });
    world.cloudflare.setTokenStatus("expired");
    await expect(dns(world.ctx(), { ip: "203.0.113.9" })).rejects.toMatchObject({
      message: expect.stringMatching(/^Cloudflare refused the token as a user token and as an account token \(/),
      where: "CLOUDFLARE_API_TOKEN",
    });
    expect(world.cloudflare.writes()).toEqual([]);
  });

  it("says clearly when the token is expired or may not edit the zone, and writes nothing", async () => {
    world = await startWorld();
    world.cloudflare.setTokenStatus("expired");
    await expect(dns(world.ctx(), { ip: "203.0.113.9" })).rejects.toMatchObject({
      message: expect.stringMatching(/^the Cloudflare token is expired/),
      where: "CLOUDFLARE_API_TOKEN",
    });
    world.cloudflare.setTokenStatus("active");
    world.cloudflare.inject({ kind: "status", status: 403, route: "dns_write" });
    await expect(dns(world.ctx(), { ip: "203.0.113.9" })).rejects.toMatchObject({
      message: expect.stringMatching(
        /^the Cloudflare token may not change this zone's DNS \(403: 10000 Authentication error\)/,
      ),
    });
    expect(world.cloudflare.writes()).toEqual([]);
    expect(existsSync(join(world.dir.path, ".mcops-state.json"))).toBe(false);
  });
});
