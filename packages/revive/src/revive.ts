import { JobError, UsageError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, createPanelClient } from "@mcops/core/http";
import { parseGameAddress, pingGame } from "@mcops/game-log/game-ping";
import { createDigitalOcean, type Droplet, publicIpv4 } from "./digitalocean.ts";
import { createCloudflare, type DnsChange, dnsNames, syncDns } from "./dns.ts";
import { mcopsSnapshots } from "./hibernate.ts";
import {
  findDroplet,
  type LocalContext,
  loadEnv,
  localNotifier,
  readLocalState,
  steps,
  timeouts,
  VM_FIELDS,
  writeLocalState,
} from "./local.ts";

export interface ReviveOptions {
  size?: string | undefined;
  region?: string | undefined;
  /** SSH key ids or fingerprints; default every key on the account. */
  sshKeys?: string[] | undefined;
  /** How long to wait for the panel and the game (default 10 minutes). */
  waitMs?: number | undefined;
}

export interface DnsOptions {
  ip?: string | undefined;
  dryRun?: boolean | undefined;
}

function describeChanges(changes: DnsChange[]): string {
  return changes
    .map((c) => {
      const line =
        c.change === "none"
          ? `  ${c.name} (${c.role}): ${c.after}, already right`
          : `  ${c.name} (${c.role}): ${c.before} → ${c.after}${c.change === "create" ? " (new record)" : ""}`;
      return c.removed.length
        ? `${line}; other A record${c.removed.length === 1 ? "" : "s"} removed: ${c.removed.join(", ")}`
        : line;
    })
    .join("\n");
}

/** Records written (updated or created) and removed. */
function dnsWrites(changes: DnsChange[]): number {
  return changes.reduce((n, c) => n + (c.change === "none" ? 0 : 1) + c.removed.length, 0);
}

/** `revive dns`: point the panel name (proxied) and the play name (DNS only) at the VM, or at `--ip`. */
export async function runDns(ctx: LocalContext, options: DnsOptions): Promise<number> {
  const env = loadEnv(ctx, ["CLOUDFLARE_API_TOKEN", "SERVER_ADDR", "PANEL_URL", "CLOUDFLARE_API_URL"]);
  const names = dnsNames(env.SERVER_ADDR, env.PANEL_URL);
  let ip = options.ip;
  if (!ip) {
    const more = loadEnv(ctx, ["DIGITALOCEAN_ACCESS_TOKEN", "DROPLET_NAME", "DROPLET_TAG", "DIGITALOCEAN_API_URL"]);
    const digitalocean = createDigitalOcean({
      base: more.DIGITALOCEAN_API_URL,
      token: more.DIGITALOCEAN_ACCESS_TOKEN,
      clock: ctx.clock,
    });
    const droplet = await findDroplet(digitalocean, more);
    ip = droplet && publicIpv4(droplet);
    if (!ip) {
      throw new UsageError("there is no running droplet to take the address from", {
        hint: "give it by hand: revive dns --ip 203.0.113.7 (or revive, to bring the VM back)",
      });
    }
  }
  const cf = createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: ctx.clock });
  const changes = await syncDns(cf, names, ip, options.dryRun ?? false);
  const writes = dnsWrites(changes);
  ctx.stdout.write(
    `${options.dryRun ? "DNS plan (nothing changed, --dry-run)" : writes ? `DNS updated (${writes} record${writes === 1 ? "" : "s"})` : "DNS already right, nothing written"}:\n${describeChanges(changes)}\n`,
  );
  return 0;
}

/**
 * Brings the VM back from the newest mcops snapshot with the size, region and tags hibernate remembered (overridable),
 * waits until it runs with an IPv4 address, repoints DNS, waits for the panel, starts the game server and waits until
 * the game answers a Server List Ping, printing how long each step took. Re-run after an interruption, it carries on:
 * a droplet already there is not created again.
 */
