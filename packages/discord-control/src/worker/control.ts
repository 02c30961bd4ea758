import { DurableObject } from "cloudflare:workers";
import { type HibernateRun, hibernateStep, newHibernateRun } from "@mcops/cloud/hibernate-steps";
import { newReviveRun, type ReviveRun, resumeInterrupted, reviveStep } from "@mcops/cloud/revive-steps";
import { parseJsonOrUndefined } from "@mcops/core/format";
import { BOOT_ID, Heartbeat as HeartbeatRecord } from "@mcops/core/records";
import { verifyVmRequest } from "@mcops/core/vm-signature";
import { type Delivery, editReply, escapeMarkdown, postToChannel, relative } from "./discord.ts";
import type { Env } from "./env.ts";
import { hibernateDeps, type RememberedDroplet, reviveDeps } from "./runs.ts";

/**
 * One server's state and its runs (issue 19), in one Durable Object: Cloudflare runs at most one instance of it at a
 * time, so two `/start` at once see the same state and join the same run (never a second droplet). A run advances
 * one step per alarm; its state is stored after every step, so an error or an eviction resumes at the next alarm.
 */

/** What the VM says every few minutes (signed). */
export interface Heartbeat {
  at: number;
  serverState: string;
  /** Players online, and the names the game showed (often fewer). */
  online: number;
  players: string[];
  lastBackup?: number | undefined;
  lastDrill?: { at: number; ok: boolean } | undefined;
  /** The VM's boot (its kernel's boot id), when it said it. */
  bootId?: string | undefined;
}

type Run = ({ kind: "revive"; revive: ReviveRun } | { kind: "hibernate"; hibernate: HibernateRun }) & {
  /** When it began: which run a step belongs to. */
  startedAt: number;
  /** Errors in a row: the next try waits longer. */
  failures: number;
  lastError?: string | undefined;
  /** A hibernation: the boot of the VM that asked for it (its requests are refused once the VM is destroyed). */
  bootId?: string | undefined;
  /**
   * When the step under way began; stored before it and gone with its outcome. Found at the next alarm, it says the
   * step never ended (the Worker stopped midway): a create it may have asked for is looked for before another.
   */
  stepAt?: number | undefined;
};

/** The steps done so far, and when the run began, whatever its kind. */
function stepsOf(run: Run): { startedAt: number; done: Array<{ text: string }>; phase: string } {
  return run.kind === "revive" ? run.revive : run.hibernate;
}

export interface ControlState {
  /** The newest VM request accepted (replays are refused). */
  lastVmAt: number;
  /**
   * The boot of the VM the last hibernation destroyed: a request from it (signed before the destroy, arriving after)
   * is refused, so it cannot make /status say Running with no droplet. A revived VM is a new boot.
   */
  hibernatedBoot?: string | undefined;
  heartbeat?: Heartbeat | undefined;
  hibernated?: { since: number; snapshotGb?: number | undefined; droplet?: RememberedDroplet | undefined } | undefined;
  stopAsked?: { at: number; by: string; force: boolean } | undefined;
  /**
   * The last /start, until the VM has heard of it (a heartbeat answered `start`): its hibernate request is refused
   * meanwhile, for START_HOLD_MS at most (unless a /stop since).
   */
  startAsked?: number | undefined;
  /** A /start came during a hibernation: a revive begins when it ends. */
  wakeAfter?: boolean | undefined;
  run?: Run | undefined;
  /** Interaction replies that follow the run: edited as each step ends (Discord keeps a token 15 minutes). */
  replies: Array<{
    token: string;
    since: number;
    shown?: string | undefined;
    /** The run it followed ended and Discord failed the edit that shows the end (a 5xx): it is tried again. */
    ending?: boolean | undefined;
  }>;
  /** A reply stopped following the run before its end (Discord's 15 minutes): the outcome goes to the channel. */
  toChannel?: boolean | undefined;
  /** How the last run ended; `missed` when a reply that asked for it could not show it (/status says it then). */
  lastRun?: { ok: boolean; at: number; text: string; missed?: boolean | undefined } | undefined;
}

