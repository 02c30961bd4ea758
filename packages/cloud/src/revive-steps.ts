import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { type Cloudflare, type DnsChange, dnsNames, syncDns } from "./cloudflare.ts";
import { type DigitalOcean, type Droplet, outcomeUnknown, publicIpv4, type Snapshot } from "./digitalocean.ts";
import {
  type FindOptions,
  isLegacySnapshot,
  names,
  runTag,
  type ServerIdentity,
  serverDroplets,
  serverSnapshots,
  serverTag,
} from "./snapshots.ts";

/**
 * Revive as steps (issue 19): the same steps for `revive` on the operator's computer and for the Worker's Durable
 * Object, which cannot wait minutes in one call. Each call of `reviveStep` does one bounded piece of work and says how
 * long to wait before the next; the run's state goes in and comes out (JSON, stored by the caller), so a run stopped
 * anywhere — a crash, a DigitalOcean error, a Worker evicted — carries on from its state. Every step is idempotent:
 * the droplet step looks for the game VM before it creates one, DNS writes only what is not already right. Fetch only:
 * no `node:` import here or below.
 *
 * Never a second droplet, even when DigitalOcean's list lags (issue 30, Gamocosm #138): each run has its own id, in a
 * tag of the droplet it creates. A create answered with a 5xx or not answered at all may have made one: the run looks
 * for a droplet with its tag for `lostCreateMs` before it may create again (three creates at most). A second droplet
 * of this server that shows up later is destroyed only when this run made it and it is not the one the run uses;
 * any other stops the run, said as such.
 */
export type RevivePhase = "droplet" | "active" | "dns" | "game" | "done";

export interface ReviveRun {
  phase: RevivePhase;
  startedAt: number;
  /** When the current phase began: its timeout counts from here. */
  phaseSince: number;
  /** This run's own id: the tag `mcops-run:<id>` of the droplet it creates (absent in runs stored before issue 30). */
  runId?: string;
  /**
   * A create whose answer was lost (5xx, no answer): since when the run has looked for a droplet with its tag, how many
   * creates it has asked for, and what the step would have said.
   */
  lostCreate?: { since: number; tries: number; text: string };
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
  /** The game VM: DROPLET_NAME, else the droplet with the server's tag (snapshots.ts). */
  find: FindOptions;
  /** Which server this is: the droplet's tag, the snapshots it may be revived from. */
  server: ServerIdentity;
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
  /** How long a create whose answer was lost is looked for (by the run's tag) before the run may create again. */
  lostCreateMs: number;
}

const TIMEOUTS: ReviveTimeouts = { activeMs: 5 * 60_000, gameMs: 10 * 60_000, lostCreateMs: 3 * 60_000 };

/** Creates one run asks for at most: each after the one before was looked for in vain for `lostCreateMs`. */
const MAX_CREATES = 3;

/** 16 hex digits of a random UUID (crypto.randomUUID: Node and workerd alike). */
export function newRunId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

export function newReviveRun(now: number, runId: string = newRunId()): ReviveRun {
  return { phase: "droplet", startedAt: now, phaseSince: now, runId, done: [] };
}

/**
 * The run as it is to go on when its last step began and never ended: the process that ran it stopped midway (a
 * Worker deployed or evicted while it waited on DigitalOcean). In the droplet phase that step may have asked for a
 * create whose answer nobody saw: the droplet with the run's tag is looked for first, as after a create answered 5xx,
 * before another may be made. Any other phase carries on as it was (its steps are idempotent).
 */
