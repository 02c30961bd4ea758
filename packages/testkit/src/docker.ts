/**
 * A stand-in for the parts of the Docker Engine API the toolkit uses, on a Unix socket in a test's own directory (what
 * is /var/run/docker.sock on the VM): the event stream, and containers (create, start, wait, logs, kill, remove) whose
 * command runs on this machine, for jar-download's loader installers (docker-containers.ts, which names its sources). Wings runs each server in a container named by the
 * server's UUID with the labels `Service=Pterodactyl` and `ContainerType=server_process`; when the kernel's OOM killer
 * kills the container's process, Docker sends an `oom` event and then a `die` event whose `exitCode` is 137 (SIGKILL).
 * Wings then removes the container and creates a new one to start the server again, so the container's own
 * `State.OOMKilled` is gone by the time anyone looks: the events are the only record.
 *
 * Sources:
 * - GET /events: docs.docker.com/reference/api/engine/version/v1.51/#tag/System/operation/SystemEvents and
 *   moby/moby api/server/router/system/system_routes.go (getEvents): 200 with `Content-Type: application/json`, the
 *   headers flushed at once, then one JSON object per event each followed by a newline (Go's json.Encoder), for as
 *   long as the client stays; `since` replays the events kept from that time (a unix time, fractional allowed);
 *   `filters` is JSON, `{"type":["container"]}` or the older `{"type":{"container":true}}`; an unknown filter key is
 *   400 `{"message":"invalid filter '<key>'"}`.
 * - The event's shape: the EventMessage and EventActor schemas of the same reference (`Type`, `Action`,
 *   `Actor.ID`, `Actor.Attributes` = the container's labels plus `image` and `name`, `scope`, `time`, `timeNano`).
 * - oom then die: moby/moby daemon/monitor.go (ProcessEvent: EventOOM sets OOMKilled and logs `oom`;
 *   handleContainerExit logs `die` with the attributes `exitCode` and `execDuration`).
 * - The container's name and labels: pterodactyl/wings environment/docker/container.go (Create); removed and created
 *   again before every start: environment/docker/power.go (OnBeforeStart).
 * - The API versions an engine answers (ENGINES) and its refusal of others: moby/moby api/server/middleware/version.go
 *   (docker-v29: daemon/server/middleware/version.go) WrapHandler: the headers set, an unprefixed path is the
 *   engine's own version, one below its minimum is 400 "client version 1.N is too old. Minimum supported API version
 *   is 1.M, please upgrade your client to a newer version", one above its maximum 400 "client version 1.N is too
 *   new. Maximum supported API version is 1.M" (the same words in v20.10.24, v26.1.5 and docker-v29.0.0). /_ping goes
 *   through the same middleware, so its `Api-Version` is the engine's maximum, which a client negotiates down from.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import type { RouteSource } from "./contract.ts";
import { type ContainerCall, ContainerEngine, type StandInContainer } from "./docker-containers.ts";
import { DEFAULT_IMAGES, ImageStore, type PullFault, type StandInImage, YOLKS_IMAGES } from "./docker-images.ts";
import { parseJson, sendJson } from "./http.ts";

export type { ContainerBind, ContainerCall, StandInContainer } from "./docker-containers.ts";
export type { ImageConfig, PullFault, StandInImage } from "./docker-images.ts";
export { DEFAULT_IMAGES, YOLKS_IMAGES } from "./docker-images.ts";

/**
 * Docker Engine releases the stand-in answers as: the API versions each serves (by minor number, 1.NN) and its
 * `Server` header.
 * - 20.10 (Debian 11 and 12's docker.io): moby v20.10.24 api/common.go DefaultVersion 1.41, api/common_unix.go
 *   MinVersion 1.12.
 * - 26.1 (Debian 13's docker.io): v26.1.5 api/common.go DefaultVersion 1.45, MinSupportedAPIVersion 1.24.
 * - 28.3: v28.3.3, 1.51 and 1.24 (what the contract fixtures in test/contracts/docker were read at).
 * - 29.0: docker-v29.0.0 daemon/config/config.go MaxAPIVersion 1.52, defaultMinAPIVersion 1.44 (29.0 to 29.2 raised
 *   the default minimum from 1.24 to 1.44; 29.3 lowered it to 1.40).
 */
export const ENGINES = {
  "20.10": { server: "20.10.24+dfsg1", max: 41, min: 12 },
  "26.1": { server: "26.1.5+dfsg1", max: 45, min: 24 },
  "28.3": { server: "28.3.3", max: 51, min: 24 },
  "29.0": { server: "29.0.0", max: 52, min: 44 },
} as const;
export type EngineVersion = keyof typeof ENGINES;
type Engine = (typeof ENGINES)[EngineVersion];

