import { createCloudflare, dnsNames } from "@mcops/cloud/cloudflare";
import { createDigitalOcean, type DigitalOcean } from "@mcops/cloud/digitalocean";
import { type DropletSpec, newReviveRun, type ReviveDeps, type ReviveRun, reviveStep } from "@mcops/cloud/revive-steps";
import { serverKey } from "@mcops/cloud/snapshots";
import { ExitCode, JobError, UsageError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { COLOURS, createPanelClient } from "@mcops/core/http";
import { parseGameAddress, pingGame } from "@mcops/game-log/game-ping";
import {
  type LocalContext,
  type LocalState,
  localNotifier,
  pollMs,
  readLocalState,
  type Steps,
  steps,
  timeouts,
  writeLocalState,
} from "../local.ts";
import type { ReviveSettings } from "../settings.ts";
import { describeChanges } from "./dns.ts";

export interface ReviveOptions {
  size?: string | undefined;
  region?: string | undefined;
  /** SSH key ids or fingerprints; default every key on the account. */
  sshKeys?: string[] | undefined;
}

/** One run: the context, its settings (how long to wait for the panel and the game too), DigitalOcean, the timings. */
interface Revival {
  ctx: LocalContext;
  env: ReviveSettings;
  digitalocean: DigitalOcean;
  step: Steps;
}

/**
 * Brings the VM back from this server's newest snapshot with the size, region and tags hibernate remembered (overridable),
 * waits until it runs with an IPv4 address, repoints DNS, waits for the panel, starts the game server and waits until
 * the game answers a Server List Ping, printing how long each step took. The steps are revive-steps.ts, the ones the
 * Discord Worker runs too; here they run one after the other in this process. Re-run after an interruption, it
 * carries on: a droplet already there is not created again. `env` is the local .env's fields and `--wait`, read by
 * reviveSettings (settings.ts) before the run.
 */
export async function runRevive(ctx: LocalContext, env: ReviveSettings, options: ReviveOptions = {}): Promise<number> {
  const names = dnsNames(env.SERVER_ADDR, env.PANEL_URL);
  const digitalocean = createDigitalOcean({
    base: env.DIGITALOCEAN_API_URL,
    token: env.DIGITALOCEAN_ACCESS_TOKEN,
    clock: ctx.clock,
  });
  const cf = createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: ctx.clock });
  const run: Revival = { ctx, env, digitalocean, step: steps(ctx) };
  await digitalocean.verify();
  await cf.verify((names[0] as (typeof names)[number]).zone);
  const state = readLocalState(ctx);
  const deps: ReviveDeps = {
    digitalocean,
    cloudflare: cf,
    serverAddr: env.SERVER_ADDR,
    panelUrl: env.PANEL_URL,
    find: env,
    // The droplet hibernation remembered: snapshots of the earlier naming taken of it are this server's too.
    server: { key: serverKey(env.SERVER_ADDR), dropletIds: state.droplet ? [state.droplet.id] : [] },
    spec: () => dropletSpec(run, state, options),
    gameAddress: (ip) => gameAddress(env, ip),
    answers: async (address) => (await pingGame(address, 3000, 1)).ping !== undefined,
    now: () => ctx.clock.now(),
    timeouts: { activeMs: timeouts(ctx).activeMs, gameMs: env.waitMs },
    pollMs: pollMs(ctx),
  };
  let revive = resumed(ctx, state);
  for (;;) {
    if (revive.phase === "game" && env.SERVER_ID) {
      await startServer(run, env.SERVER_ID);
      // The game's wait counts from here, as long as the panel's did.
      revive = { ...revive, phaseSince: ctx.clock.now() };
    }
    const result = await reviveStep(revive, deps);
    if (result.said)
      run.step.done(result.changes ? `${result.said}:\n${describeChanges(result.changes)}` : result.said);
    if (result.run.phase !== revive.phase && revive.phase === "droplet") rememberCreated(run, state, result.run);
    revive = result.run;
    remember(ctx, state, revive);
    if (result.waitMs === undefined) break;
    if (result.waitMs > 0) await ctx.clock.sleep(result.waitMs);
  }
  await report(run, revive.ip as string);
  return ExitCode.ok;
}

