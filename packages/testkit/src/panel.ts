/**
 * A loopback stand-in for the Pterodactyl panel's client API (`/api/client`): bearer-key auth, the server details,
 * resources, power and command routes with the panel's status codes and error envelopes, a power state machine with
 * timings (and the container Wings starts behind it), the game's console answers written to a latest.log, the per-user
 * rate limit, Wings' own errors as the panel passes them on, and fault injection.
 *
 * Where it comes from (PANEL_ROUTES names each route's own source): pterodactyl/panel (MIT) and pterodactyl/wings
 * (MIT). What every route shares:
 * - the order a request goes through: Laravel's router first (an unknown path 404, a wrong method 405, before any
 *   middleware), then the `api` group (auth:sanctum 401, IsValidJson 400), `throttle:api.client` (moved ahead of the
 *   bindings by laravel/framework src/Illuminate/Foundation/Http/Kernel.php $middlewarePriority), the server binding
 *   (404), RequireClientApiKey (403), AuthenticateServerAccess (409), the form request (422), the controller; panel
 *   app/Providers/RouteServiceProvider.php, app/Http/Kernel.php, routes/api-client.php;
 * - the error envelope `{"errors":[{"code","status","detail"}]}` (`meta.source_field`/`rule` on a 422):
 *   panel app/Exceptions/Handler.php convertExceptionToArray and invalidJson;
 * - the rate limit: 720 a minute per user, shared by every key of the user (panel config/http.php, RouteServiceProvider
 *   `api.client`: `->by($request->user()->uuid)`), with
 *   X-RateLimit-Limit/Remaining on every answer after it and Retry-After/X-RateLimit-Reset on a 429
 *   (laravel/framework src/Illuminate/Routing/Middleware/ThrottleRequests.php getHeaders);
 * - Wings' errors: the panel's DaemonConnectionException (app/Exceptions/Http/Connection/DaemonConnectionException.php)
 *   passes Wings' status on (power, command) or keeps 504 with "(code: N)" in the detail (resources, whose
 *   DaemonServerRepository getDetails passes useStatusCode false); see wingsAnswer;
 * - bodies as the panel's Fractal serializer writes them, `{object, attributes}` and `{object: "list", data}`, with
 *   included relations under attributes.relationships (panel
 *   app/Extensions/League/Fractal/Serializers/PterodactylSerializer.php).
 * Real answers copied from these sources are in test/contracts/panel/ and replayed by panel.contract.test.ts.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname } from "node:path";
import type { RouteSource } from "./contract.ts";
import type { Fault, HeaderMap, JsonParse, Loopback, RateLimitFault, RateLimitOptions, StatusFault } from "./http.ts";
import {
  applyFault,
  Changes,
  clockTime,
  FaultQueue,
  isPlainObject,
  listenLoopback,
  mediaType,
  parseJson,
  randomString,
  readBody,
  reasonPhrase,
  SlidingWindowLimiter,
  sendAny,
  sendEmpty,
  sendJson,
  TimerSet,
} from "./http.ts";

export type ServerState = "offline" | "starting" | "running" | "stopping";
/** The server's condition: its `status` column, or a transfer in progress ("transferring" shows as is_transferring only). */
export type ServerStatus = null | "suspended" | "installing" | "transferring";
export type PanelRoute = "details" | "resources" | "power" | "command" | "startup" | "docker-image";
export type PanelCallKind = PanelRoute | "other";
/**
 * Wings' answer to the panel's next request to it, as the panel passes it on (DaemonConnectionException): `status`
 * is what Wings answered (404 server not loaded on the node, 401/403 the node's token refused, 500 an error such as a
 * missing container, 504 its own timeout), 502 from a proxy in front of Wings, or undefined for no answer at all
 * (Wings down, unreachable, or slower than the panel's 15 s Guzzle timeout). Only the routes that call Wings take it
 * (resources when its cache is stale, power, command); the details route never calls Wings.
 */
export interface WingsFault {
  kind: "wings";
  status?: number | undefined;
  times?: number;
}

/**
 * A fault, optionally only for one route. A status fault without a body is the panel's own error (its daemon
 * unreachable, an exception) and is answered where the real one arises: after authentication, the rate limit (so it
 * carries X-RateLimit-*) and the server lookup; a Wings fault is answered where the panel calls Wings. Every other
 * fault (a proxy's answer, a 429, a dropped or slow connection) comes before authentication.
 */
export type PanelFault = (Fault | WingsFault) & { route?: PanelRoute };

export interface PanelServerOptions {
  /** Default: a random UUID. The short identifier is its first 8 characters. */
  uuid?: string;
  name?: string;
  /** Default "offline". */
  state?: ServerState;
  /** Default null (installed, not suspended, not moving). */
  status?: ServerStatus;
  /** A server that does not begin offline has been up this long when the stand-in starts. Default 0. */
  uptimeMs?: number;
  /** The image its container runs (`docker_image`). Default "ghcr.io/pterodactyl/yolks:java_21". */
  dockerImage?: string;
  /** Its egg: the images it offers and its startup line (default the panel's vanilla egg's, see DEFAULT_EGG). */
  egg?: { dockerImages?: Record<string, string>; startup?: string };
  /**
   * What the key's user may do on the server (meta.user_permissions): default ["*"], the owner. A subuser's list
   * ("startup.read", "startup.docker-image", "control.start", ...) refuses the routes that need another one with
   * the panel's 403 (its form requests' permission(), app/Models/Permission.php).
   */
  permissions?: string[];
}

export interface PanelStandInOptions {
  /** Default: "ptlc_" + 43 random letters and digits. */
  apiKey?: string;
  /** Default: one offline server. */
  servers?: PanelServerOptions[];
  /**
   * How long "starting" and "stopping" last (default 150 ms each), and how long into "starting" the container runs
   * (default a fifth of startMs): Wings sets "starting", then removes and recreates the container and starts it
   * (pterodactyl/wings environment/docker/power.go Start, OnBeforeStart), and refuses console commands (502) until it
   * runs. Until then the start holds Wings' power lock: a stop, a restart or another start is dropped, a kill goes
   * through (see underPowerLock).
   */
  timings?: { startMs: number; stopMs: number; containerMs?: number };
  /**
   * The panel caches the resources answer per server: 20 s on a real panel (pterodactyl/panel
   * app/Http/Controllers/Api/Client/Servers/ResourceUtilizationController.php, `cache->remember(..., 20 s)`), so a state
   * change shows up to 20 s late. Default 250 ms, the same behaviour scaled down; 0 turns the cache off.
   */
  resourcesCacheMs?: number;
  /**
   * Per user, sliding window: every key of the user (apiKey, otherKeys, an application key) counts against the same
   * window. Default 720 per 60 000 ms, the real panel's default (pterodactyl/panel config/http.php
   * `rate_limit.client`, APP_API_CLIENT_RATELIMIT; app/Providers/RouteServiceProvider.php `api.client` keys it by the
   * user's uuid).
   */
  rateLimit?: RateLimitOptions;
  /** More client keys of the same user (Account → API Credentials holds several); they share its rate limit. */
  otherKeys?: string[];
  /** A latest.log the game's console answers are appended to (directories are created). */
  logFile?: string;
  /** Between "Saving the game" and "Saved the game". Default 20 ms. */
  saveDelayMs?: number;
  /**
   * Which game answers the console: "vanilla" (1.20.3 and later: `tick query`), "paper" (`tps` too), "old-vanilla"
   * (before 1.20.3: neither). Default "vanilla".
   */
  game?: "vanilla" | "paper" | "old-vanilla";
  /**
   * How long after answering 204 to a power signal the server acts on it. Wings answers the panel 202 and acts in a
   * goroutine afterwards (pterodactyl/wings router/router_server.go postServerPower: "Pass the actual heavy processing
   * off to a separate thread"), so the state never changes before the answer. Default 40 ms; 0 acts before answering
   * (not what the real panel does).
   */
  powerDelayMs?: number;
  /**
   * The stand-in's clock for uptimes, the resources cache, the rate limit (its window and X-RateLimit-Reset) and the
   * times it records (default Date.now). A test that drives the tool with a virtual clock passes the same one, so that
   * an uptime or a cache age means the same thing to both; a test of the rate limit moves its own clock to decide
   * exactly which requests are still in the window. The stand-in's own delays (timings, powerDelayMs) stay real timers.
   */
  now?: () => number;
  /**
   * With `now` a virtual clock: moves it on by the time each of the stand-in's own steps takes (a delayed signal's
   * powerDelayMs, a stop's or start's timings) when the step happens, as real time would pass during them. Without it,
   * a restart done in real milliseconds takes no virtual time: a process that started after the signal has the
   * signal's own virtual time as its start, and looks exactly as old as the signal (CI: restart-with-warning never saw
   * the new process, on a machine busy enough that the whole restart ended before the tool's first look).
   */
  advance?: (ms: number) => void;
}