/** Interaction ids are kept this long: a repeat is a replay (a signature is good for 5 minutes). */
const SEEN_MS = 15 * 60_000;
/** A heartbeat older than this: the VM is not known to run. */
const FRESH_MS = 15 * 60_000;
/** Discord refuses edits after 15 minutes. */
const REPLY_MS = 14 * 60_000;
/** After an error, the next try: 15 s, doubling, at most 5 minutes. */
const RETRY_MS = 15_000;
const MAX_RETRY_MS = 5 * 60_000;
/** A /stop not acted on within this is forgotten (the VM asks at its next heartbeat, every 5 minutes). */
const STOP_ASKED_MS = 15 * 60_000;
/** A /start the VM has not heard of holds off its hibernation this long at most (the env's START_HOLD_MS). */
const START_HOLD_MS = 15 * 60_000;
/** Errors in a row after which a run gives up (about 15 minutes of tries at the real waits). */
const MAX_FAILURES = 6;
/** DigitalOcean's price of snapshot storage, USD per GB-month. */
const SNAPSHOT_PRICE_PER_GB = 0.06;

/**
 * How the object's state stays whole: a Durable Object may let other requests in while one waits on the network (a
 * DigitalOcean call, a Discord edit, WebCrypto), but not while it waits on its own storage. So every handler does its
 * network work first, then reads, changes and writes the state with nothing but storage in between; the alarm, whose
 * step waits on the network, reads the state again after it and changes only what the step decided.
 */
