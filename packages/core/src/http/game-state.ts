import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { type PanelClient, PanelError, type PowerState } from "./panel-client.ts";

/**
 * Whether the game really runs, and a stop confirmed, for every tool that touches the game's files (issue 44) and for
 * the backup's save-off (world autosave.ts).
 *
 * The panel's /resources is no proof: the panel caches it for 20 s (pterodactyl/panel
 * app/Http/Controllers/Api/Client/Servers/ResourceUtilizationController.php, `cache->remember($key, now + 20 s, ...)`),
 * so an "offline" there may be a game started (from Discord, from the panel) up to 20 s ago. What the tools build on
 * instead (pterodactyl/wings at f1c5bbd, pterodactyl/panel at 706db62):
 * - A console command goes to Wings live, never cached: Wings answers 502 "Cannot send commands to a stopped server
 *   instance." unless the server's container runs (wings router/router_server.go postServerCommands, whose
 *   environment/docker/environment.go IsRunning inspects the container), which the panel passes on as "Server must be
 *   online in order to send commands." (panel CommandController.php; PanelError kind "server-offline"). A command
 *   taken (204) is a container that runs.
 * - A stop to a server that is already offline changes nothing: Wings leaves an offline state as it is and stops a
 *   container that is not running, which Docker takes as done (wings environment/docker/power.go Stop, WaitForStop).
 *   So a game found running is sent stop however it ended meanwhile.
 * - A /resources read more than 20 s after a change is Wings' own state.
 * - The panel says "Server must be online" for any 502 from Wings' side, a proxy's in front of Wings too (Wings
 *   restarting while the game's container runs on): after the panel showed the server in another state than offline,
 *   it is taken as the game not running only once the panel shows the server offline (within recheckTimeoutMs,
 *   above the 20 s cache).
 * What no answer tells: Wings prepares a start (the sync with the panel, the configuration files, the container
 * removed and made again: wings server/power.go HandlePowerAction, onBeforeStart; environment/docker/power.go Start)
 * before the container runs, and says "offline" for the first part of it. A start asked a moment before is seen once
 * its container runs, not sooner.
 */

/**
 * The command that asks the game whether it runs: `list`, which every Minecraft server has (vanilla, Bukkit, Spigot,
 * Paper, Forge, NeoForge, Fabric and Quilt keep it), which only reads (the players online, one line in the console)
 * and changes nothing, unlike save-off, save-on or stop, and which, unlike a made-up command, is no error in the log.
 * A game still loading or already stopping has its console line wait in the container's input or dropped, harmless
 * either way. The panel records it in the server's activity (server:console.command), as every command.
 */
export const PROBE_COMMAND = "list";

/** How long the panel caches /resources (ResourceUtilizationController): a read this long after a change is Wings'. */
export const RESOURCES_CACHE_MS = 20_000;
/** After "Server must be online" to a server not shown offline: the longest wait for the panel to show it offline. */
const RECHECK_TIMEOUT_MS = 30_000;
/** The longest pause between looks while a stop is waited for (the first ones are shorter: 250 ms, doubling). */
const POLL_MS = 5000;

/** What a console command met: the game, or Wings saying its container does not run. */
export type ConsoleAnswer =
  /** The game took it (Wings' 204): its container runs. */
  | { kind: "taken" }
  /** "Server must be online" (Wings' 502), and the panel shows the server offline: the game does not run. */
  | { kind: "not-running" }
  /** "Server must be online", but the panel does not show the server offline: a proxy's 502 in front of Wings? */
  | { kind: "unconfirmed"; reason: string };

