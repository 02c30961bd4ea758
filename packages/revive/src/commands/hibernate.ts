import {
  createDigitalOcean,
  type DigitalOcean,
  type Droplet,
  publicIpv4,
  SNAPSHOT_PRICE_PER_GB,
} from "@mcops/cloud/digitalocean";
import {
  type HibernateDeps,
  type HibernateRun,
  type HibernateStep,
  hibernatedDroplet,
  hibernateStep,
  newHibernateRun,
} from "@mcops/cloud/hibernate-steps";
import { findDroplet, serverKey } from "@mcops/cloud/snapshots";
import { BusyError, ExitCode, JobError } from "@mcops/core/errors";
import { COLOURS, createPanelClient, gameState, stopGame } from "@mcops/core/http";
import { type Logger, silentLogger } from "@mcops/core/log";
import { LOG_FILES } from "@mcops/core/log-events";
import { type Runner, zxRunner } from "@mcops/core/runner";
import type { ToolContext } from "@mcops/core/tool";
import { pingGame } from "@mcops/game-log/game-ping";
import {
  type Ask,
  confirm,
  type LocalContext,
  type LocalState,
  localNotifier,
  pollMs,
  readLocalState,
  requireConsent,
  type Steps,
  steps,
  timeouts,
  writeLocalState,
} from "../local.ts";
import type { HibernateSettings } from "../settings.ts";

export interface HibernateOptions {
  yes?: boolean | undefined;
  /** No last backup over SSH (the VM is unreachable, or the backup was just made). */
  skipBackup?: boolean | undefined;
  /** Go on when the game does not answer a ping (nobody can tell who plays). */
  force?: boolean | undefined;
  runner?: Runner | undefined;
}

/** `$1.80/month hibernated (30 GB snapshot) instead of $24.00/month running`. */
function costLine(snapshotGb: number, priceMonthly: number | undefined): string {
  const hibernated = snapshotGb * SNAPSHOT_PRICE_PER_GB;
  const running = priceMonthly === undefined ? "" : ` instead of $${priceMonthly.toFixed(2)}/month running`;
  return `costs $${hibernated.toFixed(2)}/month hibernated (${snapshotGb} GB snapshot at $${SNAPSHOT_PRICE_PER_GB}/GB)${running}`;
}

/** What hibernate uses of the tool's context: revive's, and the confirmation question. */
type HibernateContext = LocalContext & { ask?: Ask | undefined };

/** One run: the context, DigitalOcean, the state file's content as it goes, and the step timings. */
interface Hibernation {
  ctx: HibernateContext;
  digitalocean: DigitalOcean;
  state: LocalState;
  step: Steps;
}

/**
 * docs/system.md 1.7's hibernate, the step that saves most of the bill (a powered-off droplet is billed; a snapshot is cheap):
 * refuse while anyone plays; stop the game server through the panel; a last backup on the VM over SSH; shut the droplet
 * down (power off when a clean shutdown does not finish); snapshot it and wait; check the snapshot is listed; only then
 * destroy the droplet; keep this server's newest N snapshots. Re-run after an interruption, it carries on: a snapshot in
 * progress is waited for, not taken twice; a droplet already gone with its snapshot listed is "already hibernated".
 * `env` is the local .env's fields with `--keep` over KEEP_SNAPSHOTS, read by hibernateSettings (settings.ts) before
 * the run.
 */