export class ServerControl extends DurableObject<Env> {
  async #load(): Promise<ControlState> {
    return (await this.ctx.storage.get<ControlState>("state")) ?? { lastVmAt: 0, replies: [] };
  }

  async #save(state: ControlState): Promise<void> {
    await this.ctx.storage.put("state", state);
  }

  /** True the first time an interaction id is seen in SEEN_MS; false for a repeat (a replay). */
  async firstSeen(id: string): Promise<boolean> {
    const now = Date.now();
    const seen = (await this.ctx.storage.get<Record<string, number>>("interactions")) ?? {};
    const at = seen[id];
    if (at !== undefined && now - at < SEEN_MS) return false;
    const kept = Object.fromEntries(Object.entries(seen).filter(([, t]) => now - t < SEEN_MS));
    kept[id] = now;
    await this.ctx.storage.put("interactions", kept);
    return true;
  }

  /** /status, for everyone. */
  async status(): Promise<string> {
    return describe(await this.#load(), Date.now());
  }

  /**
   * /start: the state when the server runs; else a revive begins (or is joined) and the reply follows it. During a
   * hibernation the reply follows it, and a revive begins as soon as it ends. It takes back a /stop not yet acted on.
   */
  async start(token: string, user: string): Promise<{ deferred: true } | { deferred: false; content: string }> {
    const state = await this.#load();
    const now = Date.now();
    // A heartbeat since the /stop was answered "hibernate": the VM is stopping the game and backing up, and its
    // hibernate request is on its way. Not "already up" then: a revive run follows, and that request is refused.
    const handedOver = state.stopAsked !== undefined && (state.heartbeat?.at ?? -1) >= state.stopAsked.at;
    state.stopAsked = undefined;
    state.startAsked = now;
    const beat = fresh(state, now);
    if (!state.run && !handedOver && beat?.serverState === "running") {
      await this.#save(state);
      return { deferred: false, content: `The server is already up. ${players(beat)}` };
    }
    this.#addReply(state, token, now);
    if (state.run?.kind === "hibernate") state.wakeAfter = true;
    if (!state.run) {
      state.run = newRun("revive", now);
      console.log(`revive asked by ${user}`);
      await this.ctx.storage.setAlarm(now);
    }
    await this.#save(state);
    return { deferred: true };
  }

  /** /stop, for admins: the VM is asked (at its next heartbeat) to stop the game, back up and hand itself over. */
  async stop(token: string, user: string, force: boolean): Promise<string> {
    const state = await this.#load();
    const now = Date.now();
    if (state.run) return `A ${state.run.kind} is under way: use /stop once it has ended.`;
    if (state.hibernated) return `The server is already hibernated (since ${relative(state.hibernated.since)}).`;
    const beat = fresh(state, now);
    if (!beat) return "No word from the VM for a while: it cannot be asked to hibernate. Is it up?";
    if (beat.online > 0 && !force) {
      return `${players(beat)} Type \`/stop force:true\` to hibernate it anyway.`;
    }
    state.stopAsked = { at: now, by: user, force };
    state.startAsked = undefined;
    // The reply follows the hibernation the VM will ask for.
    this.#addReply(state, token, now);
    await this.#save(state);
    const unless = force ? "" : " If someone is playing by then, it does not.";
    return `Asked the VM to hibernate: at its next heartbeat (within 5 minutes) it stops the game, backs up, and is snapshotted and destroyed.${unless}`;
  }

  /** A /start the VM has not heard of yet, asked within START_HOLD_MS: it holds off the VM's hibernation. */
  #startPending(state: ControlState, now: number): boolean {
    const ms = Number(this.env.START_HOLD_MS ?? START_HOLD_MS);
    const hold = Number.isFinite(ms) && ms >= 0 ? ms : START_HOLD_MS;
    return state.startAsked !== undefined && now - state.startAsked < hold;
  }

  /** A signed request of the VM: a heartbeat (answered with what it is asked to do), or a hibernate request. */
  async fromVm(
    kind: "heartbeat" | "hibernate",
    body: string,
    headers: { timestamp: string | null; signature: string | null },
  ): Promise<{ status: number; json: string }> {
    const answer = await this.#fromVm(kind, body, headers);
    return { status: answer.status, json: JSON.stringify(answer.body) };
  }

  async #fromVm(
    kind: "heartbeat" | "hibernate",
    body: string,
    headers: { timestamp: string | null; signature: string | null },
  ): Promise<{ status: number; body: unknown }> {
    const now = Date.now();
    // The signature and the clock first (WebCrypto lets other requests in); the replay check with the state after.
    // The signature covers the endpoint: a heartbeat's body posted to /vm/hibernate does not verify there.
    const check = await verifyVmRequest(
      this.env.VM_SECRET,
      { method: "POST", path: `/vm/${kind}`, body },
      { get: (name) => (name.endsWith("timestamp") ? headers.timestamp : headers.signature) },
      now,
      0,
    );
    if (!check.ok) return { status: 401, body: { error: check.reason } };
    const state = await this.#load();
    if (check.timestamp <= state.lastVmAt) return { status: 401, body: { error: "replayed" } };
    state.lastVmAt = check.timestamp;
    const boot = bootOf(body);
    if (boot !== undefined && boot === state.hibernatedBoot) {
      await this.#save(state);
      return { status: 409, body: { error: "this VM's boot was hibernated (its droplet destroyed): request ignored" } };
    }
    const answer = kind === "hibernate" ? await this.#hibernate(state, body, now) : this.#heartbeat(state, body, now);
    await this.#save(state);
    return answer;
  }

  #heartbeat(state: ControlState, body: string, now: number): { status: number; body: unknown } {
    const beat = readHeartbeat(body, now);
    if (!beat) return { status: 400, body: { error: "not a heartbeat" } };
    state.heartbeat = beat;
    state.hibernated = undefined;
    const stop = state.stopAsked && now - state.stopAsked.at < STOP_ASKED_MS ? state.stopAsked : undefined;
    if (!stop) state.stopAsked = undefined;
    // A /start the VM has not heard of yet (none since a /stop, no hibernation under way): the VM is told, so it
    // starts its idle clock again (the group gets its time to join) and starts the game when it is offline (the
    // /start raced a /stop's hand-off or an autopilot hibernation, whose request was refused). Once the VM has heard
    // it with the game running or offline, the /start no longer holds off its hibernation: the VM's own clock does.
    const startAsked = this.#startPending(state, now) && !stop && state.run?.kind !== "hibernate";
    if (startAsked && (beat.serverState === "running" || beat.serverState === "offline")) state.startAsked = undefined;
    return {
      status: 200,
      body: {
        hibernate: stop ? { force: stop.force } : false,
        start: (state.run?.kind === "revive" && state.run.revive.phase === "game") || startAsked,
      },
    };
  }

  /** The VM stopped the game and backed up: it asks to be snapshotted and destroyed. */
  async #hibernate(state: ControlState, body: string, now: number): Promise<{ status: number; body: unknown }> {
    let asked: { players?: unknown; force?: unknown };
    try {
      asked = JSON.parse(body) as typeof asked;
    } catch {
      return { status: 400, body: { error: "not JSON" } };
    }
    const online = typeof asked?.players === "number" ? asked.players : 0;
    if (state.run) return { status: 409, body: { error: `a ${state.run.kind} is under way` } };
    if (this.#startPending(state, now)) {
      // The VM decided before it heard of the /start: it keeps the VM, and starts the game again (`start`).
      return { status: 409, body: { error: "a /start asked for the server since", start: true } };
    }
    if (online > 0 && asked.force !== true) return { status: 409, body: { error: `${online} players online` } };
    state.run = { ...newRun("hibernate", now), bootId: bootOf(body) };
    state.stopAsked = undefined;
    await this.ctx.storage.setAlarm(now);
    return { status: 202, body: { hibernating: true } };
  }

  /** One step of the run under way; then the replies that follow it are edited. */
  override async alarm(): Promise<void> {
    const before = await this.#load();
    const stored = before.run;
    if (!stored) {
      // No run: a reply whose last edit (the outcome) Discord failed is tried again.
      if (before.replies.some((r) => r.ending)) await this.#follow(before, Date.now(), true);
      return;
    }
    const { stepAt, ...run } = stored;
    if (stepAt !== undefined && run.kind === "revive") {
      console.log(`the last ${run.kind} step (${run.revive.phase}) never ended: the Worker stopped midway`);
      run.revive = resumeInterrupted(run.revive, stepAt);
    }
    // Stored before the step (nothing but storage since the state was read), so a Worker stopped midway is known.
    before.run = { ...run, stepAt: Date.now() };
    await this.#save(before);
    console.log(`${run.kind} step: ${stepsOf(run).phase}`);
    let outcome: Outcome;
    try {
      outcome = await this.#step(run, before.hibernated?.droplet);
    } catch (error) {
      outcome = this.#failed(run, (error as Error).message);
    }
    // What came in meanwhile (a heartbeat, a /start joining, a wake after hibernation) is kept.
    const state = await this.#load();
    if (state.run?.startedAt !== run.startedAt) return;
    Object.assign(state, outcome.changes);
    state.run = outcome.run;
    if (!outcome.run && state.wakeAfter) {
      state.wakeAfter = undefined;
      state.run = newRun("revive", Date.now());
      outcome.waitMs = 0;
    }
    const nextLook = Date.now() + (outcome.waitMs ?? 0);
    if (state.run) await this.ctx.storage.setAlarm(nextLook);
    await this.#save(state);
    await this.#follow(state, nextLook);
  }

  /** A step that threw: tried again later, or given up after MAX_FAILURES in a row. */
  #failed(run: Run, message: string): Outcome {
    const failures = run.failures + 1;
    console.log(`${run.kind} step failed (${failures}): ${message}`);
    if (failures < MAX_FAILURES) {
      const waitMs = Math.min(Number(this.env.RETRY_MS ?? RETRY_MS) * 2 ** (failures - 1), MAX_RETRY_MS);
      return { run: { ...run, failures, lastError: message }, waitMs, changes: {} };
    }
    // Given up: said in the replies and /status; a new /start (or the VM's next request) begins again.
    if (run.kind === "hibernate" && run.hibernate.phase === "prune") {
      // The droplet is destroyed, its snapshot listed: hibernated, whatever became of the older snapshots.
      const text = `💤 Hibernated (snapshot ${run.hibernate.snapshot?.name}), but deleting older snapshots failed: ${message.slice(0, 400)} (${failures} tries); the next hibernation tries again.`;
      return { run: undefined, changes: { ...hibernatedNow(run), lastRun: { ok: false, at: Date.now(), text } } };
    }
    const what = run.kind === "revive" ? "Could not wake the server up" : "Could not hibernate the server";
    const text = `${what}: ${message.slice(0, 500)} (${failures} tries).`;
    const lastRun = { ok: false, at: Date.now(), text };
    return { run: undefined, changes: run.kind === "hibernate" ? { ...notHibernated(), lastRun } : { lastRun } };
  }

  /** One step of the run: the run as it is after it, and what the state learns when it ends. */
  async #step(run: Run, remembered: RememberedDroplet | undefined): Promise<Outcome> {
    const now = () => Date.now();
    if (run.kind === "revive") {
      const step = await reviveStep(run.revive, reviveDeps(this.env, remembered));
      if (step.waitMs !== undefined)
        return {
          run: { ...run, revive: step.run, failures: 0, lastError: undefined },
          waitMs: step.waitMs,
          changes: {},
        };
      const took = formatSeconds(now() - run.revive.startedAt);
      const text = `Server is up at ${hostOf(this.env.SERVER_ADDR)} (${took})`;
      return { run: undefined, changes: { lastRun: { ok: true, at: now(), text }, hibernated: undefined } };
    }
    const step = await hibernateStep(run.hibernate, hibernateDeps(this.env));
    if (step.waitMs !== undefined)
      return {
        run: { ...run, hibernate: step.run, failures: 0, lastError: undefined },
        waitMs: step.waitMs,
        changes: {},
      };
    const h = step.run;
    if (h.aborted) {
      const lastRun = { ok: false, at: now(), text: `Not hibernated: ${h.aborted}.` };
      return { run: undefined, changes: { ...notHibernated(), lastRun } };
    }
    const gb = h.snapshot?.sizeGb;
    const cost = gb === undefined ? "" : `; asleep it costs $${(gb * SNAPSHOT_PRICE_PER_GB).toFixed(2)} a month`;
    const text = `💤 Hibernated in ${formatSeconds(now() - h.startedAt)}: snapshot ${h.snapshot?.name}${cost}. Type /start to wake it.`;
    return {
      run: undefined,
      changes: { ...hibernatedNow({ ...run, hibernate: h }), lastRun: { ok: true, at: now(), text } },
    };
  }

  /** The first wait after an error (RETRY_MS). */
  #retryMs(): number {
    const ms = Number(this.env.RETRY_MS ?? RETRY_MS);
    return Number.isFinite(ms) && ms > 0 ? ms : RETRY_MS;
  }

  /** How long a reply follows a run (Discord keeps its token 15 minutes). */
  #replyMs(): number {
    const ms = Number(this.env.REPLY_MS ?? REPLY_MS);
    return Number.isFinite(ms) && ms > 0 ? ms : REPLY_MS;
  }

  /** A reply that follows the run; one too old to edit any more is forgotten, and the outcome goes to the channel. */
  #addReply(state: ControlState, token: string, now: number): void {
    const kept = state.replies.filter((r) => now - r.since < this.#replyMs());
    if (state.run && kept.length < state.replies.length) state.toChannel = true;
    state.replies = [...kept, { token, since: now }];
  }

  /**
   * Edits each following reply to the run's progress (only when it changed); then, with the state read again, notes
   * what each shows and forgets those that ended, keeping replies that joined meanwhile. A reply whose token expires
   * before the next look says so in its last edit; then, and when the end could not be shown in a reply, the outcome
   * goes to the channel through OUTCOME_WEBHOOK_URL, and /status keeps it.
   */
  async #follow(state: ControlState, alarmAt: number, onlyEnding = false): Promise<void> {
    const now = Date.now();
    const text = progress(state, now);
    const replyMs = this.#replyMs();
    const nextLook = state.run ? alarmAt : now;
    const results = new Map<string, Delivery>();
    const handedOver = new Set<string>();
    for (const reply of state.replies) {
      if (onlyEnding && !reply.ending) continue;
      if (now - reply.since >= replyMs) results.set(reply.token, "gone");
      else if (state.run && nextLook - reply.since >= replyMs) {
        handedOver.add(reply.token);
        const where = this.env.OUTCOME_WEBHOOK_URL
          ? "the outcome will be posted in this channel"
          : "/status will say how it ended";
        const last = `${text}\nThis reply can follow no longer (Discord allows 15 minutes): ${where}.`;
        results.set(reply.token, await editReply(this.env, reply.token, last));
      } else if (reply.shown !== text) results.set(reply.token, await editReply(this.env, reply.token, text));
    }
    // The run ended and Discord failed the edit that shows it (a 5xx, no answer): tried again while the token lasts.
    const retryMs = this.#retryMs();
    const again = new Set(
      state.replies
        .filter((r) => !state.run && results.get(r.token) === "failed" && now + retryMs - r.since < replyMs)
        .map((r) => r.token),
    );
    const lost = [...results].some(
      ([token, r]) => r === "gone" || handedOver.has(token) || (!state.run && r !== "ok" && !again.has(token)),
    );
    let posted: Delivery | undefined;
    if (!state.run && (state.toChannel || lost)) {
      posted = await postToChannel(this.env, text);
      console.log(`outcome to the channel: ${posted}`);
    }
    // Nothing edited, nothing posted (a look while a step waits): the state has nothing new to note.
    if (!results.size && posted === undefined) return;
    const after = await this.#load();
    after.replies = after.replies.flatMap((reply) => {
      const edited = results.get(reply.token);
      if (edited === undefined) return [reply];
      if (again.has(reply.token)) return [{ ...reply, ending: true }];
      // A reply stops following once it shows the end, once Discord refused it (expired), or once handed over.
      if (!after.run || edited === "gone" || handedOver.has(reply.token)) return [];
      return edited === "ok" ? [{ ...reply, shown: text }] : [reply];
    });
    if (state.run && lost) after.toChannel = true;
    if (again.size && !after.run) await this.ctx.storage.setAlarm(Date.now() + retryMs);
    if (posted !== undefined) {
      after.toChannel = undefined;
      if (after.lastRun && after.lastRun.at === state.lastRun?.at) after.lastRun = { ...after.lastRun, missed: true };
    }
    await this.#save(after);
  }
}