export interface PanelServer {
  uuid: string;
  /** The 8-character short id used in client API paths. */
  identifier: string;
  internalId: number;
  name: string;
}

export interface PanelCall {
  /** When the request arrived (the stand-in's clock: Date.now() unless `now` was given). */
  at: number;
  method: string;
  path: string;
  /** The server's identifier when it was found, else the id as written in the path. */
  serverId?: string;
  kind: PanelCallKind;
  signal?: string;
  command?: string;
  /** The status answered; 0 while pending or when a "drop" fault closed the connection. */
  status: number;
  /** When the answer was written (the stand-in's clock); undefined while pending or when the connection was dropped. */
  answeredAt?: number;
  /** The injected fault that answered (or delayed) this request. */
  fault?: PanelFault["kind"];
  /** settings/docker-image: the image asked for. */
  image?: string;
}

export interface PanelStandIn {
  /** The panel_url: http://127.0.0.1:PORT */
  url: string;
  apiKey: string;
  /** The timing in effect: the real panel's, scaled down, unless the options said otherwise. */
  timing: { resourcesCacheMs: number; powerDelayMs: number };
  servers: PanelServer[];
  /** servers[0] */
  server: PanelServer;
  /** `id` is the identifier or the uuid; default the first server. */
  state(id?: string): ServerState;
  /**
   * Set the state directly (pending transitions and delayed signals are cancelled, Wings' power lock let go, no console
   * lines are written).
   */
  setState(state: ServerState, id?: string): void;
  setStatus(status: ServerStatus, id?: string): void;
  /**
   * Remove the server's container, as `docker rm` or a pruning would (the state stays): Wings then answers console
   * commands 500 (its IsRunning inspects a container that does not exist), which the panel passes on in a
   * DaemonConnectionException. A start recreates it (Wings' OnBeforeStart).
   */
  removeContainer(id?: string): void;
  /**
   * Whether Wings' details answer carries the server's `state` (default true). Without it the panel's StatsTransformer
   * writes its default, `current_state: "stopped"` (pterodactyl/panel app/Transformers/Api/Client/StatsTransformer.php).
   */
  setStateReported(reported: boolean, id?: string): void;
  /** The memory the container uses while it is not offline (undefined: the usual figure of each state). */
  setMemory(bytes: number | undefined, id?: string): void;
  /** How long a tick takes (default 12.3 ms): what `tps` and `tick query` answer. */
  setTickMs(ms: number, id?: string): void;
  /** Every request, in arrival order, with the status answered. */
  calls: PanelCall[];
  /** The image the server's container runs now. */
  dockerImage(id?: string): string;
  /** Set the image as an administrator does (Servers → the server → Startup), whether or not the egg offers it. */
  setDockerImage(image: string, id?: string): void;
  /** The image switches the panel made through PUT settings/docker-image, in order (its server:startup.image activity). */
  imageChanges(id?: string): Array<{ from: string; to: string }>;
  /** Power signals the panel accepted (204), in order. */
  signals(id?: string): string[];
  /**
   * True while a server is between states on its (real) timers: a power signal Wings has not acted on yet, a start or
   * a stop under way. A virtual clock waits for it (`virtualClock`'s `settled`) before its time moves on.
   */
  busy(): boolean;
  /** Console commands the panel accepted (204), in order. */
  commands(id?: string): string[];
  /** Every state the server entered, in order, from its initial state on. */
  stateHistory(id?: string): Array<{ at: number; state: ServerState }>;
  /** The console lines written for the server (the same lines as in logFile). */
  console(id?: string): string[];
  inject(fault: PanelFault): void;
  /**
   * Holds the panel's resources cache of the server as it is now (filled now when it holds nothing, or nothing fresh)
   * until `release()`: every /resources answer is that one, whatever the server does meanwhile. It is the real panel's
   * cache (pterodactyl/panel app/Http/Controllers/Api/Client/Servers/ResourceUtilizationController.php,
   * `cache->remember(..., 20 s)`) at its longest: a test starts the game once the cache is held (a /start from Discord
   * just after the panel cached "offline") and releases it once the tool has done what the stale answer must not
   * decide, with no race against a cache window. After the release the cache ages as usual (resourcesCacheMs).
   */
  holdResources(id?: string): { release(): void };
  /**
   * Calls `listener` as each request arrives, once its route is known and before anything answers it (its status is
   * still 0): a test sees there what the volume holds at that request. Returns the function that removes it.
   */
  onRequest(listener: (call: PanelCall) => void): () => void;
  /** Resolves once the server is in `state`; rejects after `timeoutMs` (default 5000). */
  waitForState(state: ServerState, timeoutMs?: number, id?: string): Promise<void>;
  /**
   * Resolves once the server has been in `state` and the panel answered `count` resources requests since it entered it
   * (a tool that polls is seen waiting); rejects after `timeoutMs` (default 60 000).
   */
  waitForPolls(state: ServerState, count: number, timeoutMs?: number, id?: string): Promise<void>;
  /** Forget calls, console lines, rate-limit windows and pending faults (server states stay). */
  reset(): void;
  close(): Promise<void>;
}

/** The server's Docker container as Wings sees it: none, created (stopped or not yet started), or running. */
type Container = "absent" | "created" | "running";

interface Machine {
  info: PanelServer;
  state: ServerState;
  status: ServerStatus;
  container: Container;
  /** Wings' details answer carries `state` (setStateReported). */
  stateReported: boolean;
  /** When the container process started (entered "starting"); null while offline. */
  startedAt: number | null;
  /** A restart is waiting for the stop to finish. */
  pendingStart: boolean;
  /**
   * Wings' power lock (pterodactyl/wings server/power.go HandlePowerAction): held by the power action under way until
   * the server's container runs (a start, a restart) or the server is offline (a stop); undefined when it is free.
   */
  powerLock: "container" | "offline" | undefined;
  /** Accepted power signals not acted on yet (powerDelayMs). */
  delayedSignals: Set<NodeJS.Timeout>;
  /** A start's container not started yet (containerMs); a stop or a kill cancels it with the start. */
  containerStart: NodeJS.Timeout | undefined;
  transition: NodeJS.Timeout | undefined;
  cache: { at: number; body: unknown } | undefined;
  /** holdResources: the cache answers as it is, however old, until released. */
  cacheHeld: boolean;
  console: string[];
  history: Array<{ at: number; state: ServerState }>;
  /** setMemory's figure, over the usual one of the state. */
  memoryBytes: number | undefined;
  /** setTickMs's figure. */
  tickMs: number;
  image: string;
  egg: { dockerImages: Record<string, string>; startup: string };
  permissions: string[];
  imageChanges: Array<{ from: string; to: string }>;
}

const SIGNALS = ["start", "stop", "restart", "kill"];
/** The real panel's timing, scaled down (see resourcesCacheMs and powerDelayMs). */
export const DEFAULT_RESOURCES_CACHE_MS = 250;
export const DEFAULT_POWER_DELAY_MS = 40;
const GAME_VERSION = "1.21.4";
const PANEL = "pterodactyl/panel";
const WINGS = "pterodactyl/wings";