export async function runHibernate(
  ctx: HibernateContext,
  env: HibernateSettings,
  options: HibernateOptions = {},
): Promise<number> {
  requireConsent(ctx, options.yes ?? false, "destroying the droplet");
  const digitalocean = createDigitalOcean({
    base: env.DIGITALOCEAN_API_URL,
    token: env.DIGITALOCEAN_ACCESS_TOKEN,
    clock: ctx.clock,
  });
  const step = steps(ctx);
  await digitalocean.verify();
  const run: Hibernation = { ctx, digitalocean, step, state: readLocalState(ctx) };
  const droplet = await findDroplet(digitalocean, env, serverKey(env.SERVER_ADDR));
  if (!droplet) {
    await alreadyHibernated(run, env);
    return ExitCode.ok;
  }
  const priceMonthly = rememberDroplet(run, droplet);
  await bringDown(run, env, droplet, options);
  const done = await hibernateSteps(run, env, droplet, options);
  const snapshot = done.snapshot as { name: string; sizeGb?: number };
  const cost = costLine(snapshot.sizeGb ?? 0, priceMonthly);
  await report(run, env, snapshot.name, `droplet ${droplet.name} destroyed, snapshot ${snapshot.name} kept`, cost);
  return ExitCode.ok;
}

/**
 * No droplet: hibernated already, or destroyed by a run stopped before it could write down the snapshot it kept. Says
 * so when that snapshot is listed (and writes it down); throws otherwise.
 */
async function alreadyHibernated(
  { ctx, digitalocean, state, step }: Hibernation,
  env: HibernateSettings,
): Promise<void> {
  const pending = state.snapshot;
  const listed = (await digitalocean.snapshots()).find((s) =>
    state.snapshotId
      ? s.id === state.snapshotId
      : pending !== undefined && s.name === pending.name && s.resource_id === String(pending.dropletId),
  );
  if (!listed) {
    throw new JobError("no droplet to hibernate", {
      where: env.DROPLET_NAME ? "DROPLET_NAME" : `tag ${env.DROPLET_TAG ?? "mcops"}`,
      hint: "tag the game VM with mcops in the DigitalOcean control panel, or set DROPLET_NAME in .env",
    });
  }
  if (state.snapshotId !== listed.id) {
    state.snapshotId = listed.id;
    state.hibernatedAt ??= listed.created_at;
    delete state.snapshot;
    delete state.powerDown;
    writeLocalState(ctx, state);
  }
  step.note(`Already hibernated: snapshot ${listed.name}; bring it back with: revive`);
}

/** Writes down the droplet as it is, for revive to recreate; its monthly price, for the cost line. */
function rememberDroplet({ ctx, state }: Hibernation, droplet: Droplet): number | undefined {
  const seen = hibernatedDroplet(droplet);
  state.droplet = { ...seen, priceMonthly: seen.priceMonthly ?? state.droplet?.priceMonthly };
  writeLocalState(ctx, state);
  return state.droplet.priceMonthly;
}

/**
 * An active droplet not yet being snapshotted: the game stopped, the last backup, the shutdown. A shutdown an earlier
 * run asked for is carried on with, without stopping or backing up again on a VM going down.
 */
async function bringDown(run: Hibernation, env: HibernateSettings, droplet: Droplet, options: HibernateOptions) {
  const { state, step } = run;
  const snapshotting = state.snapshot?.dropletId === droplet.id;
  if (droplet.status !== "active" || snapshotting) return;
  // A shutdown an earlier run asked for is carried on with (hibernateSteps), without stopping or backing up again.
  if (state.powerDown?.dropletId === droplet.id) return;
  await stopServer(run.ctx, env, options.force ?? false, step);
  if (!options.skipBackup) await lastBackup(env, publicIpv4(droplet), options.runner ?? zxRunner, step);
}

/**
 * The shared steps (@mcops/cloud/hibernate-steps, the ones the Discord Worker runs) from the shutdown on, one after the
 * other: shutdown (power off when it fails or does not finish), snapshot, listed, the operator's yes, destroy, keep
 * the newest snapshots. What is under way is written in the state file as it goes (powerDown, snapshot), so a re-run
 * carries on with it.
 */