/** What a step decided: the run after it (undefined: ended), when to look again, and what the state learns. */
interface Outcome {
  run: Run | undefined;
  waitMs?: number | undefined;
  changes: Partial<Pick<ControlState, "lastRun" | "hibernated" | "hibernatedBoot" | "heartbeat">>;
}

/** What the state learns when a hibernation has destroyed its droplet: hibernated, that boot's requests refused. */
function hibernatedNow(run: Run & { kind: "hibernate" }): Outcome["changes"] {
  const h = run.hibernate;
  return {
    hibernated: { since: Date.now(), snapshotGb: h.snapshot?.sizeGb, droplet: h.droplet },
    hibernatedBoot: run.bootId,
    heartbeat: undefined,
  };
}

/**
 * What the state learns when a hibernation ends without destroying the droplet: the VM stopped the game before it
 * asked, and the droplet may be off (shut down for its snapshot), so the heartbeat before it ("running") no longer
 * says anything: /start revives (powers it on, starts the game) instead of answering "already up".
 */
function notHibernated(): Outcome["changes"] {
  return { heartbeat: undefined };
}

function newRun(kind: "revive" | "hibernate", now: number): Run {
  return kind === "revive"
    ? { kind, revive: newReviveRun(now), failures: 0, startedAt: now }
    : { kind, hibernate: newHibernateRun(now), failures: 0, startedAt: now };
}