/**
 * Every route the stand-in answers and the source it follows (pterodactyl/panel at
 * 706db62c64d180f224f56c62953172c27daa5826, pterodactyl/wings at f1c5bbd42d423986e7017b4f3c43057a1b7d1717).
 */
export const PANEL_ROUTES: readonly RouteSource[] = [
  {
    method: "GET",
    path: "/api/client",
    source: `${PANEL} routes/api-client.php (api:client.index), app/Http/Controllers/Api/Client/ClientController.php index, app/Transformers/Api/Client/ServerTransformer.php; meta.pagination: thephpleague/fractal src/Serializer/ArraySerializer.php paginator`,
  },
  {
    method: "GET",
    path: "/api/client/servers/{server}",
    source: `${PANEL} routes/api-client.php (api:client:server.view), app/Http/Controllers/Api/Client/Servers/ServerController.php index, app/Transformers/Api/Client/ServerTransformer.php (+ AllocationTransformer.php, EggVariableTransformer.php), app/Http/Middleware/Api/Client/SubstituteClientBindings.php, app/Http/Middleware/Api/Client/Server/AuthenticateServerAccess.php`,
  },
  {
    method: "GET",
    path: "/api/client/servers/{server}/resources",
    source: `${PANEL} app/Http/Controllers/Api/Client/Servers/ResourceUtilizationController.php (cached 20 s), app/Transformers/Api/Client/StatsTransformer.php (current_state defaults to "stopped"), app/Repositories/Wings/DaemonServerRepository.php getDetails (DaemonConnectionException without Wings' status: 504, "(code: N)"); ${WINGS} server/server.go APIResponse, server/resources.go, environment/stats.go`,
  },
  {
    method: "POST",
    path: "/api/client/servers/{server}/power",
    source: `${PANEL} app/Http/Controllers/Api/Client/Servers/PowerController.php, app/Http/Requests/Api/Client/Servers/SendPowerRequest.php, app/Repositories/Wings/DaemonPowerRepository.php (DaemonConnectionException with Wings' status; no wait_seconds); ${WINGS} router/router_server.go postServerPower (202, acts afterwards), server/power.go HandlePowerAction and system/locker.go Acquire (the power lock taken at once or the action dropped: a start holds it until its container runs, a stop until the server is offline, a restart through both; a kill goes through), environment/docker/power.go Start, WaitForStop`,
  },
  {
    method: "POST",
    path: "/api/client/servers/{server}/command",
    source: `${PANEL} app/Http/Controllers/Api/Client/Servers/CommandController.php (Wings' 502 becomes "Server must be online in order to send commands.", any other error stays Wings' DaemonConnectionException), app/Repositories/Wings/DaemonCommandRepository.php, app/Http/Requests/Api/Client/Servers/SendCommandRequest.php; ${WINGS} router/router_server.go postServerCommands (502 unless the container runs, 500 when IsRunning fails: no container), environment/docker/environment.go IsRunning, environment/docker/power.go Start ("starting" before the container runs)`,
  },
  {
    method: "GET",
    path: "/api/client/servers/{server}/startup",
    source: `${PANEL} routes/api-client.php (startup), app/Http/Controllers/Api/Client/Servers/StartupController.php index (meta startup_command, docker_images, raw_startup_command), app/Http/Requests/Api/Client/Servers/Startup/GetStartupRequest.php (startup.read), app/Services/Servers/StartupCommandService.php, app/Transformers/Api/Client/EggVariableTransformer.php, tests/Integration/Api/Client/Server/Startup/GetStartupAndVariablesTest.php; the images: database/Seeders/eggs/minecraft/egg-vanilla-minecraft.json docker_images`,
  },
  {
    method: "PUT",
    path: "/api/client/servers/{server}/settings/docker-image",
    source: `${PANEL} routes/api-client.php (settings/docker-image), app/Http/Controllers/Api/Client/Servers/SettingsController.php dockerImage (400 when an administrator set the image, 204), app/Http/Requests/Api/Client/Servers/Settings/SetDockerImageRequest.php (startup.docker-image; in: the egg's images, else 422), app/Models/Permission.php`,
  },
];
/**
 * The panel's vanilla egg (database/Seeders/eggs/minecraft/egg-vanilla-minecraft.json; the Paper and Forge eggs offer
 * the same images): its Docker images, newest Java first, and its startup line.
 */
export const DEFAULT_EGG = {
  dockerImages: {
    "Java 21": "ghcr.io/pterodactyl/yolks:java_21",
    "Java 17": "ghcr.io/pterodactyl/yolks:java_17",
    "Java 16": "ghcr.io/pterodactyl/yolks:java_16",
    "Java 11": "ghcr.io/pterodactyl/yolks:java_11",
    "Java 8": "ghcr.io/pterodactyl/yolks:java_8",
  } as Record<string, string>,
  startup: "java -Xms128M -XX:MaxRAMPercentage=95.0 -jar {{SERVER_JARFILE}}",
};
const DEFAULT_IMAGE = "ghcr.io/pterodactyl/yolks:java_21";
const NODE_FQDN = "node1.example.test";
/** A documentation address (RFC 5737) for the servers' allocations. */
const ALLOCATION_IP = "192.0.2.10";
const EGG_VARIABLES = [
  {
    name: "Server Jar File",
    description: "The name of the server jarfile to run the server with.",
    env_variable: "SERVER_JARFILE",
    default_value: "server.jar",
    server_value: "server.jar",
    is_editable: true,
    rules: "required|regex:/^([\\w\\d._-]+)(\\.jar)$/",
  },
  {
    name: "Server Version",
    description:
      'The version of Minecraft Vanilla to install. Use "latest" to install the latest version, or use "snapshot" to install the latest snapshot. Go to Settings > Reinstall Server to apply.',
    env_variable: "VANILLA_VERSION",
    default_value: "latest",
    server_value: "latest",
    is_editable: true,
    rules: "required|string|between:3,15",
  },
];

/** What the vanilla console prints for the commands it answers in one line (save-all, stop, tellraw: see runCommand). */
const CONSOLE_ANSWERS = new Map<string, (args: string) => string>([
  ["save-off", () => "Automatic saving is now disabled"],
  ["save-on", () => "Automatic saving is now enabled"],
  ["say", (args) => `[Server] ${args}`],
  ["list", () => "There are 0 of a max of 20 players online: "],
]);

/** Java's Double.toString for the figures the game prints: 20.0, 11.2. */
const javaDouble = (value: number): string => (Number.isInteger(value) ? value.toFixed(1) : String(value));

/**
 * The tick-rate answers: Paper's `tps` (io.papermc.paper.command.TicksPerSecondCommand: "TPS from last 1m, 5m, 15m: "
 * in gold, each figure green above 18, yellow above 16, red below, capped at 20 with a * above 21, as legacy §
 * colour codes in the log) and vanilla's `tick query` (1.20.3+, net.minecraft.server.commands.TickCommand: the status
 * line, then "commands.tick.query.rate.running" of en_us.json, a message with a line break in it, then the
 * percentiles). Undefined when this game does not know the command.
 */
function tickAnswer(
  flavour: "vanilla" | "paper" | "old-vanilla",
  command: string,
  tickMs: number,
): string[] | undefined {
  const tps = Math.min(20, 1000 / tickMs);
  if (command === "tps" && flavour === "paper") {
    const colour = tps > 18 ? "§a" : tps > 16 ? "§e" : "§c";
    const figure = `${colour}${javaDouble(Math.round(tps * 100) / 100)}`;
    return [`§6TPS from last 1m, 5m, 15m: ${figure}§6, ${figure}§6, ${figure}`];
  }
  if (command === "tick query" && flavour !== "old-vanilla") {
    const ms = (value: number) => value.toFixed(1);
    return [
      tickMs > 50 ? "The game is running, but can't keep up with the target tick rate" : "The game is running normally",
      `Target tick rate: 20.0 per second.\nAverage time per tick: ${ms(tickMs)}ms (Target: 50.0ms)`,
      `Percentiles: P50: ${ms(tickMs)}ms P95: ${ms(tickMs * 1.2)}ms P99: ${ms(tickMs * 1.5)}ms, sample: 100`,
    ];
  }
  return undefined;
}

