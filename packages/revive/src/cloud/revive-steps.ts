import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { type Cloudflare, type DnsChange, dnsNames, syncDns } from "./cloudflare.ts";
import { type DigitalOcean, type Droplet, publicIpv4 } from "./digitalocean.ts";
import { findDroplet, mcopsSnapshots } from "./snapshots.ts";

/**
 * Revive as steps (issue 19): the same steps for `revive` on the operator's computer and for the Worker's Durable
 * Object, which cannot wait minutes in one call. Each call of `reviveStep` does one bounded piece of work and says how
 * long to wait before the next; the run's state goes in and comes out (JSON, stored by the caller), so a run stopped
 * anywhere — a crash, a DigitalOcean error, a Worker evicted — carries on from its state. Every step is idempotent:
 * the droplet step looks for the game VM before it creates one (never a second droplet), DNS writes only what is not
 * already right. Fetch only: no `node:` import here or below.
 */
export type RevivePhase = "droplet" | "active" | "dns" | "game" | "done";

export interface ReviveRun {
  phase: RevivePhase;
  startedAt: number;
  /** When the current phase began: its timeout counts from here. */
  phaseSince: number;
  dropletId?: number;
  dropletName?: string;
  ip?: string;
  /** The steps done, in order, with when each ended. */
  done: Array<{ at: number; text: string }>;
}

/** What a revive needs: the APIs, the names, what the VM is to be, and how to ask the game. */
export interface ReviveDeps {
  digitalocean: DigitalOcean;
  cloudflare: Cloudflare;
  serverAddr: string;
  panelUrl: string;
  /** The game VM: DROPLET_NAME, else the one droplet tagged DROPLET_TAG (default mcops). */
  find: { DROPLET_NAME?: string | undefined; DROPLET_TAG?: string | undefined };
  /** The VM to create when there is none: as hibernate remembered it, or as configured. */
  spec: () => Promise<DropletSpec>;
  /** The game's address on the VM at `ip`. */
  gameAddress(ip: string): string;
  /** True when the game answers a Server List Ping at `address`. */
  answers(address: string): Promise<boolean>;
  now(): number;
  timeouts?: Partial<ReviveTimeouts>;
  /** How often to look while waiting (default 5 s). */
  pollMs?: number;
}

export interface DropletSpec {
  name: string;
  size: string | undefined;
  region: string | undefined;
  tags: string[];
  sshKeys: Array<number | string>;
}

export interface ReviveTimeouts {
  activeMs: number;
  gameMs: number;
}

const TIMEOUTS: ReviveTimeouts = { activeMs: 5 * 60_000, gameMs: 10 * 60_000 };

export function newReviveRun(now: number): ReviveRun {
  return { phase: "droplet", startedAt: now, phaseSince: now, done: [] };
}

export interface StepResult {
  run: ReviveRun;
  /** Wait this long before the next step; undefined once the run is done. */
  waitMs: number | undefined;
  /** What this step did, when it finished something (a line for the operator). */
  said?: string | undefined;
  /** DNS: what changed (the CLI lists it). */
  changes?: DnsChange[] | undefined;
}

/** One step of the run: what its phase does next. Throws a JobError when the run cannot go on. */
export async function reviveStep(run: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  switch (run.phase) {
    case "droplet":
      return dropletStep(run, deps);
    case "active":
      return activeStep(run, deps);
    case "dns":
      return dnsStep(run, deps);
    case "game":
      return gameStep(run, deps);
    case "done":
      return { run, waitMs: undefined };
  }
}

function advance(run: ReviveRun, deps: ReviveDeps, phase: RevivePhase, text: string, more: Partial<ReviveRun> = {}) {
  const now = deps.now();
  return {
    run: { ...run, ...more, phase, phaseSince: now, done: [...run.done, { at: now, text }] },
    waitMs: phase === "done" ? undefined : 0,
    said: text,
  };
}

/** The game VM if it is there (powered on when off), else a new droplet from the newest mcops snapshot. */
async function dropletStep(run: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const { digitalocean } = deps;
  const existing = await findDroplet(digitalocean, deps.find);
  if (existing) {
    if (existing.status === "off") await digitalocean.action(existing.id, "power_on");
    const text =
      existing.status === "off"
        ? `Powered ${existing.name} on (it was there, off: not creating another)`
        : `Droplet ${existing.name} is already there (${existing.status}): not creating another`;
    return advance(run, deps, "active", text, { dropletId: existing.id, dropletName: existing.name });
  }
  const snapshot = mcopsSnapshots(await digitalocean.snapshots())[0];
  if (!snapshot) {
    throw new JobError("there is no mcops snapshot to revive from", {
      hint: "hibernate makes one; the snapshots are under Images → Snapshots in the DigitalOcean control panel",
    });
  }
  const spec = await deps.spec();
  const region = spec.region ?? snapshot.regions[0];
  if (!spec.size || !region) {
    throw new JobError("which droplet size (and region)? nothing remembers the hibernated VM", {
      hint: "e.g. revive --size s-2vcpu-4gb --region fra1 (docs/system.md 1: s-2vcpu-4gb is the recommended size)",
    });
  }
  const droplet: Droplet = await digitalocean.createDroplet({
    name: spec.name,
    region,
    size: spec.size,
    image: Number(snapshot.id),
    ssh_keys: spec.sshKeys,
    tags: spec.tags,
  });
  const text = `Created droplet ${droplet.name} (${spec.size}, ${region}) from ${snapshot.name}`;
  return advance(run, deps, "active", text, { dropletId: droplet.id, dropletName: droplet.name });
}

/** Waits until the droplet is active with a public IPv4 address. */
async function activeStep(run: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const droplet = await deps.digitalocean.droplet(run.dropletId as number);
  if (!droplet) {
    // Gone (destroyed by hand meanwhile): look again, and make one if there is none.
    return { run: { ...run, phase: "droplet", phaseSince: deps.now() }, waitMs: 0 };
  }
  const ip = publicIpv4(droplet);
  if (droplet.status === "active" && ip) {
    return advance(run, deps, "dns", `Droplet ${droplet.name} is active at ${ip}`, { ip });
  }
  return waitOrFail(run, deps, "activeMs", () => `droplet ${droplet.name} did not get active with an IPv4 address`);
}

/** Points the play name (DNS only) and the panel name (proxied) at the VM. */
async function dnsStep(run: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const ip = run.ip as string;
  const changes = await syncDns(deps.cloudflare, dnsNames(deps.serverAddr, deps.panelUrl), ip, false);
  return { ...advance(run, deps, "game", `DNS points at ${ip}`), changes };
}

/** Waits until the game answers a Server List Ping on the VM. */
async function gameStep(run: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const address = deps.gameAddress(run.ip as string);
  if (await deps.answers(address)) return advance(run, deps, "done", `The game answers on ${address}`);
  return waitOrFail(run, deps, "gameMs", () => `the game did not answer on ${address}`);
}

function waitOrFail(run: ReviveRun, deps: ReviveDeps, timeout: keyof ReviveTimeouts, what: () => string): StepResult {
  const limit = { ...TIMEOUTS, ...deps.timeouts }[timeout];
  if (deps.now() - run.phaseSince >= limit) {
    throw new JobError(`${what()} within ${formatDuration(limit)}`, {
      hint: "look at the DigitalOcean control panel, the panel console and the VM's firewall, then start again",
    });
  }
  return { run, waitMs: deps.pollMs ?? 5000 };
}
