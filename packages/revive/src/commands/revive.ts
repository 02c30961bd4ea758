import { ExitCode, JobError, UsageError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, createPanelClient } from "@mcops/core/http";
import { parseGameAddress, pingGame } from "@mcops/game-log/game-ping";
import { createCloudflare, dnsNames, syncDns } from "../cloud/cloudflare.ts";
import { createDigitalOcean, type DigitalOcean, type Droplet, publicIpv4 } from "../cloud/digitalocean.ts";
import { findDroplet, mcopsSnapshots } from "../cloud/snapshots.ts";
import {
  type LocalContext,
  type LocalState,
  loadEnv,
  localNotifier,
  pollMs,
  readLocalState,
  type Steps,
  steps,
  timeouts,
  writeLocalState,
} from "../local.ts";
import { VM_FIELDS } from "../settings.ts";
import { describeChanges } from "./dns.ts";

export interface ReviveOptions {
  size?: string | undefined;
  region?: string | undefined;
  /** SSH key ids or fingerprints; default every key on the account. */
  sshKeys?: string[] | undefined;
  /** How long to wait for the panel and the game (default 10 minutes). */
  waitMs?: number | undefined;
}

const FIELDS = [...VM_FIELDS, "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_URL"] as const;
type ReviveEnv = ReturnType<typeof loadEnv<(typeof FIELDS)[number]>>;

/** One run: the context, the .env's fields, DigitalOcean, how long to wait for the panel and the game, the timings. */
interface Revival {
  ctx: LocalContext;
  env: ReviveEnv;
  digitalocean: DigitalOcean;
  waitMs: number;
  step: Steps;
}

/**
 * Brings the VM back from the newest mcops snapshot with the size, region and tags hibernate remembered (overridable),
 * waits until it runs with an IPv4 address, repoints DNS, waits for the panel, starts the game server and waits until
 * the game answers a Server List Ping, printing how long each step took. Re-run after an interruption, it carries on:
 * a droplet already there is not created again.
 */
export async function runRevive(ctx: LocalContext, options: ReviveOptions = {}): Promise<number> {
  const env = loadEnv(ctx, FIELDS);
  const names = dnsNames(env.SERVER_ADDR, env.PANEL_URL);
  const digitalocean = createDigitalOcean({
    base: env.DIGITALOCEAN_API_URL,
    token: env.DIGITALOCEAN_ACCESS_TOKEN,
    clock: ctx.clock,
  });
  const cf = createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: ctx.clock });
  const run: Revival = { ctx, env, digitalocean, waitMs: options.waitMs ?? 10 * 60_000, step: steps(ctx) };
  await digitalocean.verify();
  await cf.verify((names[0] as (typeof names)[number]).zone);
  const state = readLocalState(ctx);

  const droplet = (await existingDroplet(run)) ?? (await createDroplet(run, state, options));
  const ip = await waitActive(run, droplet.id);
  const changes = await syncDns(cf, names, ip, false);
  run.step.done(`DNS points at ${ip}:\n${describeChanges(changes)}`);
  if (env.SERVER_ID) await startServer(run, env.SERVER_ID);
  await waitForGame(run, ip);
  await report(run, ip);
  return ExitCode.ok;
}

/** The game VM when it is still there (an earlier run, or a hibernate that kept it), powered on if it was off. */
async function existingDroplet({ ctx, digitalocean, env, step }: Revival): Promise<Droplet | undefined> {
  const droplet = await findDroplet(digitalocean, env);
  if (!droplet) return undefined;
  step.note(`Droplet ${droplet.name} is already there (${droplet.status}): not creating another`);
  if (droplet.status === "off") {
    const on = await digitalocean.action(droplet.id, "power_on");
    const done = await digitalocean.waitAction(on.id, timeouts(ctx).activeMs, pollMs(ctx));
    if (done.status !== "completed") {
      throw new JobError(`droplet ${droplet.name} did not power on (${done.status})`, {
        hint: "power it on in the DigitalOcean control panel, then run revive again",
      });
    }
    step.done(`Powered ${droplet.name} on`);
  }
  return droplet;
}

/** A new droplet from the newest mcops snapshot, as hibernate remembered it (or as the options say); noted in the state. */
async function createDroplet(
  { ctx, digitalocean, env, step }: Revival,
  state: LocalState,
  options: ReviveOptions,
): Promise<Droplet> {
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
  const droplet = await digitalocean.createDroplet({
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
  return droplet;
}

/** Waits until the droplet is active with a public IPv4 address; that address. */
async function waitActive({ ctx, digitalocean, step }: Revival, id: number): Promise<string> {
  const droplet = await digitalocean.waitDroplet(
    id,
    (d) => d.status === "active" && !!publicIpv4(d),
    timeouts(ctx).activeMs,
    pollMs(ctx),
    "active with an IPv4 address",
  );
  const ip = publicIpv4(droplet) as string;
  step.done(`Droplet ${droplet.name} is active at ${ip}`);
  return ip;
}

/** Waits until the panel answers, then starts the game server when it is offline. */
async function startServer({ ctx, env, waitMs, step }: Revival, serverId: string): Promise<void> {
  const url = env.CONTROL_URL ?? env.PANEL_URL;
  const panel = createPanelClient({ url, key: env.CONTROL_KEY, serverId, clock: ctx.clock, maxAttempts: 1 });
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
        where: url,
        hint: "the VM runs and DNS is set; look at the panel's web server and Wings, then run revive again",
      });
    }
    await ctx.clock.sleep(pollMs(ctx));
  }
  step.done("The panel answers");
  if (state === "offline") {
    await panel.power("start");
    await panel.waitForState("running", { timeoutMs: waitMs });
    step.done("Started the game server");
  }
}

/** The game's address on the new VM: GAME_ADDRESS, else the new address with SERVER_ADDR's port. */
function gameAddress(env: ReviveEnv, ip: string): string {
  // The new address itself, not the name: a resolver may still hand out the destroyed droplet's for a few minutes.
  return env.GAME_ADDRESS ?? `${ip}:${parseGameAddress(env.SERVER_ADDR).port}`;
}

/** Waits until the game answers a Server List Ping on the new VM. */
async function waitForGame({ ctx, env, waitMs, step }: Revival, ip: string): Promise<void> {
  const address = gameAddress(env, ip);
  const deadline = ctx.clock.now() + waitMs;
  for (;;) {
    const { ping } = await pingGame(address, 3000, 1);
    if (ping) break;
    if (ctx.clock.now() >= deadline) {
      throw new JobError(`the game did not answer on ${address} within ${formatDuration(waitMs)}`, {
        hint: "look at the panel console, and at the VM's firewall for the game port",
      });
    }
    await ctx.clock.sleep(pollMs(ctx));
  }
  step.done(`The game answers on ${address}`);
}

/** The last line, and the webhook's message when .env names one. */
async function report({ ctx, env, step }: Revival, ip: string): Promise<void> {
  step.note(`Revived in ${step.total()}.`);
  await localNotifier(ctx, env)?.send({
    title: "Server revived",
    description: `The VM is back at ${ip} and the game answers on ${env.SERVER_ADDR} (${step.total()}).`,
    colour: COLOURS.success,
    category: "start",
  });
}