export interface ConsoleOptions {
  /** The state the panel's /resources showed just before (cached: up to 20 s old). */
  shown: PowerState;
  /** After "Server must be online" to a server not shown offline, how long the panel may take to show it offline. */
  recheckTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Sends `line` to the game's console and says whether the game took it, or whether its container does not run.
 * Another failure is thrown as it is (the panel or Wings not answering): the caller cannot tell whether the game runs.
 */
export async function sendToGame(panel: PanelClient, line: string, options: ConsoleOptions): Promise<ConsoleAnswer> {
  try {
    await panel.command(line);
    return { kind: "taken" };
  } catch (error) {
    if (!(error instanceof PanelError) || error.kind !== "server-offline") throw error;
  }
  if (options.shown === "offline") return { kind: "not-running" };
  // A game that just ended is shown offline once the panel's cache of its running state goes; behind a proxy's 502
  // the game may run on, and the panel then shows it running or cannot reach Wings.
  const { recheckTimeoutMs = RECHECK_TIMEOUT_MS, signal } = options;
  try {
    await panel.waitForState("offline", { timeoutMs: recheckTimeoutMs, signal });
    return { kind: "not-running" };
  } catch (error) {
    return { kind: "unconfirmed", reason: error instanceof Error ? error.message : String(error) };
  }
}

export interface GameStateOptions {
  clock: Clock;
  /** Told when the panel's state is not the game's (a cached "offline" of a game that runs). */
  logger?: Logger | undefined;
  signal?: AbortSignal | undefined;
  /** See ConsoleOptions; default 30 s. */
  recheckTimeoutMs?: number | undefined;
  /** How long the panel caches /resources; default RESOURCES_CACHE_MS (a test's stand-in caches for less). */
  cacheMs?: number | undefined;
}

/** The server's state as the game's container tells it, beside what the panel showed. */
export interface GameState {
  /** What the panel's /resources said (cached: up to 20 s old). */
  shown: PowerState;
  /**
   * `shown`, told by Wings where it can be: "running" for a game that took a command while shown offline, "offline"
   * for one whose container does not run while shown running. A start or a stop under way is as shown.
   */
  state: PowerState;
}

/**
 * What the game is doing now. The panel's state first; a server shown starting or stopping is taken as it is (its
 * files are not at rest either way); offline or running is asked of the game itself with PROBE_COMMAND. A panel or a
 * Wings that cannot say is a PanelError: nothing is known, nothing may be touched.
 */
export async function gameState(panel: PanelClient, options: GameStateOptions): Promise<GameState> {
  const shown = (await panel.resources()).state;
  if (shown === "starting" || shown === "stopping") return { shown, state: shown };
  const runs = await containerRuns(panel, shown, options);
  const state = runs ? "running" : "offline";
  if (shown === "offline" && runs) {
    options.logger?.info(
      "the panel showed the server offline (its answer is cached for 20 s), but the game took a console command: it runs",
    );
  } else if (shown === "running" && !runs) {
    options.logger?.info("the panel showed the server running, but the game's container does not run: it is offline");
  }
  return { shown, state };
}

export interface StopOptions extends GameStateOptions {
  /** The longest wait for the game to stop. */
  timeoutMs: number;
  /** The longest pause between looks (default 5 s). */
  pollMs?: number | undefined;
  /** Called once the panel took the stop: the game may stop from then on (a caller that starts it again needs to know). */
  sent?: (() => void) | undefined;
}

/**
 * Stops the game (a power stop) and waits until its container no longer runs: the panel shows the server offline and
 * the game's console answers "Server must be online". An "offline" the panel still has in its cache from before a start
 * is never taken for the stop: the game still takes commands then. PanelError "timeout" when it does not stop in
 * `timeoutMs`.
 *
 * Wings drops a stop that comes while another power action holds the server's lock (a start under way: wings
 * server/power.go HandlePowerAction takes the lock at once or gives up, the panel's DaemonPowerRepository asking with
 * no wait_seconds); it has answered 202 already. A "running" read a cache window after the stop is Wings' own: the stop
 * was not acted on, and is sent again (to a game stopping meanwhile it is dropped the same way, harmless).
 */
export async function stopGame(panel: PanelClient, options: StopOptions): Promise<void> {
  const { clock, timeoutMs, pollMs = POLL_MS, signal, cacheMs = RESOURCES_CACHE_MS } = options;
  await panel.power("stop");
  options.sent?.();
  let sentAt = clock.now();
  const deadline = clock.now() + timeoutMs;
  let interval = Math.min(pollMs, 250);
  for (;;) {
    const shown = (await panel.resources()).state;
    if (shown === "offline" && !(await containerRuns(panel, shown, options))) return;
    if (clock.now() >= deadline) {
      const still = shown === "offline" ? "the panel shows it offline, but its container still runs" : `it is ${shown}`;
      throw new PanelError("timeout", `the server did not stop in ${Math.round(timeoutMs / 1000)} s (${still})`, {
        hint: "look at the panel console and the server's latest.log",
      });
    }
    if (shown === "running" && clock.now() - sentAt > cacheMs + 1000) {
      options.logger?.info("the server still runs: Wings did not act on the stop (a start held it); stopping it again");
      await panel.power("stop");
      sentAt = clock.now();
    }
    // Quick looks first (a stop often takes a second or two), then every pollMs.
    await clock.sleep(Math.min(interval, Math.max(1, deadline - clock.now())), signal);
    interval = Math.min(pollMs, interval * 2);
  }
}

/**
 * Whether the game's container runs, asked with PROBE_COMMAND (the panel showed `shown`). Wings' 500 (it could not
 * inspect the container: none, after a `docker rm` or a prune, until a start makes it again; or Docker failing) says
 * nothing either way: Wings' own state decides, read once the panel's cache can hold nothing from before the question.
 */
async function containerRuns(panel: PanelClient, shown: PowerState, options: GameStateOptions): Promise<boolean> {
  const { clock, signal, recheckTimeoutMs, cacheMs = RESOURCES_CACHE_MS } = options;
  let answer: ConsoleAnswer;
  try {
    answer = await sendToGame(panel, PROBE_COMMAND, { shown, recheckTimeoutMs, signal });
  } catch (error) {
    if (!(error instanceof PanelError && error.kind === "wings" && error.wingsStatus === 500)) throw error;
    options.logger?.info(
      `${error.message}; waiting ${Math.ceil(cacheMs / 1000) + 1} s for the panel to show Wings' own state`,
    );
    // The cache's expiry is kept in whole seconds by some of Laravel's stores: a second more.
    await clock.sleep(cacheMs + 1000, signal);
    return (await panel.resources()).state !== "offline";
  }
  if (answer.kind === "unconfirmed") {
    throw new PanelError(
      "wings",
      `cannot tell whether the game runs: the panel showed the server ${shown}, its console answers "Server must be online", and the panel does not show it offline (${answer.reason})`,
      {
        hint: "Wings may be unreachable behind its proxy while the game runs on: systemctl status wings and journalctl -u wings -n 50 on the node; then try again",
      },
    );
  }
  return answer.kind === "taken";
}
