import { describe, expect, it } from "vitest";
import { decide, type IdleSettings, type IdleState, type Observation } from "../src/decide.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const SETTINGS: IdleSettings = { idleAfterMs: 30 * MIN, cooldownMs: 120 * MIN, stopAfterMs: undefined };

function seen(players: number | undefined, state: Observation["state"] = "running"): Observation {
  return { state, players, names: [], source: players === undefined ? "panel" : "ping", notes: [] };
}

/** Feeds polls one minute apart and returns the actions with their minute. */
function run(
  polls: Array<number | undefined>,
  options: { settings?: Partial<IdleSettings>; state?: IdleState; backupOk?: boolean; logDone?: number } = {},
) {
  const settings = { ...SETTINGS, ...options.settings };
  let state: IdleState = options.state ?? {};
  const actions: string[] = [];
  polls.forEach((players, minute) => {
    const now = T0 + minute * MIN;
    const decision = decide(state, seen(players), settings, now, options.logDone);
    state = decision.state;
    if (decision.action !== "none") {
      actions.push(`${decision.action}@${minute}`);
      if (decision.action === "backup") {
        state.lastIdleBackup = now;
        if (options.backupOk !== false) state.lastBackupOk = now + 1000;
      }
      if (decision.action === "recovery") {
        state.lastPlayBackup = now;
        if (options.backupOk !== false) state.lastBackupOk = now + 1000;
      }
      if (decision.action === "stop") state.idleStop = now;
    }
  });
  return { actions, state };
}

const played = (minutes: number) => Array.from({ length: minutes }, () => 2);
const empty = (minutes: number) => Array.from({ length: minutes }, () => 0);

describe("decide", () => {
  it("backs up once, IDLE_AFTER after the last player left", () => {
    expect(run([...played(10), ...empty(120)]).actions).toEqual(["backup@40"]);
  });

  it("does nothing when nobody played since the last backup", () => {
    expect(run(empty(200)).actions).toEqual([]);
    const backedUpAfterPlay = run([...played(10), ...empty(100)], { logDone: T0 + 20 * MIN });
    expect(backedUpAfterPlay.actions).toEqual([]);
  });

  it("counts a backup from mc-backup.log made before the play as old", () => {
    expect(run([...played(10), ...empty(60)], { logDone: T0 - 60 * MIN }).actions).toEqual(["backup@40"]);
  });

  it("waits for the cooldown before the next idle period's backup", () => {
    // play, idle backup at 40; play again at 45-49, empty from 50: due at 80, cooldown ends at 160.
    const { actions } = run([...played(10), ...empty(35), ...played(5), ...empty(150)]);
    expect(actions).toEqual(["backup@40", "backup@160"]);
  });

  it("a failed backup is tried again after the cooldown", () => {
    expect(run([...played(1), ...empty(300)], { backupOk: false }).actions).toEqual([
      "backup@31",
      "backup@151",
      "backup@271",
    ]);
  });

  it("does not count idle time while nobody can tell who plays", () => {
    const polls = [...played(5), ...empty(20), ...Array.from({ length: 20 }, () => undefined), ...empty(29)];
    expect(run(polls).actions).toEqual([]);
    expect(run([...polls, 0]).actions).toEqual([]);
    expect(run([...polls, 0, 0]).actions).toEqual(["backup@75"]);
  });

  it("stops the server after IDLE_STOP_AFTER, only once it is backed up", () => {
    const settings = { stopAfterMs: 60 * MIN };
    expect(run([...played(10), ...empty(100)], { settings }).actions).toEqual(["backup@40", "stop@70"]);
    expect(run([...played(10), ...empty(100)], { settings, backupOk: false }).actions).toEqual(["backup@40"]);
    // Started again and still nobody: stopped again one IDLE_STOP_AFTER later, not at every poll.
    expect(run([...played(10), ...empty(140)], { settings }).actions).toEqual(["backup@40", "stop@70", "stop@130"]);
    // Never backed up at all: no stop.
    expect(run(empty(100), { settings }).actions).toEqual([]);
  });

  it("names players, source and the next step in its line", () => {
    const decision = decide(
      { lastActivity: T0 - 10 * MIN, idleSince: T0 - 10 * MIN },
      {
        state: "running",
        players: 0,
        names: [],
        source: "log",
        notes: ["no ping answer on 127.0.0.1:25565 (timeout)"],
      },
      SETTINGS,
      T0,
      undefined,
    );
    expect(decision.line).toBe(
      "0 players online [log], server running; no ping answer on 127.0.0.1:25565 (timeout), empty for 10 min 0 s; idle backup in 20 min 0 s",
    );
  });
});

describe("a recovery point while people play (BACKUP_WHILE_PLAYING)", () => {
  const hourly = { settings: { whilePlayingMs: 60 * MIN } };

  it("backs up once an hour of continuous play, then idles as before", () => {
    const { actions } = run([...played(190), ...empty(35)], hourly);
    expect(actions).toEqual(["recovery@60", "recovery@120", "recovery@180", "backup@220"]);
  });

  it("counts from the last successful backup, from any source (the 06:00 one included)", () => {
    // The log's backup 30 minutes into play: the next recovery point is an hour after it.
    expect(run(played(100), { ...hourly, logDone: T0 + 30 * MIN }).actions).toEqual(["recovery@90"]);
  });

  it("does not retry a failed one every poll: the next try is an hour later", () => {
    expect(run(played(150), { ...hourly, backupOk: false }).actions).toEqual(["recovery@60", "recovery@120"]);
  });

  it("starts over with each session: short sessions with breaks give none", () => {
    const sessions = [...played(40), ...empty(5), ...played(40), ...empty(5), ...played(40)];
    expect(run(sessions, { settings: { whilePlayingMs: 60 * MIN, idleAfterMs: 600 * MIN } }).actions).toEqual([]);
  });

  it("is off when BACKUP_WHILE_PLAYING is off", () => {
    expect(run(played(200)).actions).toEqual([]);
  });
});