/** A re-run this long after a revive that did not end carries on with its run id. */
const RESUME_MS = 60 * 60_000;

/**
 * The run: a new one, or the one a revive stopped short (killed, failed) began less than RESUME_MS ago, with its id
 * and a create whose answer was lost. Its droplet then carries this run's tag: it is found as the run's own, and a
 * second one created while DigitalOcean's list lagged is destroyed once listed, never left running beside it.
 */
function resumed(ctx: LocalContext, state: LocalState): ReviveRun {
  const now = ctx.clock.now();
  const before = state.revive;
  const run =
    before && /^[0-9a-f]{16}$/.test(before.runId) && now - before.startedAt >= 0 && now - before.startedAt < RESUME_MS
      ? { ...newReviveRun(now, before.runId), ...(before.lostCreate ? { lostCreate: before.lostCreate } : {}) }
      : newReviveRun(now);
  remember(ctx, state, run, before && before.runId === run.runId ? before.startedAt : now);
  return run;
}

/** The run's id (and a lost create) written down until the run is done, then forgotten. */
function remember(ctx: LocalContext, state: LocalState, run: ReviveRun, startedAt?: number): void {
  const next =
    run.phase === "done"
      ? undefined
      : {
          runId: run.runId as string,
          startedAt: startedAt ?? state.revive?.startedAt ?? run.startedAt,
          ...(run.lostCreate ? { lostCreate: run.lostCreate } : {}),
        };
  if (JSON.stringify(next) === JSON.stringify(state.revive)) return;
  if (next) state.revive = next;
  else delete state.revive;
  writeLocalState(ctx, state);
}

/** The droplet to create: the options, else what hibernate remembered (the snapshot's region last). */
async function dropletSpec(
  { digitalocean, env }: Revival,
  state: LocalState,
  options: ReviveOptions,
): Promise<DropletSpec> {
  const remembered = state.droplet;
  const size = options.size ?? remembered?.size;
  if (!size) {
    throw new UsageError("which droplet size (and region)? hibernate's state file is missing", {
      hint: "e.g. revive --size s-2vcpu-4gb --region fra1 (docs/system.md 1: s-2vcpu-4gb is the recommended size)",
    });
  }
  return {
    name: env.DROPLET_NAME ?? remembered?.name ?? "mcops",
    size,
    region: options.region ?? remembered?.region,
    tags: [...new Set([...(remembered?.tags ?? []), env.DROPLET_TAG ?? "mcops"])],
    sshKeys: options.sshKeys?.length ? options.sshKeys : await digitalocean.sshKeyIds(),
  };
}

/** A droplet the run created is written down, so that hibernate and a re-run know it. */
function rememberCreated({ ctx }: Revival, state: LocalState, revive: ReviveRun): void {
  if (revive.dropletId === undefined || state.droplet?.id === revive.dropletId) return;
  const created = revive.done.at(-1)?.text.match(/^Created droplet (\S+) \((\S+), (\S+)\)/);
  if (!created) return;
  const remembered = state.droplet;
  state.droplet = {
    id: revive.dropletId,
    name: created[1] as string,
    size: created[2] as string,
    region: created[3] as string,
    tags: remembered?.tags ?? [],
    priceMonthly: remembered?.priceMonthly,
  };
  writeLocalState(ctx, state);
}

/** Waits until the panel answers, then starts the game server when it is offline. */
async function startServer({ ctx, env, step }: Revival, serverId: string): Promise<void> {
  const { waitMs } = env;
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
function gameAddress(env: ReviveSettings, ip: string): string {
  // The new address itself, not the name: a resolver may still hand out the destroyed droplet's for a few minutes.
  return env.GAME_ADDRESS ?? `${ip}:${parseGameAddress(env.SERVER_ADDR).port}`;
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