async function hibernateSteps(run: Hibernation, env: HibernateSettings, droplet: Droplet, options: HibernateOptions) {
  const { ctx, digitalocean, step } = run;
  const now = () => ctx.clock.now();
  const limits = timeouts(ctx);
  const deps: HibernateDeps = {
    digitalocean,
    find: env,
    server: { key: serverKey(env.SERVER_ADDR) },
    // The game was stopped (and nobody played) before: it is not pinged again here.
    players: async () => undefined,
    keep: env.KEEP_SNAPSHOTS,
    now,
    pollMs: Math.max(pollMs(ctx), 1),
    timeouts: { shutdownMs: limits.shutdownMs, snapshotMs: limits.snapshotMs },
    beforeDestroy: (r) =>
      confirm(
        ctx,
        options.yes ?? false,
        `Destroy droplet ${droplet.name} (${publicIpv4(droplet) ?? "no address"})? Snapshot ${r.snapshot?.name} is listed.`,
      ),
  };
  let hib = resumeRun(run, droplet, now());
  for (;;) {
    const said = hib.done.length;
    let result: HibernateStep;
    try {
      result = await hibernateStep(hib, deps);
    } catch (error) {
      noteProgress(run, droplet, hib);
      throw error;
    }
    for (const d of result.run.done.slice(said)) step.done(d.text);
    if (hib.phase === "destroy" && result.run.phase === "prune") noteHibernated(run, result.run);
    hib = result.run;
    noteProgress(run, droplet, hib);
    if (result.waitMs === undefined) return hib;
    if (result.waitMs > 0) await ctx.clock.sleep(result.waitMs);
  }
}

/** Where an earlier run stopped (the state file), else the shutdown, or the snapshot of a droplet already off. */
function resumeRun({ state, step }: Hibernation, droplet: Droplet, now: number): HibernateRun {
  const base: HibernateRun = {
    ...newHibernateRun(now),
    droplet: {
      id: droplet.id,
      name: droplet.name,
      size: droplet.size_slug,
      region: droplet.region.slug,
      tags: droplet.tags,
    },
    ip: publicIpv4(droplet),
  };
  const pending = state.snapshot?.dropletId === droplet.id ? state.snapshot : undefined;
  if (pending) return { ...base, phase: "snapshot", snapshot: { name: pending.name }, actionId: pending.actionId };
  if (droplet.status !== "active") return { ...base, phase: "snapshot" };
  const stopping = state.powerDown?.dropletId === droplet.id ? state.powerDown : undefined;
  if (!stopping) return { ...base, phase: "shutdown" };
  step.note(`Carrying on with the shutdown asked for at ${stopping.since}`);
  return { ...base, phase: "off", actionId: stopping.actionId };
}

/** The shutdown and the snapshot under way, in the state file, for a re-run. */
function noteProgress({ ctx, state }: Hibernation, droplet: Droplet, hib: HibernateRun): void {
  const before = JSON.stringify([state.powerDown, state.snapshot]);
  if (hib.phase === "off" && hib.actionId !== undefined && state.powerDown?.actionId !== hib.actionId) {
    const since = state.powerDown?.since ?? new Date(ctx.clock.now()).toISOString();
    state.powerDown = { dropletId: droplet.id, actionId: hib.actionId, since };
  }
  if (hib.phase === "snapshot" && hib.snapshot && hib.actionId !== undefined) {
    state.snapshot = { dropletId: droplet.id, name: hib.snapshot.name, actionId: hib.actionId };
  } else if (hib.phase === "snapshot" && !hib.snapshot) {
    delete state.snapshot;
  }
  if (JSON.stringify([state.powerDown, state.snapshot]) !== before) writeLocalState(ctx, state);
}

/** The snapshot is kept and the droplet gone: the state file says hibernated. */
function noteHibernated({ ctx, state }: Hibernation, hib: HibernateRun): void {
  state.hibernatedAt = new Date(ctx.clock.now()).toISOString();
  state.snapshotId = hib.snapshot?.id;
  delete state.snapshot;
  delete state.powerDown;
  writeLocalState(ctx, state);
}