/** moby/moby api/swagger.yaml (API 1.51) and the daemon code docker-containers.ts names for each. */
const SWAGGER = "moby/moby api/swagger.yaml";

export const DOCKER_ROUTES: RouteSource[] = [
  {
    method: "GET",
    path: "/events",
    source:
      "docs.docker.com/reference/api/engine/version/v1.51/#tag/System/operation/SystemEvents; moby/moby api/server/router/system/system_routes.go",
  },
  {
    method: "GET",
    path: "/_ping",
    source: "docs.docker.com/reference/api/engine/version/v1.51/#tag/System/operation/SystemPing",
  },
  {
    method: "POST",
    path: "/containers/create",
    source: `${SWAGGER} ContainerCreate; daemon/names.go (name conflict); daemon/images/image.go (No such image)`,
  },
  { method: "POST", path: "/containers/{id}/start", source: `${SWAGGER} ContainerStart` },
  {
    method: "POST",
    path: "/containers/{id}/wait",
    source: `${SWAGGER} ContainerWait; api/server/router/container/container_routes.go postContainersWait`,
  },
  {
    method: "GET",
    path: "/containers/{id}/logs",
    source: `${SWAGGER} ContainerLogs; api/server/router/container/container_routes.go getContainersLogs; api/pkg/stdcopy/stdcopy.go`,
  },
  { method: "POST", path: "/containers/{id}/kill", source: `${SWAGGER} ContainerKill; daemon/errors.go errNotRunning` },
  { method: "DELETE", path: "/containers/{id}", source: `${SWAGGER} ContainerDelete; daemon/delete.go` },
  { method: "GET", path: "/images/{name}/json", source: `${SWAGGER} ImageInspect` },
  {
    method: "POST",
    path: "/images/create",
    source: `${SWAGGER} ImageCreate; api/server/router/image/image_routes.go postImagesCreate; distribution/pull_v2.go, distribution/errors.go, pkg/streamformatter, pkg/jsonmessage`,
  },
];

/** One event as Docker writes it on the stream. */
export interface DockerEvent {
  Type: "container";
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  scope: "local";
  time: number;
  timeNano: number;
}

export interface DockerStandInOptions {
  /** The directory the socket is made in (a test's temporary directory). */
  dir: string;
  /**
   * The images on the "machine" (default DEFAULT_IMAGES: the eggs' ghcr.io/pterodactyl/yolks:java_8/11/16/17/21). A
   * reference of YOLKS_IMAGES has that image's shape; any other sets no Entrypoint, Cmd or User.
   */
  images?: readonly (string | StandInImage)[];
  /** What the registries hold, for a pull (default YOLKS_IMAGES: both yolks repositories' Java images). */
  registry?: readonly (string | StandInImage)[];
  /** The Docker Engine release it answers as (default "28.3"): its API versions, its Server header. */
  engine?: EngineVersion;
  /** The user-defined networks beside Docker's own bridge, host and none (default DEFAULT_NETWORKS: pterodactyl_nw). */
  networks?: readonly string[];
}

export interface DockerStandIn {
  /** The socket's path. */
  socket: string;
  /** Clients following the event stream now. */
  readonly followers: number;
  /** Every GET /events received, with its query. */
  readonly requests: URLSearchParams[];
  /**
   * The kernel kills the container's process for memory: `oom`, then `die` with exit code 137, as Docker says it.
   * `ranSeconds`: the die's execDuration (default: since this container's last `start` event).
   */
  oomKill(name: string, ranSeconds?: number): void;
  /** The process ends by itself (a stop from the panel, a crash the game logs): `die` with that exit code. */
  exit(name: string, exitCode: number, ranSeconds?: number): void;
  /** Any container event (`start`, `destroy`…), with extra attributes. */
  emit(name: string, action: string, attributes?: Record<string, string>): DockerEvent;
  /** Writes raw bytes to every follower (a test of what the client does with a damaged stream). */
  writeRaw(bytes: string | Buffer): void;
  /** The daemon restarts: every stream ends, the events kept stay (a client reconnects with `since`). */
  dropFollowers(): void;
  /** Every container created, in order, removed ones included (their `state` says so). */
  readonly containers: readonly StandInContainer[];
  /** Every request to the container and image routes, with the status answered. */
  readonly calls: readonly ContainerCall[];
  /** The images on the machine now (familiar references: pulled ones too). */
  readonly images: readonly string[];
  /** The next pulls fail so (the registry unreachable, or the stream broken after a layer). */
  injectPull(fault: PullFault): void;
  /**
   * The next create makes its container and then drops the connection unanswered, as a daemon that took longer than
   * the client waits (or died midway) leaves a client that cannot know the container's id.
   */
  dropNextCreateAnswer(): void;
  /** Kills the commands still running, then stops listening. */
  close(): Promise<void>;
}

