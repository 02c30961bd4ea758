import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { type DigitalOcean, type Droplet, publicIpv4 } from "./digitalocean.ts";
import { KEEP_SNAPSHOTS_DEFAULT } from "./keep.ts";
import { type FindOptions, findDroplet, type ServerIdentity, serverSnapshots, snapshotName } from "./snapshots.ts";

export { KEEP_SNAPSHOTS_DEFAULT };

/**
 * Hibernate as steps (issue 19), for a caller that cannot wait an hour in one call (the Worker's Durable Object): the
 * VM has already stopped the game and backed up when it asks; the steps shut the droplet down, snapshot it, find the
 * snapshot listed, destroy the droplet and keep the newest snapshots of this server (snapshots.ts: its identity is in
 * each snapshot's name; another server's snapshots are never touched). The run's state goes in and comes out. Never a
 * destroy without a completed, listed snapshot; and right before the shutdown and the destroy the game is pinged: a
 * player online aborts the run and the droplet is kept. Fetch only.
 */
export type HibernatePhase = "find" | "shutdown" | "off" | "snapshot" | "listed" | "destroy" | "prune" | "done";

/** The game VM as hibernation remembers it: what revive recreates, and its monthly price for the cost line. */
export interface HibernatedDroplet {
  id: number;
  name: string;
  size: string;
  region: string;
  tags: string[];
  priceMonthly?: number | undefined;
}

/** What hibernation remembers of `droplet`. */
export function hibernatedDroplet(droplet: Droplet): HibernatedDroplet {
  return {
    id: droplet.id,
    name: droplet.name,
    size: droplet.size_slug,
    region: droplet.region.slug,
    tags: droplet.tags,
    priceMonthly: droplet.size?.price_monthly,
  };
}

export interface HibernateRun {
  phase: HibernatePhase;
  startedAt: number;
  phaseSince: number;
  droplet?: HibernatedDroplet;
  ip?: string | undefined;
  actionId?: number;
  /** Set once the droplet was powered off after its clean shutdown failed or did not finish: which. */
  poweredOff?: "failed" | "did not finish";
  /** The snapshot asked for, then found listed. */
  snapshot?: { name: string; id?: string; sizeGb?: number };
  /** Snapshots DigitalOcean ended "errored" so far: after MAX_SNAPSHOT_ERRORS the run ends, the droplet kept. */
  snapshotErrors?: number;
  done: Array<{ at: number; text: string }>;
  /** Set when the run ended without destroying anything (a player came back). */
  aborted?: string;
}

export interface HibernateDeps {
  digitalocean: DigitalOcean;
  find: FindOptions;
  /** Which server this is: its droplet, the name of its snapshots, the snapshots pruned. */
  server: ServerIdentity;
  /** The players answering at the VM's `ip` (undefined: the game does not answer). */
  players(ip: string): Promise<number | undefined>;
  /** This server's snapshots to keep (the new one counted). */
  keep: number;
  /** Called right before the destroy, the snapshot listed (the CLI asks the operator; throwing stops the run). */
  beforeDestroy?: (run: HibernateRun) => Promise<void>;
  now(): number;
  pollMs?: number;
  timeouts?: Partial<HibernateTimeouts>;
}

export interface HibernateTimeouts {
  shutdownMs: number;
  snapshotMs: number;
}

const TIMEOUTS: HibernateTimeouts = { shutdownMs: 3 * 60_000, snapshotMs: 90 * 60_000 };

/**
 * Snapshots that may end "errored" before the run ends without destroying anything. Each new snapshot asked is a step
 * that succeeds, so without this bound a snapshot that always fails was asked again for good: the run never ended,
 * and neither did its reply, nor a /start waiting for it.
 */
const MAX_SNAPSHOT_ERRORS = 3;

export function newHibernateRun(now: number): HibernateRun {
  return { phase: "find", startedAt: now, phaseSince: now, done: [] };
}

export interface HibernateStep {
  run: HibernateRun;
  waitMs: number | undefined;
}

export async function hibernateStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  switch (run.phase) {
    case "find":
      return findStep(run, deps);
    case "shutdown":
      return shutdownStep(run, deps);
    case "off":
      return offStep(run, deps);
    case "snapshot":
      return snapshotStep(run, deps);
    case "listed":
      return listedStep(run, deps);
    case "destroy":
      return destroyStep(run, deps);
    case "prune":
      return pruneStep(run, deps);
    case "done":
      return { run, waitMs: undefined };
  }
}

function next(
  run: HibernateRun,
  deps: HibernateDeps,
  phase: HibernatePhase,
  text: string,
  more: Partial<HibernateRun> = {},
) {
  const now = deps.now();
  return {
    run: { ...run, ...more, phase, phaseSince: now, done: [...run.done, { at: now, text }] },
    waitMs: phase === "done" ? undefined : 0,
  };
}

