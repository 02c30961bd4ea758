import { ExitCode } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { type Answer, COLOURS, gameState, send as post, stopGame } from "@mcops/core/http";
import { HeartbeatAnswer, type HeartbeatBody, type RecordOf } from "@mcops/core/records";
import { signVmRequest } from "@mcops/core/vm-signature";
import type { Actor } from "./act.ts";
import type { Observation } from "./decide.ts";
import type { WorkerSettings } from "./settings.ts";

/**
 * The VM's side of discord-control (issue 19): every HEARTBEAT_EVERY the idle monitor tells the Worker how the server
 * is (signed with WORKER_SECRET), and the Worker answers what the group asked from Discord: start the game (a `/start`
 * is waiting for it), or hibernate (`/stop`). With IDLE_HIBERNATE_AFTER, once nobody has played that long and a
 * backup since the last play succeeded, the VM asks for hibernation itself. Hibernation from here: the game stopped
 * through the panel, a last backup, then the signed request; the Worker snapshots and destroys the VM.
 *
 * Every request carries the boot id read for this decision (actor.bootId, see state.ts; none when it cannot be read): the Worker refuses the requests of a boot it has
 * hibernated, and a revived VM (a new boot, with the state file the snapshot kept) starts its idle clock again.
 */

/** How long the Worker has to answer. */
const ANSWER_MS = 15_000;
/** After a hibernation was asked and accepted, no second one for this long (the VM is about to go). */
const HIBERNATE_AGAIN_MS = 30 * 60_000;

async function send(link: WorkerSettings, path: string, body: unknown, now: number): Promise<Answer> {
  const text = JSON.stringify(body);
  const url = `${link.url}${path}`;
  // The signature covers the method and the path the Worker sees, so it is taken only at this endpoint.
  const headers = await signVmRequest(link.secret, { method: "POST", path: new URL(url).pathname, body: text }, now);
  // node:http, not fetch: a daemon that idles for days does not carry undici (core's transport.ts).
  return post(url, { method: "post", body: text, headers, signal: AbortSignal.timeout(ANSWER_MS) });
}

/**
 * The heartbeat when it is due, and always before a hibernation on autopilot; then what the Worker asks (a `/start`
 * waiting for the game wins over the autopilot), then the autopilot, only once the Worker has answered.
 */
export async function talkToWorker(
  actor: Actor,
  link: WorkerSettings,
  observation: Observation,
  drill: RecordOf<"drill.done" | "drill.failed"> | undefined,
  now: number,
): Promise<void> {
  const { state, logger } = actor;
  const idleFor = state.idleSince === undefined ? 0 : now - state.idleSince;
  const backedUp =
    state.lastBackupOk !== undefined && (state.lastActivity === undefined || state.lastBackupOk > state.lastActivity);
  const autopilot =
    link.hibernateAfterMs !== undefined &&
    observation.players === 0 &&
    idleFor >= link.hibernateAfterMs &&
    backedUp &&
    !hibernatedLately(state, now);
  const due = state.heartbeatAt === undefined || now - state.heartbeatAt >= link.heartbeatMs;
  if (!due && !autopilot) return;
  const answer = await heartbeat(actor, link, observation, drill, now);
  if (!answer) return;
  if (answer.start === true) {
    // The group asked for the game: the idle period starts again, so the autopilot gives them their time to join.
    state.idleSince = undefined;
    // Not started (the panel not up yet, early in a boot): the heartbeat is due again at the next poll, not in
    // HEARTBEAT_EVERY, so the revive waiting for the game (10 minutes at most) is not left waiting.
    if (observation.state === "offline" && !(await startGame(actor))) state.heartbeatAt = undefined;
    return;
  }
  const stop = answer.hibernate;
  if (stop && typeof stop === "object") {
    const online = observation.players ?? 0;
    // Someone joined since the /stop: only a forced one goes on.
    if (online > 0 && stop.force !== true) {
      logger.info(
        `/stop asked to hibernate, but ${online} player${online === 1 ? " is" : "s are"} online now: not hibernating`,
      );
    } else
      await hibernate(actor, link, "asked with /stop in Discord", now, { players: online, force: stop.force === true });
    return;
  }
  if (autopilot) {
    await hibernate(actor, link, `nobody has played for ${formatDuration(idleFor)} (IDLE_HIBERNATE_AFTER)`, now);
  }
}