/** Wings' labels on a server's container. */
const WINGS_LABELS = { ContainerType: "server_process", Service: "Pterodactyl" };
const IMAGE = "ghcr.io/pterodactyl/yolks:java_21";
/** How many events the daemon keeps for `since` (moby daemon/events: eventsLimit). */
const KEPT = 256;

export async function startDockerStandIn(options: DockerStandInOptions): Promise<DockerStandIn> {
  const socket = join(options.dir, "docker.sock");
  const kept: DockerEvent[] = [];
  const followers = new Map<ServerResponse, (event: DockerEvent) => boolean>();
  const requests: URLSearchParams[] = [];
  const started = new Map<string, number>();
  let lastNano = 0;

  const idOf = (name: string) => createHash("sha256").update(name).digest("hex");

  function emit(name: string, action: string, attributes: Record<string, string> = {}): DockerEvent {
    const all = { ...WINGS_LABELS, image: IMAGE, name, ...attributes };
    if (action === "start") started.set(name, Date.now());
    return publish(idOf(name), action, all);
  }

  function publish(id: string, action: string, attributes: Record<string, string>): DockerEvent {
    // Nanoseconds from the wall clock, kept increasing (two events in one millisecond still differ). Docker's int64 is
    // above 2^53: a step of 1 would vanish in a double, so two events a microsecond apart, as a client reads them.
    const nano = Math.max(Date.now() * 1_000_000, lastNano + 1000);
    lastNano = nano;
    const event: DockerEvent = {
      Type: "container",
      Action: action,
      Actor: { ID: id, Attributes: attributes },
      scope: "local",
      time: Math.floor(nano / 1e9),
      timeNano: nano,
    };
    kept.push(event);
    if (kept.length > KEPT) kept.shift();
    for (const [res, wants] of followers) if (wants(event)) res.write(`${JSON.stringify(event)}\n`);
    return event;
  }

  function exit(name: string, exitCode: number, ranSeconds?: number): void {
    const execDuration = ranSeconds ?? Math.floor((Date.now() - (started.get(name) ?? Date.now())) / 1000);
    emit(name, "die", { exitCode: String(exitCode), execDuration: String(execDuration) });
  }

  const engineVersion = ENGINES[options.engine ?? "28.3"];
  const events = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) =>
    serveEvents({ kept, followers, requests, headers: daemonHeaders(engineVersion) }, req, res, query);

  // A container's events carry its own labels, image and name (moby daemon/events.go LogContainerEventWithAttributes).
  const images = new ImageStore(options.images ?? DEFAULT_IMAGES, options.registry ?? YOLKS_IMAGES, options.dir);
  const engine = new ContainerEngine(
    images,
    (action, c, extra = {}) => publish(c.id, action, { ...c.labels, image: c.image, name: c.name, ...extra }),
    options.networks,
  );
  const server = await listenDaemon(socket, engineVersion, events, engine);

  return {
    socket,
    get followers() {
      return followers.size;
    },
    requests,
    oomKill(name, ranSeconds) {
      emit(name, "oom");
      exit(name, 137, ranSeconds);
    },
    exit,
    emit,
    writeRaw(bytes) {
      for (const res of followers.keys()) res.write(bytes);
    },
    dropFollowers() {
      for (const res of followers.keys()) res.socket?.destroy();
      followers.clear();
    },
    containers: engine.containers,
    calls: engine.calls,
    get images() {
      return images.onMachine;
    },
    injectPull(fault) {
      images.faults.push(fault);
    },
    dropNextCreateAnswer() {
      engine.dropCreateAnswers += 1;
    },
    async close() {
      await engine.close();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * What the event stream reads and adds to: the events kept for `since`, the clients following, their queries; and the
 * daemon's headers.
 */
interface EventState {
  kept: DockerEvent[];
  followers: Map<ServerResponse, (event: DockerEvent) => boolean>;
  requests: URLSearchParams[];
  headers: Record<string, string>;
}

/** GET /events: the kept events from `since`, then each new one, for as long as the client stays. */
function serveEvents(state: EventState, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
  const { kept, followers, requests, headers } = state;
  requests.push(query);
  const filters = parseFilters(query.get("filters"));
  if ("error" in filters) {
    sendJson(res, 400, { message: filters.error }, headers);
    return;
  }
  const since = query.get("since");
  const sinceNano = since === null ? undefined : Number(since) * 1e9;
  if (sinceNano !== undefined && !Number.isFinite(sinceNano)) {
    sendJson(res, 400, { message: `failed to parse value ${since} as a timestamp` }, headers);
    return;
  }
  const wants = (event: DockerEvent) => matches(filters.value, event);
  res.writeHead(200, { "Content-Type": "application/json", ...headers });
  res.flushHeaders();
  if (sinceNano !== undefined) {
    for (const event of kept) if (event.timeNano >= sinceNano && wants(event)) res.write(`${JSON.stringify(event)}\n`);
  }
  followers.set(res, wants);
  req.on("close", () => followers.delete(res));
}

/** The daemon's HTTP server on its Unix socket: /events, /_ping, the containers' routes, and Docker's 404 for the rest. */
async function listenDaemon(
  socket: string,
  engine: Engine,
  events: (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => void,
  containers: ContainerEngine,
): Promise<Server> {
  const headers = daemonHeaders(engine);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://docker");
    // Docker answers both /events and /v1.NN/events; an unprefixed path is the engine's own version.
    const prefix = /^\/v1\.(\d+)(?=\/)/.exec(url.pathname);
    const api = prefix ? Number(prefix[1]) : engine.max;
    const refused = versionRefused(engine, prefix?.[1], api);
    if (refused) return sendJson(res, 400, { message: refused }, headers);
    const path = url.pathname.slice(prefix ? prefix[0].length : 0);
    if (req.method === "GET" && path === "/events") return events(req, res, url.searchParams);
    if ((req.method === "GET" || req.method === "HEAD") && path === "/_ping") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", ...headers });
      res.end("OK");
      return;
    }
    // The version middleware sets these on every answer of a route, errors included (not on "page not found").
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (containers.handle(req, res, path, url.searchParams, api)) return;
    for (const name of Object.keys(headers)) res.removeHeader(name);
    sendJson(res, 404, { message: "page not found" });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  return server;
}

/** The version middleware's refusal of a version outside the engine's [min, max] (after it set its headers). */
function versionRefused(engine: Engine, text: string | undefined, api: number): string | undefined {
  if (text === undefined) return undefined;
  if (api > engine.max) return `client version 1.${text} is too new. Maximum supported API version is 1.${engine.max}`;
  if (api < engine.min) {
    return `client version 1.${text} is too old. Minimum supported API version is 1.${engine.min}, please upgrade your client to a newer version`;
  }
  return undefined;
}

/**
 * What moby's middlewares put on every answer of a route: `Server`, `Api-Version`, `Ostype` (middleware/version.go),
 * `Docker-Experimental` (middleware/experimental.go).
 */
function daemonHeaders(engine: Engine): Record<string, string> {
  return {
    "Api-Version": `1.${engine.max}`,
    "Docker-Experimental": "false",
    Ostype: "linux",
    Server: `Docker/${engine.server} (linux)`,
  };
}

type Filters = Record<string, string[]>;
const FILTER_KEYS = new Set(["container", "event", "image", "label", "type", "scope", "daemon", "network", "volume"]);

/** The `filters` query as moby's filters.FromJSON reads it: `{"k":["v"]}` or `{"k":{"v":true}}`. */
function parseFilters(text: string | null): { value: Filters } | { error: string } {
  if (text === null || text === "") return { value: {} };
  const parsed = parseJson(text);
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) {
    return { error: "invalid filter: invalid JSON" };
  }
  const value: Filters = {};
  for (const [key, raw] of Object.entries(parsed.value as Record<string, unknown>)) {
    if (!FILTER_KEYS.has(key)) return { error: `invalid filter '${key}'` };
    if (Array.isArray(raw)) value[key] = raw.map(String);
    else if (typeof raw === "object" && raw !== null) value[key] = Object.keys(raw);
    else return { error: "invalid filter: invalid JSON" };
  }
  return { value };
}

/** moby daemon/events/filter.go: every key given must match; values of one key are alternatives. */
function matches(filters: Filters, event: DockerEvent): boolean {
  const any = (key: string, values: string[]) => {
    const wanted = filters[key];
    return !wanted || wanted.length === 0 || wanted.some((w) => values.includes(w));
  };
  const labels = Object.entries(event.Actor.Attributes).flatMap(([k, v]) => [k, `${k}=${v}`]);
  return (
    any("type", [event.Type]) &&
    any("event", [event.Action]) &&
    any("scope", [event.scope]) &&
    any("container", [event.Actor.ID, event.Actor.Attributes.name ?? ""]) &&
    any("label", labels)
  );
}
