import { DurableObject } from "cloudflare:workers";
import { verifyVmRequest } from "@mcops/core/vm-signature";
import { type HibernateRun, hibernateStep, newHibernateRun } from "@mcops/revive/cloud/hibernate-steps";
import { newReviveRun, type ReviveRun, reviveStep } from "@mcops/revive/cloud/revive-steps";
import { editReply, escapeMarkdown, relative } from "./discord.ts";
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
}

type Run = ({ kind: "revive"; revive: ReviveRun } | { kind: "hibernate"; hibernate: HibernateRun }) & {
  /** Errors in a row: the next try waits longer. */
  failures: number;
  lastError?: string | undefined;
};

/** The steps done so far, and when the run began, whatever its kind. */
function stepsOf(run: Run): { startedAt: number; done: Array<{ text: string }>; phase: string } {
  return run.kind === "revive" ? run.revive : run.hibernate;
}

export interface ControlState {
  /** The newest VM request accepted (replays are refused). */
  lastVmAt: number;
  heartbeat?: Heartbeat | undefined;
  hibernated?: { since: number; snapshotGb?: number | undefined; droplet?: RememberedDroplet | undefined } | undefined;
  stopAsked?: { at: number; by: string } | undefined;
  run?: Run | undefined;
  /** Interaction replies that follow the run: edited as each step ends (Discord keeps a token 15 minutes). */
  replies: Array<{ token: string; since: number; shown?: string | undefined }>;
  /** How the last run ended. */
  lastRun?: { ok: boolean; at: number; text: string } | undefined;
}

/** A heartbeat older than this: the VM is not known to run. */
const FRESH_MS = 15 * 60_000;
/** Discord refuses edits after 15 minutes. */
const REPLY_MS = 14 * 60_000;
/** After an error, the next try: 15 s, doubling, at most 5 minutes. */
const RETRY_MS = 15_000;
const MAX_RETRY_MS = 5 * 60_000;
/** Errors in a row after which a run gives up (about 15 minutes of tries at the real waits). */
const MAX_FAILURES = 6;
/** DigitalOcean's price of snapshot storage, USD per GB-month. */
const SNAPSHOT_PRICE_PER_GB = 0.06;