export async function runRevive(ctx: LocalContext, options: ReviveOptions = {}): Promise<number> {
  const env = loadEnv(ctx, [...VM_FIELDS, "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_URL"]);
  const names = dnsNames(env.SERVER_ADDR, env.PANEL_URL);
  const pollMs = ctx.pollMs ?? 5000;
  const waitMs = options.waitMs ?? 10 * 60_000;
  const digitalocean = createDigitalOcean({
    base: env.DIGITALOCEAN_API_URL,
    token: env.DIGITALOCEAN_ACCESS_TOKEN,
    clock: ctx.clock,
  });
  const cf = createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: ctx.clock });
  const step = steps(ctx);
  await digitalocean.verify();
  await cf.verify((names[0] as (typeof names)[number]).zone);
  const state = readLocalState(ctx);

  let droplet: Droplet | undefined = await findDroplet(digitalocean, env);
  if (droplet) {
    step.note(`Droplet ${droplet.name} is already there (${droplet.status}): not creating another`);
    if (droplet.status === "off") {
      const on = await digitalocean.action(droplet.id, "power_on");
      const done = await digitalocean.waitAction(on.id, timeouts(ctx).activeMs, pollMs);
      if (done.status !== "completed") {
        throw new JobError(`droplet ${droplet.name} did not power on (${done.status})`, {
          hint: "power it on in the DigitalOcean control panel, then run revive again",
        });
      }
      step.done(`Powered ${droplet.name} on`);
    }
  } else {
    const snapshot = mcopsSnapshots(await digitalocean.snapshots())[0];
    if (!snapshot) {
      throw new JobError("there is no mcops snapshot to revive from", {
        hint: "hibernate makes one; the snapshots are under Images → Snapshots in the DigitalOcean control panel",
      });
    }
    const remembered = state.droplet;
    const size = options.size ?? remembered?.size;
    const region = options.region ?? remembered?.region ?? snapshot.regions[0];
    if (!size || !region) {
      throw new UsageError("which droplet size (and region)? hibernate's state file is missing", {
        hint: "e.g. revive --size s-2vcpu-4gb --region fra1 (docs/system.md 1: s-2vcpu-4gb is the recommended size)",
      });
    }
    const tags = [...new Set([...(remembered?.tags ?? []), env.DROPLET_TAG ?? "mcops"])];
    const sshKeys = options.sshKeys?.length ? options.sshKeys : await digitalocean.sshKeyIds();
    droplet = await digitalocean.createDroplet({
      name: env.DROPLET_NAME ?? remembered?.name ?? "mcops",
      region,
      size,
      image: Number(snapshot.id),
      ssh_keys: sshKeys,
      tags,
    });
    state.droplet = { id: droplet.id, name: droplet.name, size, region, tags, priceMonthly: remembered?.priceMonthly };
    writeLocalState(ctx, state);
    step.done(`Created droplet ${droplet.name} (${size}, ${region}) from ${snapshot.name}`);
  }
  const id = droplet.id;
  droplet = await digitalocean.waitDroplet(
    id,
    (d) => d.status === "active" && !!publicIpv4(d),
    timeouts(ctx).activeMs,
    pollMs,
    "active with an IPv4 address",
  );
  const ip = publicIpv4(droplet) as string;
  step.done(`Droplet ${droplet.name} is active at ${ip}`);

  const changes = await syncDns(cf, names, ip, false);
  step.done(`DNS points at ${ip}:\n${describeChanges(changes)}`);

  if (env.SERVER_ID) {
    const panel = createPanelClient({
      url: env.CONTROL_URL ?? env.PANEL_URL,
      key: env.CONTROL_KEY,
      serverId: env.SERVER_ID,
      clock: ctx.clock,
      maxAttempts: 1,
    });
    const deadline = ctx.clock.now() + waitMs;
    let state: string | undefined;
    while (state === undefined) {
      state = await panel.resources().then(
        (r) => r.state,
        () => undefined,
      );
      if (state !== undefined) break;
      if (ctx.clock.now() >= deadline) {
        throw new JobError(`the panel did not answer within ${formatDuration(waitMs)}`, {
          where: env.CONTROL_URL ?? env.PANEL_URL,
          hint: "the VM runs and DNS is set; look at the panel's web server and Wings, then run revive again",
        });
      }
      await ctx.clock.sleep(pollMs);
    }
    step.done("The panel answers");
    if (state === "offline") {
      await panel.power("start");
      await panel.waitForState("running", { timeoutMs: waitMs });
      step.done("Started the game server");
    }
  }

  // The new address itself, not the name: a resolver may still hand out the destroyed droplet's for a few minutes.
  const address = env.GAME_ADDRESS ?? `${ip}:${parseGameAddress(env.SERVER_ADDR).port}`;
  const deadline = ctx.clock.now() + waitMs;
  for (;;) {
    const { ping } = await pingGame(address, 3000, 1);
    if (ping) break;
    if (ctx.clock.now() >= deadline) {
      throw new JobError(`the game did not answer on ${address} within ${formatDuration(waitMs)}`, {
        hint: "look at the panel console, and at the VM's firewall for the game port",
      });
    }
    await ctx.clock.sleep(pollMs);
  }
  step.done(`The game answers on ${address}`);
  step.note(`Revived in ${step.total()}.`);
  await localNotifier(ctx, env)?.send({
    title: "Server revived",
    description: `The VM is back at ${ip} and the game answers on ${env.SERVER_ADDR} (${step.total()}).`,
    colour: COLOURS.success,
    category: "start",
  });
  return 0;
}