/** The signed heartbeat; the Worker's answer, or undefined (a WARN line) when there is none. */
async function heartbeat(
  actor: Actor,
  link: WorkerSettings,
  observation: Observation,
  drill: RecordOf<"drill.done" | "drill.failed"> | undefined,
  now: number,
): Promise<HeartbeatAnswer | undefined> {
  const { state, logger } = actor;
  state.heartbeatAt = now;
  try {
    const beat: HeartbeatBody = {
      serverState: observation.state,
      players: observation.names,
      online: observation.players ?? 0,
      lastBackup: state.lastBackupOk,
      lastDrill: drill && { at: drill.at, ok: drill.type === "drill.done" },
      bootId: actor.bootId,
    };
    const response = await send(
      link,
      "/vm/heartbeat",
      beat,
      // Signed when sent, not when the decision began: an idle backup before it may have taken minutes, and the
      // Worker refuses a request more than 5 minutes old.
      actor.ctx.clock.now(),
    );
    if (!response.ok) {
      const said = (await response.text()).slice(0, 200);
      const hint = response.status === 401 ? ": check WORKER_SECRET, and that the Worker is as new as this VM" : "";
      logger.warn(`the Worker refused the heartbeat (${response.status} ${said})${hint}`, { echo: false });
      return undefined;
    }
    const answer = HeartbeatAnswer.safeParse(JSON.parse(await response.text()));
    if (answer.success) return answer.data;
    logger.warn("the Worker's answer to the heartbeat is not one; is the Worker as new as this VM?", { echo: false });
    return undefined;
  } catch (error) {
    logger.warn(`no heartbeat to the Worker: ${(error as Error).message}`, { echo: false });
    return undefined;
  }
}

/** A hibernation was asked lately (the VM is about to go, or the Worker refused): not again yet. */
function hibernatedLately(state: { hibernateAsked?: number | undefined }, now: number): boolean {
  return state.hibernateAsked !== undefined && now - state.hibernateAsked < HIBERNATE_AGAIN_MS;
}

/** The Worker's 409 says a /start is waiting (`{"start": true}`). */
function startAsked(said: string): boolean {
  try {
    return (JSON.parse(said) as { start?: unknown } | null)?.start === true;
  } catch {
    return false;
  }
}

/** A `/start` waits for the game: it is started through the panel. False when that failed. */
async function startGame(actor: Actor): Promise<boolean> {
  actor.logger.info("the Worker asks for the game (/start): starting it through the panel");
  try {
    await actor.panel.power("start");
    return true;
  } catch (error) {
    actor.fail(`starting the game for /start failed: ${(error as Error).message}; asking again at the next poll`);
    return false;
  }
}

/** The game stopped, a last backup, then the signed request: nothing is asked when either fails. */
async function hibernate(
  actor: Actor,
  link: WorkerSettings,
  why: string,
  now: number,
  asked: { players: number; force: boolean } = { players: 0, force: false },
): Promise<void> {
  const { ctx, state, logger, panel, settings } = actor;
  if (hibernatedLately(state, now)) return;
  // Once per HIBERNATE_AGAIN_MS whatever comes of it: a Worker that refuses is not asked (nor a backup run) every poll.
  state.hibernateAsked = now;
  logger.info(`hibernating: ${why}; stopping the game, backing up, then asking the Worker`);
  try {
    // The game's own answer, not the panel's cached state (core's gameState and stopGame): a game started a moment ago
    // is "offline" in /resources for up to 20 s, and a VM snapshotted and destroyed under it loses what it was writing.
    const game = { clock: ctx.clock, logger, signal: ctx.signal };
    if ((await gameState(panel, game)).state !== "offline") await stopGame(panel, { ...game, timeoutMs: 5 * 60_000 });
  } catch (error) {
    actor.fail(`hibernation: stopping the game failed: ${(error as Error).message}; not hibernating`);
    return;
  }
  const backup = await ctx.runner.run(settings.backupCommand, [], { signal: ctx.signal });
  if (backup.code !== ExitCode.ok) {
    const said = backup.stderr.trim().split("\n").at(-1);
    actor.fail(
      `hibernation: the last backup failed (exit ${backup.code ?? backup.signal})${said ? `: ${said}` : ""}; not hibernating`,
    );
    return;
  }
  state.lastBackupOk = ctx.clock.now();
  try {
    const body = { ...asked, reason: why, bootId: actor.bootId };
    const response = await send(link, "/vm/hibernate", body, ctx.clock.now());
    if (response.status !== 202) {
      const said = (await response.text()).slice(0, 200);
      if (response.status === 409 && startAsked(said)) {
        // A /start came after this VM decided: it stays, the game starts again, and the idle clock with it.
        logger.info("hibernation: a /start was asked in Discord meanwhile; not hibernating, starting the game again");
        state.idleSince = undefined;
        state.hibernateAsked = undefined;
        if (!(await startGame(actor))) state.heartbeatAt = undefined;
        return;
      }
      actor.fail(`hibernation: the Worker answered ${response.status} ${said}`);
      return;
    }
  } catch (error) {
    actor.fail(`hibernation: the Worker did not answer: ${(error as Error).message}`);
    return;
  }
  logger.info("hibernation asked: the Worker snapshots and destroys the VM");
  await actor.notifier.send({
    title: "Server hibernating",
    description: `${why[0]?.toUpperCase()}${why.slice(1)}: the world is backed up, and the VM is snapshotted and destroyed. \`/start\` in Discord wakes it.`,
    colour: COLOURS.info,
    category: "idle",
  });
}