/** The last line, and the webhook's message when .env names one. */
async function report(
  { ctx, step }: Hibernation,
  env: HibernateSettings,
  snapshot: string,
  destroyed: string,
  cost: string,
): Promise<void> {
  step.note(`Hibernated in ${step.total()}: ${destroyed}; ${cost}. Bring it back with: revive`);
  await localNotifier(ctx, env)?.send({
    title: "Server hibernated",
    description: `The VM was snapshotted (${snapshot}) and destroyed; it ${cost}. \`revive\` brings it back.`,
    colour: COLOURS.info,
    category: "idle",
  });
}

/**
 * Refuses while anyone plays (or, without --force, while nobody can tell); stops the game server through the panel and
 * waits until Wings says its container does not run. Whether the game runs is asked of the game itself (core's
 * gameState and stopGame): the panel's /resources is cached for 20 s, and a VM shut down and destroyed under a game
 * started a moment ago from Discord loses the world it was writing.
 */
async function stopServer(
  ctx: Pick<ToolContext, "clock">,
  env: HibernateSettings,
  force: boolean,
  step: Steps,
): Promise<void> {
  const address = env.GAME_ADDRESS ?? env.SERVER_ADDR;
  const { ping, error } = await pingGame(address);
  if (ping && ping.online > 0) {
    throw new BusyError(
      `${ping.online} player${ping.online === 1 ? " is" : "s are"} online${ping.names.length ? ` (${ping.names.join(", ")})` : ""}: not hibernating`,
      { where: address, hint: "try again when nobody plays" },
    );
  }
  const panel = env.SERVER_ID
    ? createPanelClient({
        url: env.CONTROL_URL ?? env.PANEL_URL,
        key: env.CONTROL_KEY,
        serverId: env.SERVER_ID,
        clock: ctx.clock,
      })
    : undefined;
  const game = { clock: ctx.clock, logger: noting(step) };
  const state = panel ? (await gameState(panel, game)).state : undefined;
  if (!ping && state !== "offline") {
    if (!force) {
      throw new BusyError(`nobody can tell who plays: the game does not answer a ping (${error})`, {
        where: address,
        hint: "nothing was done; check that the game is reachable there, or pass --force to hibernate anyway",
      });
    }
    step.note(`The game does not answer a ping (${error}); going on because of --force`);
  }
  if (!panel) {
    step.note("SERVER_ID is not set: the game server is not stopped through the panel first (the shutdown stops it)");
    return;
  }
  if (state === "offline") return;
  await stopGame(panel, { ...game, timeoutMs: 3 * 60_000 });
  step.done("Stopped the game server through the panel");
}

/** What the game's state says along the way (a cached "offline" that runs, a stop sent again), as a step's note. */
function noting(step: Steps): Logger {
  return { ...silentLogger, info: (line) => step.note(`${line[0]?.toUpperCase()}${line.slice(1)}`) };
}

/** The VM's own backup tool, over SSH, before anything is shut down. */
async function lastBackup(env: HibernateSettings, ip: string | undefined, runner: Runner, step: Steps): Promise<void> {
  if (!ip)
    throw new JobError("the droplet has no public IPv4 address for the last backup", { hint: "pass --skip-backup" });
  const args = [
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=accept-new",
    "-o",
    "ConnectTimeout=15",
    ...(env.SSH_KEY ? ["-i", env.SSH_KEY] : []),
    `${env.SSH_USER ?? "root"}@${ip}`,
    "/opt/mc-tools/backup",
  ];
  const result = await runner.run("ssh", args, {});
  if (result.code !== 0) {
    const said = result.stderr.trim().split("\n").at(-1) ?? "";
    throw new JobError(
      `the last backup on the VM failed (ssh exit ${result.code ?? result.signal})${said ? `: ${said}` : ""}`,
      {
        where: `${env.SSH_USER ?? "root"}@${ip}`,
        hint: `nothing was shut down or destroyed; fix it (see /var/log/${LOG_FILES.backup} on the VM) or pass --skip-backup`,
      },
    );
  }
  step.done("Last backup on the VM done");
}
