import { waitUntil } from "./hostile.ts";
import type { PanelCall, PanelStandIn } from "./panel.ts";

/**
 * Issue 44's scene: a /start from Discord just after the panel cached "offline" (pterodactyl/panel
 * ResourceUtilizationController caches /resources for 20 s). The panel stand-in's cache is held (holdResources), the
 * game started through the panel's power route and waited for until it runs; from then on every request the panel
 * gets is recorded with what `look` finds in the volume as it arrives, so that a test sees what the tool touched
 * before and after each of its requests.
 */
export interface CachedOffline {
  /** The requests since the game runs, in arrival order, each with what `look` said as it arrived. */
  seen: Array<{ call: PanelCall; volume: string }>;
  /** Lets the panel's cache age again: once the tool no longer needs the stale answer (it waits for a start next). */
  release(): void;
  /**
   * Waits until the tool's stop was confirmed (the first "Server must be online" after its stop: stopOrder's
   * atStopped), then releases the cache, so that the tool sees the start it asks for next.
   */
  releaseWhenStopped(timeoutMs?: number): Promise<void>;
  /** Stops recording, and releases the cache. */
  close(): void;
}

export async function startUnderCachedOffline(panel: PanelStandIn, look: () => string): Promise<CachedOffline> {
  const held = panel.holdResources();
  const answer = await fetch(`${panel.url}/api/client/servers/${panel.server.identifier}/power`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${panel.apiKey}`,
      Accept: "application/json",
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ signal: "start" }),
  });
  if (answer.status !== 204) throw new Error(`the panel stand-in answered the start ${answer.status}`);
  await panel.waitForState("running");
  const seen: CachedOffline["seen"] = [];
  const stop = panel.onRequest((call) => seen.push({ call, volume: look() }));
  return {
    seen,
    release: held.release,
    async releaseWhenStopped(timeoutMs = 60_000) {
      await waitUntil(
        () => stopOrder(panel, { seen }).atStopped !== undefined,
        "Server must be online after the tool's stop",
        timeoutMs,
      );
      held.release();
    },
    close() {
      stop();
      held.release();
    },
  };
}

/** What a tool did with the game that ran under the cached "offline", as the panel saw it. */
export interface StopOrder {
  /** The console commands and power signals before the tool's stop, with the panel's answers: "command list 204". */
  beforeStop: string[];
  /** What the volume held when the tool's stop arrived (undefined: it sent none). */
  atStop: string | undefined;
  /** When the first "Server must be online" (502) after the stop arrived: the tool's confirmation. */
  atStopped: string | undefined;
  /** When the tool's start arrived (undefined: it sent none). */
  atStart: string | undefined;
  /** The game was offline from the confirmation on, and stayed so until the start (or the end of the record). */
  offlineFromStoppedToStart: boolean;
}

export function stopOrder(panel: PanelStandIn, { seen }: Pick<CachedOffline, "seen">): StopOrder {
  const said = ({ call }: { call: PanelCall }) =>
    `${call.kind} ${call.kind === "power" ? call.signal : call.command} ${call.status}`;
  const acts = seen.filter(({ call }) => call.kind === "power" || call.kind === "command");
  const stop = acts.findIndex(({ call }) => call.kind === "power" && call.signal === "stop");
  const after = stop < 0 ? [] : acts.slice(stop + 1);
  const stopped = after.find(({ call }) => call.kind === "command" && call.status === 502);
  const start = after.find(({ call }) => call.kind === "power" && call.signal === "start");
  const history = panel.stateHistory();
  const from = stopped?.call.at ?? Number.POSITIVE_INFINITY;
  const until = start?.call.at ?? Number.POSITIVE_INFINITY;
  const offline =
    stopped !== undefined &&
    history.findLast((h) => h.at <= from)?.state === "offline" &&
    history.every((h) => h.at <= from || h.at >= until);
  return {
    beforeStop: (stop < 0 ? acts : acts.slice(0, stop)).map(said),
    atStop: stop < 0 ? undefined : acts[stop]?.volume,
    atStopped: stopped?.volume,
    atStart: start?.volume,
    offlineFromStoppedToStart: offline,
  };
}
