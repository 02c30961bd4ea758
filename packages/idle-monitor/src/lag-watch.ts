import type { Clock } from "@mcops/core/clock";
import { formatDuration, formatSpan } from "@mcops/core/format";
import type { PanelClient } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { VolumeDir } from "@mcops/core/volume";
import { gameLogEnd, gameLogSince, parseTickAnswer, type TickAnswer } from "@mcops/game-log/tick-rate";
import type { IdleState } from "./decide.ts";

/**
 * Lag (issue 18): while players are online, every TPS_EVERY the server is asked its tick rate on the console (`tps`
 * on Paper, Purpur and Folia; `tick query` on vanilla 1.20.3 and later; a server that knows neither is said once and
 * not asked again) and the answer read from the game log. TPS_WARN_COUNT samples in a row under TPS_WARN post one
 * warning; the first sample at or above it afterwards posts once that it is over.
 */
export const LOW_SAMPLES = 3;
/** How long the answer may take to reach the log, and how often it is looked for meanwhile. */
const ANSWER_WAIT_MS = 5_000;
const ANSWER_POLL_MS = 250;

export interface LagSettings {
  everyMs: number | undefined;
  warnTps: number;
  worldDir: string;
}

export interface LagPost {
  kind: "lag" | "over";
  title: string;
  description: string;
}

/** Asks and reads one sample when it is time; the state records the command that works and the streak. */
export async function sampleTps(
  run: { panel: PanelClient; clock: Clock; logger: Logger; settings: LagSettings },
  previous: IdleState,
  players: number,
): Promise<{ state: IdleState; tps: number | undefined; post?: LagPost | undefined }> {
  const { clock, logger, settings } = run;
  const now = clock.now();
  const state: IdleState = { ...previous };
  const due = state.tpsAskedAt === undefined || now - state.tpsAskedAt >= (settings.everyMs ?? 0);
  if (!settings.everyMs || players <= 0 || state.tpsCommand === "none" || !due) return { state, tps: state.lastTps };
  state.tpsAskedAt = now;
  let command = state.tpsCommand ?? "tps";
  let answer = await ask(run, command);
  if (typeof answer === "object" && "unknown" in answer && command === "tps") {
    command = "tick query";
    answer = await ask(run, command);
  }
  if (typeof answer === "object" && "unknown" in answer) {
    state.tpsCommand = "none";
    logger.info("the server answers neither tps nor tick query (vanilla before 1.20.3?): its tick rate is not watched");
    return { state, tps: undefined };
  }
  if (answer === "no log") return { state, tps: state.lastTps }; // said where the log is read (observe.ts)
  if (!answer) {
    logger.warn(`no answer to ${command} in the game log within ${formatDuration(ANSWER_WAIT_MS)}`, { echo: false });
    return { state, tps: state.lastTps };
  }
  state.tpsCommand = command;
  state.lastTps = answer.tps;
  return { state, tps: answer.tps, post: judge(state, answer.tps, players, settings) };
}

/** The streak of low samples, and the one post at its start (after LOW_SAMPLES) and at its end. */
function judge(state: IdleState, tps: number, players: number, settings: LagSettings): LagPost | undefined {
  const who = `${players} player${players === 1 ? "" : "s"}`;
  if (tps >= settings.warnTps) {
    state.lowSamples = undefined;
    if (state.lagAlert === undefined) return undefined;
    state.lagAlert = undefined;
    return { kind: "over", title: `Lag over: ${tps.toFixed(1)} TPS`, description: `${who} online.` };
  }
  const low = [...(state.lowSamples ?? []), tps].slice(-LOW_SAMPLES);
  state.lowSamples = low;
  if (low.length < LOW_SAMPLES || state.lagAlert !== undefined) return undefined;
  state.lagAlert = state.tpsAskedAt;
  const mean = low.reduce((sum, value) => sum + value, 0) / low.length;
  const span = formatSpan(LOW_SAMPLES * (settings.everyMs ?? 0));
  return {
    kind: "lag",
    title: `Lag: ${mean.toFixed(1)} TPS for ${span} (${who})`,
    description: `The server runs ${mean.toFixed(1)} ticks a second of 20 (TPS_WARN ${settings.warnTps}): players see blocks come back and mobs stutter. Look for a farm, a redstone clock or a plugin that takes the time (Paper: /spark profiler, or timings).`,
  };
}

/** Sends the command and waits (bounded) for its answer in the game log; nothing is sent when there is no log. */
async function ask(
  run: { panel: PanelClient; clock: Clock; settings: LagSettings },
  command: string,
): Promise<TickAnswer | "no log" | undefined> {
  let volume: VolumeDir;
  try {
    volume = VolumeDir.open(run.settings.worldDir);
  } catch {
    return "no log"; // a volume that cannot be opened is said where the game log is read (observe.ts)
  }
  try {
    const from = gameLogEnd(volume);
    if (from === undefined) return "no log";
    await run.panel.command(command);
    for (let waited = 0; waited <= ANSWER_WAIT_MS; waited += ANSWER_POLL_MS) {
      const text = gameLogSince(volume, from);
      const answer = text === undefined ? undefined : parseTickAnswer(text);
      if (answer) return answer;
      await run.clock.sleep(ANSWER_POLL_MS);
    }
    return undefined;
  } finally {
    volume.close();
  }
}