export class ServerControl extends DurableObject<Env> {
  async #load(): Promise<ControlState> {
    return (await this.ctx.storage.get<ControlState>("state")) ?? { lastVmAt: 0, replies: [] };
  }

  async #save(state: ControlState): Promise<void> {
    await this.ctx.storage.put("state", state);
  }

  /** /status, for everyone. */
  async status(): Promise<string> {
    return describe(await this.#load(), Date.now());
  }

  /** /start: the state when the server runs; else a revive begins (or is joined) and the reply follows it. */
  async start(token: string, user: string): Promise<{ deferred: true } | { deferred: false; content: string }> {
    const state = await this.#load();
    const now = Date.now();
    const beat = fresh(state, now);
    if (!state.run && beat?.serverState === "running") {
      return { deferred: false, content: `The server is already up. ${players(beat)}` };
    }
    state.replies = [...state.replies.filter((r) => now - r.since < REPLY_MS), { token, since: now }];
    if (!state.run) {
      state.run = { kind: "revive", revive: newReviveRun(now), failures: 0 };
      state.stopAsked = undefined;
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
    if (state.run) return "The server is waking up: use /stop once it is up.";
    if (state.hibernated) return `The server is already hibernated (since ${relative(state.hibernated.since)}).`;
    const beat = fresh(state, now);
    if (!beat) return "No word from the VM for a while: it cannot be asked to hibernate. Is it up?";
    if (beat.online > 0 && !force) {
      return `${players(beat)} Type \`/stop force:true\` to hibernate it anyway.`;
    }
    state.stopAsked = { at: now, by: user };
    // The reply follows the hibernation the VM will ask for.
    state.replies = [...state.replies.filter((r) => now - r.since < REPLY_MS), { token, since: now }];
    await this.#save(state);
    return "Asked the VM to hibernate: at its next heartbeat (within 5 minutes) it stops the game, backs up, and is snapshotted and destroyed.";
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
    const state = await this.#load();
    const now = Date.now();
    const check = await verifyVmRequest(
      this.env.VM_SECRET,
      body,
      { get: (name) => (name.endsWith("timestamp") ? headers.timestamp : headers.signature) },
      now,
      state.lastVmAt,
    );
    if (!check.ok) return { status: 401, body: { error: check.reason } };
    state.lastVmAt = check.timestamp;
    if (kind === "hibernate") return this.#hibernate(state, body, now);
    const beat = readHeartbeat(body, now);
    if (!beat) {
      await this.#save(state);
      return { status: 400, body: { error: "not a heartbeat" } };
    }
    state.heartbeat = beat;
    state.hibernated = undefined;
    await this.#save(state);
    return {
      status: 200,
      body: {
        hibernate: state.stopAsked !== undefined,
        start: state.run?.kind === "revive" && state.run.revive.phase === "game",
      },
    };
  }

  /** The VM stopped the game and backed up: it asks to be snapshotted and destroyed. */
  async #hibernate(state: ControlState, body: string, now: number): Promise<{ status: number; body: unknown }> {
    let players = 0;
    try {
      const value = JSON.parse(body) as { players?: unknown };
      players = typeof value.players === "number" ? value.players : 0;
    } catch {
      await this.#save(state);
      return { status: 400, body: { error: "not JSON" } };
    }
    if (state.run) {
      await this.#save(state);
      return { status: 409, body: { error: `a ${state.run.kind} is under way` } };
    }
    if (players > 0) {
      await this.#save(state);
      return { status: 409, body: { error: `${players} players online` } };
    }
    state.run = { kind: "hibernate", hibernate: newHibernateRun(now), failures: 0 };
    state.stopAsked = undefined;
    await this.ctx.storage.setAlarm(now);
    await this.#save(state);
    return { status: 202, body: { hibernating: true } };
  }

  /** One step of the run under way; then the replies that follow it are edited. */
  override async alarm(): Promise<void> {
    const state = await this.#load();
    const run = state.run;
    if (!run) return;
    console.log(`${run.kind} step: ${stepsOf(run).phase}`);
    let waitMs: number | undefined;
    try {
      waitMs = await this.#step(state, run);
      run.failures = 0;
      run.lastError = undefined;
    } catch (error) {
      const message = (error as Error).message;
      run.failures++;
      run.lastError = message;
      console.log(`${run.kind} step failed (${run.failures}): ${message}`);
      if (run.failures >= MAX_FAILURES) {
        // Given up: said in the replies and /status; a new /start (or the VM's next request) begins again.
        const what = run.kind === "revive" ? "Could not wake the server up" : "Could not hibernate the server";
        state.lastRun = {
          ok: false,
          at: Date.now(),
          text: `${what}: ${message.slice(0, 500)} (${run.failures} tries).`,
        };
        state.run = undefined;
      } else {
        waitMs = Math.min(Number(this.env.RETRY_MS ?? RETRY_MS) * 2 ** (run.failures - 1), MAX_RETRY_MS);
      }
    }
    if (waitMs !== undefined) await this.ctx.storage.setAlarm(Date.now() + waitMs);
    await this.#save(state);
    await this.#follow(state);
  }

  /** One step of the run; undefined when it has ended (and the state says how). */
  async #step(state: ControlState, run: Run): Promise<number | undefined> {
    const now = () => Date.now();
    if (run.kind === "revive") {
      const step = await reviveStep(run.revive, reviveDeps(this.env, state.hibernated?.droplet));
      run.revive = step.run;
      if (step.waitMs !== undefined) return step.waitMs;
      const took = formatSeconds(now() - run.revive.startedAt);
      state.lastRun = { ok: true, at: now(), text: `Server is up at ${hostOf(this.env.SERVER_ADDR)} (${took})` };
      state.run = undefined;
      state.hibernated = undefined;
      return undefined;
    }
    const step = await hibernateStep(run.hibernate, hibernateDeps(this.env));
    run.hibernate = step.run;
    if (step.waitMs !== undefined) return step.waitMs;
    const h = run.hibernate;
    state.run = undefined;
    if (h.aborted) {
      state.lastRun = { ok: false, at: now(), text: `Not hibernated: ${h.aborted}.` };
      return undefined;
    }
    const gb = h.snapshot?.sizeGb;
    state.hibernated = { since: now(), snapshotGb: gb, droplet: h.droplet };
    state.heartbeat = undefined;
    const cost = gb === undefined ? "" : `; asleep it costs ${(gb * SNAPSHOT_PRICE_PER_GB).toFixed(2)} a month`;
    state.lastRun = {
      ok: true,
      at: now(),
      text: `💤 Hibernated in ${formatSeconds(now() - h.startedAt)}: snapshot ${h.snapshot?.name}${cost}. Type /start to wake it.`,
    };
    return undefined;
  }

  /** Edits each following reply to the run's progress (only when it changed). */
  async #follow(state: ControlState): Promise<void> {
    const now = Date.now();
    const text = progress(state, now);
    const keep: ControlState["replies"] = [];
    for (const reply of state.replies) {
      if (now - reply.since >= REPLY_MS) continue;
      if (reply.shown !== text && !(await editReply(this.env, reply.token, text).catch(() => false))) continue;
      if (state.run) keep.push({ ...reply, shown: text });
    }
    state.replies = keep;
    await this.#save(state);
  }
}