const CONFLICT_DETAIL: Record<Exclude<ServerStatus, null>, string> = {
  suspended: "This server is currently suspended and the functionality requested is unavailable.",
  installing: "This server has not yet completed its installation process, please try again later.",
  transferring: "This server is currently being transferred to a new machine, please try again later.",
};

/** The Pterodactyl error envelope: `{"errors":[{"code","status","detail"}]}`. */
function panelError(code: string, status: number, detail: string, meta?: Record<string, string>): unknown {
  return { errors: [{ code, status: String(status), detail, ...(meta ? { meta } : {}) }] };
}

/** What the stand-in keeps between requests. */
interface Panel {
  apiKey: string;
  /** Every client key of the user: apiKey and otherKeys. */
  keys: Set<string>;
  /** The user the keys belong to: the rate limit's key. */
  userUuid: string;
  cacheMs: number;
  powerDelayMs: number;
  /** The stand-in's clock (see PanelStandInOptions.now), and how its steps move a virtual one on (advance). */
  now: () => number;
  advance: ((ms: number) => void) | undefined;
  limiter: SlidingWindowLimiter;
  faults: FaultQueue<PanelFault>;
  timers: TimerSet;
  changes: Changes;
  calls: PanelCall[];
  /** onRequest's listeners. */
  listeners: Set<(call: PanelCall) => void>;
  machines: Machine[];
  game: Game;
}

export async function startPanelStandIn(options: PanelStandInOptions = {}): Promise<PanelStandIn> {
  const now = options.now ?? Date.now;
  if (options.logFile) mkdirSync(dirname(options.logFile), { recursive: true });
  const timers = new TimerSet();
  const changes = new Changes();
  const apiKey = options.apiKey ?? `ptlc_${randomString(43)}`;
  const timings = options.timings ?? { startMs: 150, stopMs: 150 };
  const panel: Panel = {
    apiKey,
    keys: new Set([apiKey, ...(options.otherKeys ?? [])]),
    userUuid: randomUUID(),
    cacheMs: options.resourcesCacheMs ?? DEFAULT_RESOURCES_CACHE_MS,
    powerDelayMs: options.powerDelayMs ?? DEFAULT_POWER_DELAY_MS,
    now,
    advance: options.advance,
    limiter: new SlidingWindowLimiter({
      ...(options.rateLimit ?? { limit: 720, windowMs: 60_000 }),
      countRejected: false,
      now,
    }),
    faults: new FaultQueue<PanelFault>(),
    timers,
    changes,
    calls: [],
    listeners: new Set(),
    machines: machinesOf(options.servers ?? [{}], now),
    game: gameOf({
      now,
      advance: options.advance,
      timers,
      changes,
      timings: { ...timings, containerMs: timings.containerMs ?? Math.round(timings.startMs / 5) },
      saveDelayMs: options.saveDelayMs ?? 20,
      logFile: options.logFile,
      flavour: options.game ?? "vanilla",
    }),
  };
  const server = await listenLoopback((req, res) => handle(panel, req, res));
  return standIn(panel, server);
}

function machinesOf(servers: PanelServerOptions[], now: () => number): Machine[] {
  const machines = servers.map((server, index): Machine => {
    const uuid = server.uuid ?? randomUUID();
    const state = server.state ?? "offline";
    return {
      info: { uuid, identifier: uuid.slice(0, 8), internalId: index + 1, name: server.name ?? `Survival ${index + 1}` },
      state,
      status: server.status ?? null,
      container: containerIn(state),
      stateReported: true,
      startedAt: state === "offline" ? null : now() - (server.uptimeMs ?? 0),
      pendingStart: false,
      powerLock: undefined,
      delayedSignals: new Set(),
      containerStart: undefined,
      memoryBytes: undefined,
      tickMs: 12.3,
      image: server.dockerImage ?? DEFAULT_IMAGE,
      egg: {
        dockerImages: { ...(server.egg?.dockerImages ?? DEFAULT_EGG.dockerImages) },
        startup: server.egg?.startup ?? DEFAULT_EGG.startup,
      },
      permissions: [...(server.permissions ?? ["*"])],
      imageChanges: [],
      transition: undefined,
      cache: undefined,
      cacheHeld: false,
      console: [],
      history: [{ at: now(), state }],
    };
  });
  if (machines.length === 0) throw new RangeError("the panel stand-in needs at least one server");
  return machines;
}

/** The container of a server Wings put in `state`: running once started, until the server is offline again. */
function containerIn(state: ServerState): Container {
  return state === "running" || state === "stopping" ? "running" : "created";
}

/** A server by its identifier (8 characters) or its uuid. */
function findMachine(panel: Panel, id: string): Machine | undefined {
  return panel.machines.find((m) => (id.length === 8 ? m.info.identifier === id : m.info.uuid === id));
}

/** The test's handle on the stand-in; `id` picks a server, the first by default. */
function standIn(panel: Panel, server: Loopback): PanelStandIn {
  const { machines, calls, timers } = panel;
  const machine = (id?: string): Machine => {
    const found = id === undefined ? machines[0] : findMachine(panel, id);
    if (!found) throw new RangeError(`the panel stand-in has no server "${id}"`);
    return found;
  };
  const accepted = (kind: "power" | "command", id?: string): string[] => {
    const wanted = id === undefined ? undefined : machine(id).info.identifier;
    return calls
      .filter((c) => c.kind === kind && c.status === 204 && (wanted === undefined || c.serverId === wanted))
      .map((c) => (kind === "power" ? c.signal : c.command) ?? "");
  };
  return {
    url: server.url,
    apiKey: panel.apiKey,
    timing: { resourcesCacheMs: panel.cacheMs, powerDelayMs: panel.powerDelayMs },
    servers: machines.map((m) => m.info),
    server: (machines[0] as Machine).info,
    state: (id) => machine(id).state,
    setState(state, id) {
      const m = machine(id);
      panel.game.endTransition(m);
      m.pendingStart = false;
      m.powerLock = undefined;
      for (const timer of m.delayedSignals) timers.clear(timer);
      m.delayedSignals.clear();
      panel.game.enter(m, state);
    },
    removeContainer(id) {
      machine(id).container = "absent";
    },
    busy: () =>
      machines.some((m) => m.transition !== undefined || m.containerStart !== undefined || m.delayedSignals.size > 0),
    setStateReported(reported, id) {
      const m = machine(id);
      m.stateReported = reported;
      m.cache = undefined;
    },
    setMemory(bytes, id) {
      machine(id).memoryBytes = bytes;
    },
    setTickMs(ms, id) {
      machine(id).tickMs = ms;
    },
    setStatus(status, id) {
      machine(id).status = status;
    },
    calls,
    dockerImage: (id) => machine(id).image,
    setDockerImage(image, id) {
      machine(id).image = image;
    },
    imageChanges: (id) => machine(id).imageChanges.map((change) => ({ ...change })),
    signals: (id) => accepted("power", id),
    commands: (id) => accepted("command", id),
    stateHistory: (id) => machine(id).history.map((entry) => ({ ...entry })),
    console: (id) => [...machine(id).console],
    inject: (fault) => panel.faults.push(fault),
    holdResources(id) {
      const m = machine(id);
      const at = panel.now();
      if (!fresh(panel, m, at)) m.cache = { at, body: serverResources(m, at) };
      m.cacheHeld = true;
      return {
        release() {
          m.cacheHeld = false;
        },
      };
    },
    onRequest(listener) {
      panel.listeners.add(listener);
      return () => panel.listeners.delete(listener);
    },
    waitForState: (state, timeoutMs = 30_000, id) => waitForState(panel, machine(id), state, timeoutMs),
    waitForPolls: (state, count, timeoutMs = 60_000, id) => waitForPolls(panel, machine(id), state, count, timeoutMs),
    reset() {
      calls.length = 0;
      for (const m of machines) m.console.length = 0;
      panel.limiter.reset();
      panel.faults.clear();
    },
    async close() {
      timers.clearAll();
      await server.close();
    },
  };
}