function fresh(state: ControlState, now: number): Heartbeat | undefined {
  const beat = state.heartbeat;
  return beat && now - beat.at < FRESH_MS ? beat : undefined;
}

function players(beat: Heartbeat): string {
  if (beat.online === 0) return "Nobody is online.";
  // At most 20 names: a reply has 2000 characters.
  const shown = beat.players.slice(0, 20).map(escapeMarkdown).join(", ");
  const more = beat.players.length > 20 ? ` and ${beat.online - 20} more` : "";
  const names = beat.players.length ? `: ${shown}${more}` : "";
  return `${beat.online} player${beat.online === 1 ? "" : "s"} online${names}.`;
}

function hostOf(serverAddr: string): string {
  return serverAddr.replace(/:25565$/, "");
}

function formatSeconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** What a run is waiting for, by phase. */
const WAITING: Record<string, string> = {
  droplet: "Creating the VM from the newest snapshot…",
  active: "Waiting for the VM to boot…",
  dns: "Repointing DNS…",
  game: "Waiting for the game to answer…",
  find: "Finding the VM…",
  shutdown: "Shutting the VM down…",
  off: "Waiting for the VM to be off…",
  snapshot: "Taking the snapshot (a few minutes)…",
  listed: "Waiting for the snapshot to be listed…",
  destroy: "Destroying the VM…",
  prune: "Deleting older snapshots…",
};