function wait(run: HibernateRun, deps: HibernateDeps, timeout: keyof HibernateTimeouts, what: string): HibernateStep {
  const limit = { ...TIMEOUTS, ...deps.timeouts }[timeout];
  if (deps.now() - run.phaseSince >= limit) {
    throw new JobError(`${what} in ${formatDuration(limit)}`, {
      hint: `the droplet ${run.droplet?.name} was kept: try again to keep waiting, or look at the DigitalOcean control panel`,
    });
  }
  return { run, waitMs: deps.pollMs ?? 5000 };
}

/** A player online: the run ends here, nothing destroyed. */
async function someonePlays(
  run: HibernateRun,
  deps: HibernateDeps,
  before: string,
): Promise<HibernateStep | undefined> {
  if (!run.ip) return undefined;
  const online = await deps.players(run.ip);
  if (!online) return undefined;
  const why = `${online} player${online === 1 ? "" : "s"} online ${before}: hibernation aborted, the droplet is kept`;
  return {
    run: { ...run, phase: "done", aborted: why, done: [...run.done, { at: deps.now(), text: why }] },
    waitMs: undefined,
  };
}

async function findStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const droplet: Droplet | undefined = await findDroplet(deps.digitalocean, deps.find, deps.server.key);
  if (!droplet) {
    return {
      run: { ...run, phase: "done", aborted: "no droplet to hibernate: already hibernated?" },
      waitMs: undefined,
    };
  }
  const phase = droplet.status === "off" ? "snapshot" : "shutdown";
  return next(run, deps, phase, `Found droplet ${droplet.name} (${droplet.status})`, {
    droplet: hibernatedDroplet(droplet),
    ip: publicIpv4(droplet),
  });
}

/** DigitalOcean refuses a new action while one is pending (a shutdown that has not finished): said plainly. */
async function dropletAction(run: HibernateRun, deps: HibernateDeps, type: string) {
  try {
    return await deps.digitalocean.action(run.droplet?.id as number, type);
  } catch (error) {
    if (!/pending event/.test((error as Error).message)) throw error;
    throw new JobError(`${run.droplet?.name} is still shutting down (DigitalOcean has the shutdown pending)`, {
      hint: "nothing was destroyed; run hibernate again in a few minutes: it carries on",
    });
  }
}

async function shutdownStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const stop = await someonePlays(run, deps, "before the shutdown");
  if (stop) return stop;
  // A shutdown asked before whose answer was lost (a 5xx after doing it, the Worker stopped midway) may have been done,
  // or be under way: the droplet off goes on to the snapshot, one with an action pending is waited for as a shutdown.
  const droplet = await deps.digitalocean.droplet(run.droplet?.id as number);
  if (droplet?.status === "off") return next(run, deps, "snapshot", `Shut ${droplet.name} down`);
  let action: Awaited<ReturnType<typeof dropletAction>>;
  try {
    action = await dropletAction(run, deps, "shutdown");
  } catch (error) {
    if (!/still shutting down/.test((error as Error).message)) throw error;
    const { actionId: _, ...waiting } = run;
    return { run: { ...waiting, phase: "off", phaseSince: deps.now() }, waitMs: deps.pollMs ?? 5000 };
  }
  return { run: { ...run, phase: "off", phaseSince: deps.now(), actionId: action.id }, waitMs: deps.pollMs ?? 5000 };
}

/** Waits for the clean shutdown; when it fails or does not finish, powers the droplet off. */
async function offStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const droplet = await deps.digitalocean.droplet(run.droplet?.id as number);
  if (!droplet) {
    // Destroyed by hand meanwhile: nothing left to hibernate; the run ends, said as such.
    const why = `droplet ${run.droplet?.name} is gone before its snapshot: nothing to hibernate`;
    return { run: { ...run, phase: "done", aborted: why }, waitMs: undefined };
  }
  if (droplet.status === "off") {
    const how = run.poweredOff
      ? `Powered ${droplet.name} off (the clean shutdown ${run.poweredOff})`
      : `Shut ${droplet.name} down`;
    return next(run, deps, "snapshot", how);
  }
  const action = run.actionId === undefined ? undefined : await deps.digitalocean.getAction(run.actionId);
  const late = deps.now() - run.phaseSince >= { ...TIMEOUTS, ...deps.timeouts }.shutdownMs;
  if (action?.status === "errored" || late) {
    if (run.poweredOff) {
      throw new JobError(`${droplet.name} would not power off`, {
        hint: "nothing was destroyed; power it off in the DigitalOcean control panel",
      });
    }
    const off = await dropletAction(run, deps, "power_off");
    const poweredOff = action?.status === "errored" ? "failed" : "did not finish";
    return { run: { ...run, actionId: off.id, phaseSince: deps.now(), poweredOff }, waitMs: deps.pollMs ?? 5000 };
  }
  return { run, waitMs: deps.pollMs ?? 5000 };
}