async function waitForState(panel: Panel, m: Machine, state: ServerState, timeoutMs: number): Promise<void> {
  await panel.changes.waitFor(
    () => (m.state === state ? true : undefined),
    timeoutMs,
    () =>
      `Panel stand-in: server ${m.info.identifier} did not reach "${state}" within ${timeoutMs} ms (it is "${m.state}")`,
  );
}

async function waitForPolls(
  panel: Panel,
  m: Machine,
  state: ServerState,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const polls = () => {
    const entered = m.history.findLast((h) => h.state === state)?.at;
    if (entered === undefined) return 0;
    return panel.calls.filter(
      (c) =>
        c.kind === "resources" &&
        c.serverId === m.info.identifier &&
        c.status === 200 &&
        (c.answeredAt ?? 0) >= entered,
    ).length;
  };
  await panel.changes.waitFor(
    () => (polls() >= count ? true : undefined),
    timeoutMs,
    () =>
      `Panel stand-in: ${polls()} of ${count} resources requests answered for server ${m.info.identifier} since it was "${state}", within ${timeoutMs} ms`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// The game

/** The game behind the panel: its power states and its console. */
interface Game {
  enter(m: Machine, state: ServerState): void;
  /** Cancels a start or a stop under way. */
  endTransition(m: Machine): void;
  /** Acts on a power signal as Wings does, under its power lock. */
  power: Record<string, (m: Machine) => void>;
  /** A console command, as the game answers it. */
  runCommand(m: Machine, line: string): void;
}

function gameOf(setup: {
  now: () => number;
  advance: ((ms: number) => void) | undefined;
  timers: TimerSet;
  changes: Changes;
  timings: { startMs: number; stopMs: number; containerMs: number };
  saveDelayMs: number;
  logFile: string | undefined;
  flavour: "vanilla" | "paper" | "old-vanilla";
}): Game {
  const { now, advance, timers, changes, timings, saveDelayMs, logFile, flavour } = setup;
  const say = (m: Machine, text: string): void => {
    const line = `[${clockTime(new Date())}] [Server thread/INFO]: ${text}`;
    m.console.push(line);
    if (logFile) appendFileSync(logFile, `${line}\n`);
  };
  const enter = (m: Machine, state: ServerState): void => {
    m.state = state;
    // A removed container stays removed while the server is offline; "starting" is before Wings has started it.
    m.container = state === "offline" && m.container === "absent" ? "absent" : containerIn(state);
    m.history.push({ at: now(), state });
    if (state === "offline") m.startedAt = null;
    else m.startedAt ??= now();
    if (state === "offline" && m.powerLock === "offline") m.powerLock = undefined;
    changes.notify();
  };
  /** Wings has started the start's container: the game prints its first line, and the start lets the lock go. */
  const containerRuns = (m: Machine): void => {
    m.container = "running";
    if (m.powerLock === "container") m.powerLock = undefined;
  };
  /** Cancels a start or a stop under way, with a start's container. */
  const endTransition = (m: Machine): void => {
    timers.clear(m.transition);
    m.transition = undefined;
    timers.clear(m.containerStart);
    m.containerStart = undefined;
  };
  const start = (m: Machine): void => {
    if (m.state !== "offline") return; // Wings ignores start unless the server is offline.
    enter(m, "starting");
    m.containerStart = timers.set(() => {
      m.containerStart = undefined;
      containerRuns(m);
      say(m, `Starting minecraft server version ${GAME_VERSION}`);
      changes.notify();
    }, timings.containerMs);
    m.transition = timers.set(() => {
      endTransition(m);
      containerRuns(m);
      advance?.(timings.startMs);
      enter(m, "running");
      say(m, 'Done (3.512s)! For help, type "help"');
    }, timings.startMs);
  };
  /** The game stops (a power stop, or `stop` typed in its console); a restart under way starts it again afterwards. */
  const stop = (m: Machine): void => {
    if (m.state !== "running" && m.state !== "starting") return;
    endTransition(m);
    enter(m, "stopping");
    for (const line of ["Stopping the server", "Stopping server", "Saving players", "Saving worlds"]) say(m, line);
    m.transition = timers.set(() => {
      m.transition = undefined;
      advance?.(timings.stopMs);
      enter(m, "offline");
      if (m.pendingStart) {
        m.pendingStart = false;
        start(m);
      }
    }, timings.stopMs);
  };
  const restart = (m: Machine): void => {
    if (m.state === "offline") {
      start(m);
      return;
    }
    stop(m);
    m.pendingStart = true;
  };
  const kill = (m: Machine): void => {
    endTransition(m);
    m.pendingStart = false;
    enter(m, "offline");
  };
  const runCommand = (m: Machine, line: string): void => {
    const command = line.replace(/^\//, "");
    const verb = command.split(/\s+/)[0] ?? "";
    const args = command.slice(verb.length).trim();
    if (verb === "save-all") {
      say(m, "Saving the game (this may take a moment!)");
      timers.set(() => say(m, "Saved the game"), saveDelayMs);
    } else if (verb === "stop") {
      stop(m);
    } else if (verb !== "tellraw") {
      const answer = tickAnswer(flavour, command, m.tickMs) ?? [
        CONSOLE_ANSWERS.get(verb)?.(args) ?? "Unknown or incomplete command, see below for error",
      ];
      for (const text of answer) say(m, text);
    }
  };
  return { enter, endTransition, power: underPowerLock({ start, stop, restart, kill }), runCommand };
}

/**
 * Wings' power actions as HandlePowerAction runs them (pterodactyl/wings server/power.go, system/locker.go): each takes
 * the server's power lock first, at once or not at all, since the panel's DaemonPowerRepository sends no wait_seconds
 * (Acquire, not TryAcquire). One that finds the lock held is dropped, though the panel answered 204 (Wings answered 202
 * before acting: router/router_server.go postServerPower). A start holds the lock until its container runs
 * (Environment.Start returns once ContainerStart did; "running" comes later, with the game's Done line), a stop until
 * the server is offline (Environment.WaitForStop), a restart through its stop and its start; a start to a server that
 * is not offline (ErrIsRunning) or a stop to one that is offline lets it go at once. A kill goes through whoever holds
 * it (HandlePowerAction takes it for a kill only when it is free) and here ends the action that held it: a start's
 * container is never started, a stop's wait is over. (Wings' own start goes on after a kill that came before its
 * container ran; the stand-in does not model that.)
 */
function underPowerLock(acts: Record<"start" | "stop" | "restart" | "kill", (m: Machine) => void>): Game["power"] {
  const locked =
    (act: (m: Machine) => void, heldUntil: (m: Machine) => Machine["powerLock"]) =>
    (m: Machine): void => {
      if (m.powerLock !== undefined) return;
      act(m);
      m.powerLock = heldUntil(m);
    };
  return {
    start: locked(acts.start, (m) => (m.containerStart !== undefined ? "container" : undefined)),
    stop: locked(acts.stop, (m) => (m.state === "offline" ? undefined : "offline")),
    restart: locked(acts.restart, (m) => (m.containerStart !== undefined || m.pendingStart ? "container" : undefined)),
    kill(m) {
      acts.kill(m);
      m.powerLock = undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The API's bodies

function serverDetails(m: Machine): Record<string, unknown> {
  return {
    object: "server",
    attributes: {
      server_owner: true,
      identifier: m.info.identifier,
      internal_id: m.info.internalId,
      uuid: m.info.uuid,
      name: m.info.name,
      node: NODE_FQDN,
      is_node_under_maintenance: false,
      sftp_details: { ip: NODE_FQDN, port: 2022 },
      description: "",
      limits: { memory: 4096, swap: 0, disk: 0, io: 500, cpu: 0, threads: null, oom_disabled: true },
      invocation: "java -Xms128M -Xmx4096M -jar server.jar",
      docker_image: m.image,
      egg_features: ["eula", "java_version"],
      feature_limits: { databases: 0, allocations: 0, backups: 0 },
      // Pterodactyl's ServerTransformer: `status` is the server's own column (null, installing, suspended, ...); a
      // transfer is a relation of its own, shown only as is_transferring (panel: app/Transformers/Api/Client).
      status: m.status === "transferring" ? null : m.status,
      is_suspended: m.status === "suspended",
      is_installing: m.status === "installing",
      is_transferring: m.status === "transferring",
      // The default includes, allocations and variables (ServerTransformer $defaultIncludes): a server always has its
      // primary allocation (AllocationTransformer); the variables are the vanilla egg's user-viewable ones
      // (EggVariableTransformer; panel database/Seeders/eggs/minecraft/egg-vanilla-minecraft.json).
      relationships: {
        allocations: {
          object: "list",
          data: [
            {
              object: "allocation",
              attributes: {
                id: m.info.internalId,
                ip: ALLOCATION_IP,
                ip_alias: null,
                port: 25564 + m.info.internalId,
                notes: null,
                is_default: true,
              },
            },
          ],
        },
        variables: {
          object: "list",
          data: EGG_VARIABLES.map((attributes) => ({ object: "egg_variable", attributes })),
        },
      },
    },
  };
}

function serverResources(m: Machine, now: number): unknown {
  const on = m.state !== "offline";
  const uptime = m.startedAt === null ? 0 : now - m.startedAt;
  const usual = { offline: 0, starting: 402_653_184, running: 1_610_612_736, stopping: 1_476_395_008 }[m.state];
  const memory = m.state === "offline" ? 0 : (m.memoryBytes ?? usual);
  const cpu = { offline: 0, starting: 96.41, running: 7.83, stopping: 35.2 }[m.state];
  return {
    object: "stats",
    attributes: {
      current_state: m.stateReported ? m.state : "stopped",
      is_suspended: m.status === "suspended",
      resources: {
        memory_bytes: memory,
        cpu_absolute: cpu,
        disk_bytes: 734_003_200,
        network_rx_bytes: on ? Math.floor(uptime * 2.5) : 0,
        network_tx_bytes: on ? Math.floor(uptime * 6.1) : 0,
        uptime,
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A request, step by step (the order is the panel's: see the top of this file)

/** A request as it arrived, recorded as a call, and how to answer it. */
interface Received {
  req: IncomingMessage;
  res: ServerResponse;
  call: PanelCall;
  /** The path without trailing slashes, as Laravel's router matches it. */
  path: string;
  text: string;
  /** The throttle's headers, on every answer after it. */
  limitHeaders: HeaderMap;
  answer(status: number, body?: unknown, headers?: HeaderMap): void;
}

/** A request on one of the panel's routes, with its input as Laravel reads it. */
interface Exchange extends Received {
  route: RouteMatch;
  /** The JSON body, when the Content-Type says JSON and there is one. */
  parsed: JsonParse | undefined;
  /** A field of the input: strings trimmed, "" as null. */
  field(name: string): unknown;
  /** The panel's own error injected for this request (a status fault without a body), answered where it arises. */
  ownError: StatusFault | undefined;
}

async function handle(panel: Panel, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const x = route(await receive(panel, req, res));
  if (!x) return;
  for (const listener of panel.listeners) listener(x.call);
  if ((await injectedFault(panel, x)) === "handled") return;
  const m = throughMiddleware(panel, x);
  if (m === "answered") return;
  if (m === undefined) return listServers(panel, x);
  x.call.serverId = m.info.identifier;
  // AuthenticateServerAccess: a suspended, installing or moving server is refused on every route but the details
  // (ServerStateConflictException, app/Exceptions/Http/Server/ServerStateConflictException.php).
  if (m.status !== null && x.route.kind !== "details") {
    return x.answer(409, panelError("ServerStateConflictException", 409, CONFLICT_DETAIL[m.status]));
  }
  const serve = x.route.kind === "other" ? undefined : SERVER_ROUTES[x.route.kind];
  if (!serve) {
    return x.answer(404, panelError("NotFoundHttpException", 404, `The route ${x.path.slice(1)} could not be found.`));
  }
  serve(panel, x, m);
}

async function receive(panel: Panel, req: IncomingMessage, res: ServerResponse): Promise<Received> {
  const at = panel.now();
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const text = await readBody(req);
  const call: PanelCall = { at, method, path: url.pathname, kind: "other", status: 0 };
  panel.calls.push(call);
  const received: Received = {
    req,
    res,
    call,
    path: url.pathname.replace(/\/+$/, "") || "/",
    text,
    limitHeaders: {},
    answer(status, body, headers = {}) {
      call.status = status;
      call.answeredAt = panel.now();
      const all = { ...received.limitHeaders, ...headers };
      if (body === undefined) sendEmpty(res, status, all);
      else sendJson(res, status, body, all);
      panel.changes.notify();
    },
  };
  return received;
}

/**
 * Laravel's router, before any middleware: an unknown path is a 404, a known one with another method a 405
 * (undefined: answered). Then the input, as Laravel reads it.
 */
function route(r: Received): Exchange | undefined {
  const found = matchRoute(r.path);
  if (!found) {
    r.answer(404, panelError("NotFoundHttpException", 404, `The route ${r.path.slice(1)} could not be found.`));
    return undefined;
  }
  r.call.kind = found.kind;
  if (found.serverId !== undefined) r.call.serverId = found.serverId;
  const method = r.call.method;
  if (!found.methods.includes(method)) {
    const detail = `The ${method} method is not supported for route ${r.path.slice(1)}. Supported methods: ${found.methods.join(", ")}.`;
    r.answer(405, panelError("MethodNotAllowedHttpException", 405, detail));
    return undefined;
  }
  const x: Exchange = Object.assign(r, { route: found, ownError: undefined, ...readInput(r.req, r.text) });
  if (found.kind === "power" && typeof x.field("signal") === "string") x.call.signal = x.field("signal") as string;
  if (found.kind === "command" && typeof x.field("command") === "string") x.call.command = x.field("command") as string;
  return x;
}

/** Laravel reads a JSON body only when the Content-Type says JSON, and trims strings ("" becomes null). */
function readInput(req: IncomingMessage, text: string): Pick<Exchange, "parsed" | "field"> {
  const isJson = /[/+]json\b/.test(mediaType(req));
  const parsed = isJson && text.trim() !== "" ? parseJson(text) : undefined;
  const input: Record<string, unknown> =
    parsed?.ok && isPlainObject(parsed.value)
      ? parsed.value
      : mediaType(req) === "application/x-www-form-urlencoded"
        ? Object.fromEntries(new URLSearchParams(text))
        : {};
  const field = (name: string): unknown => {
    const value = input[name];
    if (typeof value !== "string") return value;
    const trimmed = value.trim();
    return trimmed === "" ? null : trimmed;
  };
  return { parsed, field };
}

/** The next queued fault for the route: "handled" when it answered (or dropped) the request. */
function injectedFault(panel: Panel, x: Exchange): Promise<"handled" | "continue"> {
  const taken = panel.faults.take((f) => f.kind !== "wings" && (f.route === undefined || f.route === x.route.kind));
  const fault = taken as (Fault & { route?: PanelRoute }) | undefined;
  // The panel's own error (a status fault without a body) is answered inside the panel, further down; an answer
  // that comes before it there (a 401, 404, 409, 422) spends it.
  x.ownError = fault?.kind === "status" && fault.body === undefined ? fault : undefined;
  if (fault && !x.ownError) x.call.fault = fault.kind;
  return applyFault(x.ownError ? undefined : fault, x.res, panel.timers, {
    status: (f) => {
      x.call.status = f.status;
      sendAny(x.res, f.status, f.body === undefined ? defaultErrorBody(f) : f.body, f.headers ?? {});
    },
    rateLimit: (f) => {
      x.call.status = 429;
      tooManyAttempts(x.res, f, panel.limiter.limit, panel.now());
    },
    dropped: () => {
      x.call.status = 0;
    },
  });
}

/**
 * The `api` middleware, the throttle and the bindings, in the panel's order: the server the path names, undefined on
 * a route without one, or "answered" when one of them refused the request.
 */
function throughMiddleware(panel: Panel, x: Exchange): Machine | undefined | "answered" {
  // auth:sanctum, the first of the `api` middleware: any key of the account authenticates, an application key too
  // (it is refused further down); no rate-limit headers yet (panel app/Http/Kernel.php, the `api` group).
  const auth = /^Bearer\s+(\S+)\s*$/i.exec(x.req.headers.authorization ?? "");
  const key = auth?.[1];
  const applicationKey = key?.startsWith("ptla_") === true;
  if (key === undefined || (!panel.keys.has(key) && !applicationKey)) {
    x.answer(401, panelError("AuthenticationException", 401, "Unauthenticated."));
    return "answered";
  }

  // IsValidJson, the next `api` middleware, still before the throttle (panel app/Http/Middleware/Api/IsValidJson.php).
  if (x.parsed && !x.parsed.ok) {
    const detail = "The JSON data passed in the request appears to be malformed: Syntax error";
    x.answer(400, panelError("BadRequestHttpException", 400, detail));
    return "answered";
  }

  // throttle:api.client, per user: every key of the one user here shares the window (RouteServiceProvider keys it
  // by the user's uuid; laravel/framework ThrottleRequests: every answer from here on has the headers).
  const hitAt = panel.now();
  const decision = panel.limiter.hit(panel.userUuid, hitAt);
  x.limitHeaders = { "X-RateLimit-Limit": String(decision.limit), "X-RateLimit-Remaining": String(decision.remaining) };
  if (!decision.allowed) {
    const wait = Math.ceil(decision.retryAfterMs / 1000);
    x.answer(429, panelError("ThrottleRequestsException", 429, "Too Many Attempts."), {
      "Retry-After": String(wait),
      "X-RateLimit-Reset": String(Math.floor(hitAt / 1000) + wait),
    });
    return "answered";
  }

  // SubstituteClientBindings: 8 characters are the short identifier, anything else the uuid; firstOrFail's
  // ModelNotFoundException renders as this 404 (panel app/Exceptions/Handler.php).
  const serverId = x.route.serverId;
  const m = serverId === undefined ? undefined : findMachine(panel, serverId);
  if (serverId !== undefined && !m) {
    x.answer(404, panelError("NotFoundHttpException", 404, "The requested resource could not be found on the server."));
    return "answered";
  }
  // RequireClientApiKey (panel app/Http/Middleware/Api/Client/RequireClientApiKey.php).
  if (applicationKey) {
    const detail = "You are attempting to use an application API key on an endpoint that requires a client API key.";
    x.answer(403, panelError("AccessDeniedHttpException", 403, detail));
    return "answered";
  }
  return m;
}

/** The panel's own error, injected as a status fault without a body, answered where the real one arises. */
function answerOwnError(x: Exchange, f: StatusFault): void {
  x.call.fault = f.kind;
  x.answer(f.status, defaultErrorBody(f), f.headers ?? {});
}

// ---------------------------------------------------------------------------------------------------------------
// The routes (PANEL_ROUTES names each one's source)

/** GET /api/client, ClientController index: a Fractal collection with its paginator (per_page 50; links an empty object). */
function listServers(panel: Panel, x: Exchange): void {
  if (x.ownError) {
    answerOwnError(x, x.ownError);
    return;
  }
  const data = panel.machines.map((each) => serverDetails(each));
  const pagination = {
    total: data.length,
    count: data.length,
    per_page: 50,
    current_page: 1,
    total_pages: 1,
    links: {},
  };
  x.answer(200, { object: "list", data, meta: { pagination } });
}

/** The routes of one server, /api/client/servers/{server}[/...], once the middleware let the request through. */
const SERVER_ROUTES: Record<PanelRoute, (panel: Panel, x: Exchange, m: Machine) => void> = {
  details(_panel, x, m) {
    if (x.ownError) return answerOwnError(x, x.ownError);
    // ServerController index: the item plus meta (the owner's permissions are "*"; a subuser's are their own).
    const owner = m.permissions.includes("*");
    x.answer(200, { ...serverDetails(m), meta: { is_server_owner: owner, user_permissions: m.permissions } });
  },
  resources(panel, x, m) {
    if (x.ownError) return answerOwnError(x, x.ownError);
    // ResourceUtilizationController: Wings' answer, cached per server, through StatsTransformer; Wings is asked only
    // when the cache is stale (cache->remember), and an error from it is not cached. A held cache (holdResources) is
    // never stale.
    const at = panel.now();
    if (!m.cache || (!m.cacheHeld && !fresh(panel, m, at))) {
      const wings = takeWingsFault(panel, x);
      if (wings) return wingsAnswer(x, wings, "resources");
      m.cache = { at, body: serverResources(m, at) };
    }
    x.answer(200, m.cache.body);
  },
  power(panel, x, m) {
    // SendPowerRequest: its permission (start: control.start, stop and kill: control.stop, restart: control.restart)
    // before its rules, `signal` required|string|in:start,stop,restart,kill; then PowerController answers 204
    // once Wings has taken the signal (Wings answers 202 and acts in a goroutine: postServerPower).
    const signal = x.call.signal ?? "";
    const needs = signal === "kill" ? "stop" : SIGNALS.includes(signal) ? signal : undefined;
    if (needs && refused(x, m, `control.${needs}`)) return;
    const errors = validate("signal", x.field("signal"), (value) => SIGNALS.includes(value));
    if (errors) return x.answer(422, errors);
    if (x.ownError) return answerOwnError(x, x.ownError);
    const wings = takeWingsFault(panel, x);
    if (wings) return wingsAnswer(x, wings, "power");
    const act = panel.game.power[x.call.signal ?? ""];
    if (act && panel.powerDelayMs > 0) {
      const timer = panel.timers.set(() => {
        m.delayedSignals.delete(timer);
        panel.advance?.(panel.powerDelayMs);
        act(m);
      }, panel.powerDelayMs);
      m.delayedSignals.add(timer);
    } else act?.(m);
    x.answer(204);
  },
  command(panel, x, m) {
    // SendCommandRequest: control.console, then `command` required|string|min:1 (a blank one is trimmed to null).
    if (refused(x, m, "control.console")) return;
    const errors = validate("command", x.field("command"));
    if (errors) return x.answer(422, errors);
    if (x.ownError) return answerOwnError(x, x.ownError);
    const wings = takeWingsFault(panel, x);
    if (wings) return wingsAnswer(x, wings, "command");
    // Wings (router_server.go postServerCommands) asks Docker whether the container runs: without a container that
    // is an error (500, passed on by the panel); a container that does not run (offline, or "starting" before Wings
    // has started it) is a 502, which the panel's CommandController turns into "Server must be online". The
    // container still runs while the game stops, so a command sent during "stopping" is taken.
    if (m.container === "absent") return wingsAnswer(x, { kind: "wings", status: 500 }, "command");
    if (m.container !== "running") return x.answer(502, panelError("HttpException", 502, SERVER_MUST_BE_ONLINE));
    panel.game.runCommand(m, x.call.command ?? "");
    x.answer(204);
  },

  startup(_panel, x, m) {
    // GetStartupRequest (startup.read), then StartupController index: the user-viewable variables and, in meta, the
    // startup line filled in (StartupCommandService), the egg's images and the line as written.
    if (refused(x, m, "startup.read")) return;
    if (x.ownError) return answerOwnError(x, x.ownError);
    x.answer(200, {
      object: "list",
      data: EGG_VARIABLES.map((attributes) => ({ object: "egg_variable", attributes })),
      meta: {
        startup_command: startupCommand(m),
        docker_images: m.egg.dockerImages,
        raw_startup_command: m.egg.startup,
      },
    });
  },
  "docker-image"(_panel, x, m) {
    // SetDockerImageRequest: startup.docker-image, then `docker_image` required|string|max:191|regex|in:<the egg's
    // images>; SettingsController dockerImage: 400 when the current image is none of the egg's (an administrator
    // set it), else saved (an activity server:startup.image when it changed) and 204.
    if (refused(x, m, "startup.docker-image")) return;
    const image = x.field("docker_image");
    if (typeof image === "string") x.call.image = image;
    const offered = Object.values(m.egg.dockerImages);
    const errors = validate("docker_image", image, (value) => value.length <= 191 && offered.includes(value));
    if (errors) return x.answer(422, errors);
    if (x.ownError) return answerOwnError(x, x.ownError);
    if (!offered.includes(m.image)) {
      return x.answer(400, panelError("BadRequestHttpException", 400, IMAGE_LOCKED));
    }
    if (m.image !== image) m.imageChanges.push({ from: m.image, to: image as string });
    m.image = image as string;
    x.answer(204);
  },
};

/** SettingsController dockerImage's refusal (pterodactyl/panel app/Http/Controllers/Api/Client/Servers/SettingsController.php). */
const IMAGE_LOCKED = "This server's Docker image has been manually set by an administrator and cannot be updated.";

/**
 * A form request's permission (ClientApiRequest authorize, before its rules): a user without it gets Laravel's
 * AuthorizationException, which the panel's Handler renders as this 403. True when it answered.
 */
function refused(x: Exchange, m: Machine, permission: string): boolean {
  if (m.permissions.includes("*") || m.permissions.includes(permission)) return false;
  x.answer(403, panelError("AccessDeniedHttpException", 403, "This action is unauthorized."));
  return true;
}

/**
 * StartupCommandService handle: the egg's line with {{SERVER_MEMORY}}, {{SERVER_IP}}, {{SERVER_PORT}} and each
 * variable's {{ENV}} filled in (hidden variables as "[hidden]"; the vanilla egg has none).
 */
function startupCommand(m: Machine): string {
  const values: Record<string, string> = {
    SERVER_MEMORY: "4096",
    SERVER_IP: ALLOCATION_IP,
    SERVER_PORT: String(25564 + m.info.internalId),
    ...Object.fromEntries(EGG_VARIABLES.map((v) => [v.env_variable, v.server_value])),
  };
  return m.egg.startup.replace(/\{\{([A-Z0-9_]+)\}\}/g, (whole, name: string) => values[name] ?? whole);
}

/** The panel's CommandController, when Wings answers 502 (pterodactyl/panel CommandController.php). */
const SERVER_MUST_BE_ONLINE = "Server must be online in order to send commands.";

/** Whether the server's cached resources answer is still the panel's answer at `at` (cache->remember's TTL). */
function fresh(panel: Panel, m: Machine, at: number): boolean {
  return m.cache !== undefined && panel.cacheMs > 0 && at - m.cache.at < panel.cacheMs;
}

/** The next Wings fault queued for this route: the panel is calling Wings now. */
function takeWingsFault(panel: Panel, x: Exchange): WingsFault | undefined {
  const fault = panel.faults.take((f) => f.kind === "wings" && (f.route === undefined || f.route === x.route.kind));
  return fault?.kind === "wings" ? fault : undefined;
}

/**
 * Wings' error bodies (pterodactyl/wings router/middleware/middleware.go RequireAuthorization, ServerExists;
 * router/middleware/request_error.go Abort for the rest), by status.
 */
const WINGS_ERRORS: Record<number, string> = {
  401: "The required authorization heads were not present in the request.",
  403: "You are not authorized to access this endpoint.",
  404: "The requested resource does not exist on this instance.",
  502: "Cannot send commands to a stopped server instance.",
};

/**
 * What the panel answers when Wings failed (pterodactyl/panel app/Exceptions/Http/Connection/DaemonConnectionException.php):
 * no answer is a 504 "Could not establish a connection..."; otherwise the status is Wings' own (power, command) or
 * stays 504 (resources: DaemonServerRepository getDetails passes useStatusCode false); the detail is Wings' `error`
 * under 500 ("An error occurred on the remote host: %s. (request id: %s)"), else "(code: N) (request_id: %s)". The
 * request id is Wings' X-Request-Id (router/middleware/middleware.go AttachRequestID); a proxy in front of Wings (its
 * 502) sends none, and the panel writes the empty header. On the command route a 502 becomes CommandController's
 * HttpException.
 */
function wingsAnswer(x: Exchange, fault: WingsFault, route: "resources" | "power" | "command"): void {
  x.call.fault = fault.kind;
  const wings = fault.status;
  if (wings === undefined) {
    const detail = "Could not establish a connection to the machine running this server. Please try again.";
    x.answer(504, panelError("DaemonConnectionException", 504, detail));
  } else if (route === "command" && wings === 502) {
    x.answer(502, panelError("HttpException", 502, SERVER_MUST_BE_ONLINE));
  } else {
    const status = route === "resources" ? 504 : wings < 400 ? 502 : wings;
    const requestId = wings === 502 ? "" : randomUUID();
    const error = WINGS_ERRORS[wings] ?? "An unexpected error was encountered while processing this request";
    const detail =
      status < 500
        ? `An error occurred on the remote host: ${error}. (request id: ${requestId})`
        : `There was an error while communicating with the machine running this server. This error has been logged, please try again. (code: ${wings}) (request_id: ${requestId})`;
    x.answer(status, panelError("DaemonConnectionException", status, detail));
  }
}

interface RouteMatch {
  kind: PanelCallKind;
  serverId?: string;
  methods: string[];
}

function matchRoute(path: string): RouteMatch | undefined {
  if (path === "/api/client") return { kind: "other", methods: ["GET", "HEAD"] };
  const match = /^\/api\/client\/servers\/([^/]+)(?:\/(resources|power|command|startup|settings\/docker-image))?$/.exec(
    path,
  );
  if (!match) return undefined;
  const [, serverId = "", sub] = match;
  if (sub === undefined) return { kind: "details", serverId, methods: ["GET", "HEAD"] };
  if (sub === "resources") return { kind: "resources", serverId, methods: ["GET", "HEAD"] };
  if (sub === "startup") return { kind: "startup", serverId, methods: ["GET", "HEAD"] };
  if (sub === "settings/docker-image") return { kind: "docker-image", serverId, methods: ["PUT"] };
  return { kind: sub === "power" ? "power" : "command", serverId, methods: ["POST"] };
}

/** Laravel's `required|string` (+ `in:` when `allowed` is given) for one field, as Pterodactyl renders it. */
function validate(name: string, value: unknown, allowed?: (value: string) => boolean): unknown {
  // Laravel's validator names the attribute with its underscores as spaces ("docker image").
  const label = name.replaceAll("_", " ");
  const errors: Array<{ detail: string; rule: string }> = [];
  if (value === undefined || value === null)
    errors.push({ detail: `The ${label} field is required.`, rule: "required" });
  else {
    if (typeof value !== "string") errors.push({ detail: `The ${label} must be a string.`, rule: "string" });
    if (allowed && (typeof value !== "string" || !allowed(value))) {
      errors.push({ detail: `The selected ${label} is invalid.`, rule: "in" });
    }
  }
  if (errors.length === 0) return undefined;
  return {
    errors: errors.map((e) => ({
      code: "ValidationException",
      status: "422",
      detail: e.detail,
      meta: { source_field: name, rule: e.rule },
    })),
  };
}

function defaultErrorBody(fault: StatusFault): unknown {
  if (fault.status === 504) {
    return panelError(
      "DaemonConnectionException",
      504,
      // panel app/Exceptions/Http/Connection/DaemonConnectionException.php, when Wings did not answer at all.
      "Could not establish a connection to the machine running this server. Please try again.",
    );
  }
  if (fault.status === 500) {
    return panelError(
      "HttpException",
      500,
      "An unexpected error was encountered while processing this request, please try again.",
    );
  }
  return panelError("HttpException", fault.status, reasonPhrase(fault.status));
}

/** An injected 429; `at` is now on the stand-in's clock. */
function tooManyAttempts(res: ServerResponse, fault: RateLimitFault, limit: number, at: number): void {
  const wait = Math.ceil(Math.max(0, fault.retryAfterSeconds));
  sendJson(res, 429, panelError("ThrottleRequestsException", 429, "Too Many Attempts."), {
    "Retry-After": String(wait),
    "X-RateLimit-Reset": String(Math.floor(at / 1000) + wait),
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": "0",
  });
}