/** The run's steps so far, as the reply shows them. */
function progress(state: ControlState, now: number): string {
  const run = state.run;
  if (!run) return state.lastRun?.text ?? describe(state, now);
  const steps = stepsOf(run);
  const lines = steps.done.map((d) => `✅ ${d.text}`);
  lines.push(`⏳ ${WAITING[steps.phase] ?? "…"}`);
  if (run.lastError) lines.push(`⚠️ ${run.lastError.slice(0, 300)} (trying again)`);
  const what = run.kind === "revive" ? "Waking the server up" : "Hibernating the server";
  // No running clock in it: the reply is edited when a step ends, not at every look.
  return `${what}…\n${lines.join("\n")}`;
}

/** /status: hibernated, running, or not known. */
function describe(state: ControlState, now: number): string {
  if (state.run) return progress(state, now);
  const last = state.lastRun;
  // A run that failed or was aborted in the last day is said under the state, and one whose end a reply missed.
  const recent = last && now - last.at < 24 * 3600_000;
  const failed = recent && !last.ok ? `\n⚠️ ${last.text}` : "";
  const missed = recent && last.ok && last.missed ? `\nLast run (${relative(last.at)}): ${last.text}` : "";
  return `${describeServer(state, now)}${failed}${missed}`;
}

function describeServer(state: ControlState, now: number): string {
  const beat = fresh(state, now);
  const backups = (b: Heartbeat | undefined) =>
    [
      b?.lastBackup ? `Last backup ${relative(b.lastBackup)}.` : "",
      b?.lastDrill ? `Last restore drill ${relative(b.lastDrill.at)}: ${b.lastDrill.ok ? "passed" : "FAILED"}.` : "",
    ]
      .filter(Boolean)
      .join(" ");
  if (state.hibernated) {
    const gb = state.hibernated.snapshotGb;
    const cost =
      gb === undefined
        ? ""
        : ` Asleep it costs $${(gb * SNAPSHOT_PRICE_PER_GB).toFixed(2)} a month (${gb} GB snapshot).`;
    const text = `💤 Hibernated since ${relative(state.hibernated.since)}.${cost} ${backups(state.heartbeat)} Type /start to wake it.`;
    return text.replace(/ {2,}/g, " ");
  }
  if (beat && beat.serverState !== "running") {
    // The VM answers; the game does not run (offline, starting, stopping: the panel's state in the heartbeat).
    return `🟡 The VM is up; the game is ${escapeMarkdown(beat.serverState)}. ${backups(beat)}`.trim();
  }
  if (beat) return `🟢 Running. ${players(beat)} ${backups(beat)}`.trim();
  if (state.heartbeat) {
    return `❔ No word from the VM since ${relative(state.heartbeat.at)}: it may be down. Type /start to bring it up.`;
  }
  return "❔ No word from the VM yet: its idle monitor sends one every few minutes once WORKER_URL is set.";
}

/** The boot id a VM request's body carries (`bootId`), if it carries a well-formed one. */
function bootOf(body: string): string | undefined {
  try {
    const boot = (JSON.parse(body) as { bootId?: unknown } | null)?.bootId;
    return typeof boot === "string" && BOOT_ID.test(boot) ? boot : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The VM's heartbeat, parsed with its schema (core's records.ts, which the idle monitor writes it by): signed, but
 * never trusted to be well-formed. A time ahead of the Worker's clock by more than a minute is not one.
 */
function readHeartbeat(body: string, now: number): Heartbeat | undefined {
  const parsed = HeartbeatRecord.safeParse(parseJsonOrUndefined(body));
  if (!parsed.success) return undefined;
  const { lastBackup, lastDrill, ...beat } = parsed.data;
  const time = (t: number | undefined) => (t !== undefined && t <= now + 60_000 ? t : undefined);
  const drillAt = time(lastDrill?.at);
  return {
    ...beat,
    at: now,
    lastBackup: time(lastBackup),
    lastDrill: drillAt === undefined ? undefined : { at: drillAt, ok: lastDrill?.ok === true },
  };
}