export function resumeInterrupted(run: ReviveRun, since: number): ReviveRun {
  if (run.phase !== "droplet" || !run.runId) return run;
  const text = run.lostCreate?.text ?? "Created a droplet from this server's newest snapshot";
  return { ...run, lostCreate: { since, tries: run.lostCreate?.tries ?? 1, text } };
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

/**
 * The game VM if it is there (powered on when off), else a new droplet from this server's newest snapshot. After a
 * create whose answer was lost, the droplet with this run's tag is looked for first.
 */
async function dropletStep(stored: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const run = stored.runId ? stored : { ...stored, runId: newRunId() };
  const { digitalocean } = deps;
  const tag = runTag(run.runId as string);
  const lost = run.lostCreate;
  if (lost) {
    const [made] = await digitalocean.droplets(tag);
    if (made) {
      const text = `${lost.text} (found by its tag ${tag}: DigitalOcean's answer to the create was lost)`;
      return advance(forget(run), deps, "active", text, { dropletId: made.id, dropletName: made.name });
    }
    if (deps.now() - lost.since < limits(deps).lostCreateMs) return { run, waitMs: deps.pollMs ?? 5000 };
  }
  const { droplets } = await serverDroplets(digitalocean, deps.find, deps.server.key);
  if (droplets.length > 0) {
    const { keep, destroyed } = await extraDroplets(run, deps, undefined, droplets);
    const existing = keep as Droplet;
    if (existing.status === "off") await digitalocean.action(existing.id, "power_on");
    const text =
      existing.status === "off"
        ? `Powered ${existing.name} on (it was there, off: not creating another)`
        : `Droplet ${existing.name} is already there (${existing.status}): not creating another`;
    return advance(noted(forget(run), deps, destroyed), deps, "active", text, {
      dropletId: existing.id,
      dropletName: existing.name,
    });
  }
  return create(run, deps, tag);
}

/** A new droplet from this server's newest snapshot, tagged with the server's tag and this run's. */
async function create(run: ReviveRun, deps: ReviveDeps, tag: string): Promise<StepResult> {
  const { digitalocean } = deps;
  const snapshot = newestSnapshot(await digitalocean.snapshots(), deps.server);
  const spec = await deps.spec();
  const region = spec.region ?? snapshot.regions[0];
  if (!spec.size || !region) {
    throw new JobError("which droplet size (and region)? nothing remembers the hibernated VM", {
      hint: "e.g. revive --size s-2vcpu-4gb --region fra1 (docs/system.md 1: s-2vcpu-4gb is the recommended size)",
    });
  }
  const tries = (run.lostCreate?.tries ?? 0) + 1;
  if (tries > MAX_CREATES) {
    throw new JobError(
      `${MAX_CREATES} creates went unanswered and no droplet tagged ${tag} showed up within ${formatDuration(limits(deps).lostCreateMs)} of each`,
      {
        hint: "look at the DigitalOcean control panel (Droplets); this run creates no more, start again when it is clear",
      },
    );
  }
  // Not a tag of a run before (hibernation remembers the droplet's tags): this run's own, and the server's.
  const tags = [...spec.tags.filter((t) => !t.startsWith("mcops-run:")), serverTag(deps.server.key), tag];
  const text = `Created droplet ${spec.name} (${spec.size}, ${region}) from ${snapshot.name}`;
  let droplet: Droplet;
  try {
    droplet = await digitalocean.createDroplet({
      name: spec.name,
      region,
      size: spec.size,
      image: Number(snapshot.id),
      ssh_keys: spec.sshKeys,
      tags: [...new Set(tags)],
    });
  } catch (error) {
    if (!outcomeUnknown(error)) throw error;
    const said = `DigitalOcean's answer to the create was lost (${(error as Error).message}): looking for a droplet tagged ${tag} before creating another`;
    return { run: { ...run, lostCreate: { since: deps.now(), tries, text } }, waitMs: deps.pollMs ?? 5000, said };
  }
  return advance(forget(run), deps, "active", text, { dropletId: droplet.id, dropletName: droplet.name });
}

/**
 * This server's newest snapshot. Snapshots of the earlier naming (`mcops-<date>`) that no known droplet of this server
 * was the source of are not guessed at: which world is whose is the operator's to say, by renaming.
 */
function newestSnapshot(snapshots: Snapshot[], server: ServerIdentity) {
  const newest = serverSnapshots(snapshots, server)[0];
  if (newest) return newest;
  const unknown = snapshots.filter(isLegacySnapshot);
  if (unknown.length) {
    throw new JobError(
      `there is no snapshot of ${server.key} to revive from; ${unknown.length} of the earlier naming (${unknown.map((s) => s.name).join(", ")}) ${unknown.length === 1 ? "was" : "were"} not taken of a droplet this server knows`,
      {
        hint: `rename this server's snapshot to mcops-${server.key}-<its date> (Images → Snapshots → More → Rename in the DigitalOcean control panel) and start again`,
      },
    );
  }
  throw new JobError(`there is no snapshot of ${server.key} to revive from`, {
    hint: "hibernate makes one; the snapshots are under Images → Snapshots in the DigitalOcean control panel",
  });
}

/**
 * More than one droplet of this server: the one to keep (`keepId`, the run's own; else the only one this run did not
 * make; else the oldest), the others destroyed when this run made them (one still being created is left for the next
 * look). One this run did not make stops the run: whose it is, is not for the run to guess.
 */
async function extraDroplets(
  run: ReviveRun,
  deps: ReviveDeps,
  keepId: number | undefined,
  listed?: Droplet[],
): Promise<{ keep: Droplet | undefined; waiting: Droplet[]; destroyed: string[] }> {
  // Every droplet a run creates carries the server's tag: one list by it finds a second one (DROPLET_NAME or not).
  // When the one the run uses is not listed (a VM of an install from before the tag), every listed one is a second.
  const droplets = listed ?? (await deps.digitalocean.droplets(serverTag(deps.server.key)));
  const tag = runTag(run.runId as string);
  const ours = (d: Droplet) => d.tags.includes(tag);
  const others = droplets.filter((d) => !ours(d));
  const oldest = [...droplets].sort((a, b) => a.id - b.id)[0];
  const keep =
    droplets.find((d) => d.id === keepId) ??
    (keepId === undefined ? (others.length === 1 ? others[0] : others.length === 0 ? oldest : undefined) : undefined);
  const extra = droplets.filter((d) => d !== keep);
  const foreign = extra.filter((d) => !ours(d));
  if (foreign.length) {
    throw new JobError(
      `${droplets.length} droplets are this server's game VM: ${names(droplets)}; ${names(foreign)} ${foreign.length === 1 ? "was" : "were"} not made by this run (tag ${tag}), so none is destroyed`,
      {
        hint: "destroy the one that is not the game VM in the DigitalOcean control panel (Droplets), then start again",
      },
    );
  }
  const waiting: Droplet[] = [];
  const destroyed: string[] = [];
  for (const d of extra) {
    if (d.status === "new") {
      waiting.push(d);
      continue;
    }
    await deps.digitalocean.deleteDroplet(d.id);
    destroyed.push(
      `Destroyed droplet ${d.name} (${d.id}): a second one this run made while DigitalOcean's list lagged`,
    );
  }
  return { keep, waiting, destroyed };
}

/** The run without its lost create. */
function forget(run: ReviveRun): ReviveRun {
  const { lostCreate: _, ...rest } = run;
  return rest;
}

/** Lines for what was done on the way (a second droplet destroyed), in the run's list of steps. */
function noted(run: ReviveRun, deps: ReviveDeps, texts: string[]): ReviveRun {
  if (!texts.length) return run;
  return { ...run, done: [...run.done, ...texts.map((text) => ({ at: deps.now(), text }))] };
}

function limits(deps: ReviveDeps): ReviveTimeouts {
  return { ...TIMEOUTS, ...deps.timeouts };
}

/** Waits until the droplet is active with a public IPv4 address, and this server has no second droplet. */
async function activeStep(stored: ReviveRun, deps: ReviveDeps): Promise<StepResult> {
  const droplet = await deps.digitalocean.droplet(stored.dropletId as number);
  if (!droplet) {
    // Gone (destroyed by hand meanwhile): look again, and make one if there is none.
    return { run: { ...stored, phase: "droplet", phaseSince: deps.now() }, waitMs: 0 };
  }
  const ip = publicIpv4(droplet);
  if (droplet.status !== "active" || !ip) {
    return waitOrFail(
      stored,
      deps,
      "activeMs",
      () => `droplet ${droplet.name} did not get active with an IPv4 address`,
    );
  }
  // Looked for once the VM is up (not at every look while it boots): one list call per look, not two.
  const extra = await extraDroplets(stored, deps, droplet.id);
  const run = noted(stored, deps, extra.destroyed);
  if (!extra.waiting.length) return advance(run, deps, "dns", `Droplet ${droplet.name} is active at ${ip}`, { ip });
  return waitOrFail(
    run,
    deps,
    "activeMs",
    () => `the second droplet ${names(extra.waiting)} did not finish being created, to be destroyed`,
  );
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
  if (await deps.answers(address)) {
    // Once more before the end: a droplet this run made whose listing lagged longer than the VM took to boot.
    const extra = await extraDroplets(run, deps, run.dropletId);
    const seen = noted(run, deps, extra.destroyed);
    if (!extra.waiting.length) return advance(seen, deps, "done", `The game answers on ${address}`);
    return waitOrFail(seen, deps, "gameMs", () => `the second droplet ${names(extra.waiting)} was not created whole`);
  }
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