function fresh(state: ControlState, now: number): Heartbeat | undefined {
  const beat = state.heartbeat;
  return beat && now - beat.at < FRESH_MS ? beat : undefined;
}

function players(beat: Heartbeat): string {
  if (beat.online === 0) return "Nobody is online.";
  const names = beat.players.length ? `: ${beat.players.map(escapeMarkdown).join(", ")}` : "";
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
  // A run that failed or was aborted in the last day is said under the state.
  const failed = last && !last.ok && now - last.at < 24 * 3600_000 ? `\n⚠️ ${last.text}` : "";
  return `${describeServer(state, now)}${failed}`;
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
  if (beat) return `🟢 Running. ${players(beat)} ${backups(beat)}`.trim();
  if (state.heartbeat) {
    return `❔ No word from the VM since ${relative(state.heartbeat.at)}: it may be down. Type /start to bring it up.`;
  }
  return "❔ No word from the VM yet: its idle monitor sends one every few minutes once WORKER_URL is set.";
}

const NAME = /^[A-Za-z0-9_.*]{1,16}$/;

/** The VM's heartbeat, checked field by field (it is signed, but never trusted to be well-formed). */
function readHeartbeat(body: string, now: number): Heartbeat | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const b = value as {
    serverState?: unknown;
    players?: unknown;
    online?: unknown;
    lastBackup?: unknown;
    lastDrill?: { at?: unknown; ok?: unknown };
  };
  if (typeof b?.serverState !== "string" || !Array.isArray(b.players)) return undefined;
  const names = b.players.filter((p): p is string => typeof p === "string" && NAME.test(p)).slice(0, 100);
  const time = (t: unknown) =>
    typeof t === "number" && Number.isFinite(t) && t > 0 && t <= now + 60_000 ? t : undefined;
  const drillAt = time(b.lastDrill?.at);
  return {
    at: now,
    serverState: b.serverState.slice(0, 20),
    players: names,
    online:
      typeof b.online === "number" && Number.isInteger(b.online) && b.online >= names.length && b.online <= 100_000
        ? b.online
        : names.length,
    lastBackup: time(b.lastBackup),
    lastDrill: drillAt === undefined ? undefined : { at: drillAt, ok: b.lastDrill?.ok === true },
  };
}