/** Asks for the snapshot once, then waits for its action. */
async function snapshotStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const id = run.droplet?.id as number;
  if (!run.snapshot) {
    // A snapshot asked by a step that never saw DigitalOcean's answer (the Worker stopped midway) is this run's, not
    // taken twice: the droplet's actions say it was asked (first, so that one ending between the two reads is seen),
    // the list of snapshots gives its name once it is done.
    const asked = (await deps.digitalocean.recentActions(id)).filter(
      (a) => a.type === "snapshot" && a.status !== "errored" && Date.parse(a.started_at ?? "") >= run.startedAt,
    );
    const listed = await deps.digitalocean.snapshots();
    const taken = serverSnapshots(listed, deps.server).find(
      (s) => s.resource_id === String(id) && Date.parse(s.created_at) >= run.startedAt,
    );
    if (taken)
      return { run: { ...run, phase: "listed", snapshot: { name: taken.name }, phaseSince: deps.now() }, waitMs: 0 };
    if (asked.length) return wait(run, deps, "snapshotMs", "the snapshot asked before (its answer lost) did not end");
    const name = snapshotName(deps.server.key, deps.now(), listed);
    let action: Awaited<ReturnType<DigitalOcean["action"]>>;
    try {
      action = await deps.digitalocean.action(id, "snapshot", { name });
    } catch (error) {
      // The droplet has an action pending: that snapshot, still being taken. Waited for (then found just above).
      if (!/pending event/.test((error as Error).message)) throw error;
      return wait(run, deps, "snapshotMs", `the droplet's pending action (a snapshot asked before?) did not end`);
    }
    return {
      run: { ...run, snapshot: { name }, actionId: action.id, phaseSince: deps.now() },
      waitMs: deps.pollMs ?? 5000,
    };
  }
  const { name } = run.snapshot;
  const action = await deps.digitalocean.getAction(run.actionId as number);
  // Said once it is listed, with its size.
  if (action.status === "completed") return { run: { ...run, phase: "listed", phaseSince: deps.now() }, waitMs: 0 };
  if (action.status === "errored") {
    const errors = (run.snapshotErrors ?? 0) + 1;
    if (errors >= MAX_SNAPSHOT_ERRORS) {
      const why = `${errors} snapshots of ${run.droplet?.name} failed: nothing destroyed, the droplet was kept (powered off)`;
      return {
        run: {
          ...run,
          phase: "done",
          aborted: why,
          snapshotErrors: errors,
          done: [...run.done, { at: deps.now(), text: why }],
        },
        waitMs: undefined,
      };
    }
    // Forgotten: the next try (the next alarm, or the next run) takes a new snapshot.
    delete run.snapshot;
    delete run.actionId;
    run.snapshotErrors = errors;
    throw new JobError(`the snapshot ${name} failed`, {
      hint: `the droplet ${run.droplet?.name} was kept (powered off): run hibernate again to take a new snapshot, or power it on from the control panel`,
    });
  }
  return wait(run, deps, "snapshotMs", `the snapshot ${run.snapshot.name} did not finish`);
}

/** Only a snapshot DigitalOcean lists, of this droplet, lets the destroy happen. */
async function listedStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const name = run.snapshot?.name;
  const listed = (await deps.digitalocean.snapshots()).find(
    (s) => s.name === name && s.resource_id === String(run.droplet?.id),
  );
  if (!listed) return wait(run, deps, "snapshotMs", `the snapshot ${name} is not listed`);
  return next(run, deps, "destroy", `Snapshot ${listed.name} taken (${listed.size_gigabytes} GB)`, {
    snapshot: { name: listed.name, id: listed.id, sizeGb: listed.size_gigabytes },
  });
}

async function destroyStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  const stop = await someonePlays(run, deps, "before the destroy");
  if (stop) return stop;
  const id = run.droplet?.id as number;
  // The rule: never destroy a droplet unless a completed snapshot of it is listed. Checked once more, right before.
  const listed = (await deps.digitalocean.snapshots()).some(
    (s) => s.id === run.snapshot?.id && s.resource_id === String(id),
  );
  if (!listed) {
    throw new JobError(`the snapshot ${run.snapshot?.name} is not listed any more`, { hint: "nothing was destroyed" });
  }
  await deps.beforeDestroy?.(run);
  if (await deps.digitalocean.droplet(id)) await deps.digitalocean.deleteDroplet(id);
  return next(run, deps, "prune", `Destroyed droplet ${run.droplet?.name}`);
}

async function pruneStep(run: HibernateRun, deps: HibernateDeps): Promise<HibernateStep> {
  if (!(Number.isInteger(deps.keep) && deps.keep >= 1)) {
    throw new JobError(`keep ${deps.keep} snapshots? nothing deleted`, { hint: "give a whole number of 1 or more" });
  }
  // Only this server's: named for it, or of the earlier naming and taken of the droplet just destroyed (or one it knew).
  const server = { ...deps.server, dropletIds: [...(deps.server.dropletIds ?? []), run.droplet?.id as number] };
  const old = serverSnapshots(await deps.digitalocean.snapshots(), server)
    .filter((s) => s.id !== run.snapshot?.id)
    .slice(Math.max(0, deps.keep - 1));
  for (const s of old) await deps.digitalocean.deleteSnapshot(s.id);
  const text = old.length
    ? `Deleted ${old.length} older snapshot${old.length === 1 ? "" : "s"} (keeping ${deps.keep}): ${old.map((s) => s.name).join(", ")}`
    : "Hibernated";
  return next(run, deps, "done", text);
}
