/**
 * The container part of the Docker stand-in (docker.ts): create, start, wait, logs, kill and remove, and image
 * inspect, answered as moby's daemon does, with the container's command run **on this machine**: spawned as the
 * container's user, in the host directory bound at its working directory, with paths below the binds' targets in its
 * arguments turned into their host sources (a real container sees the target; this process can only see the source).
 *
 * Sources (moby/moby api/swagger.yaml, API 1.51, and the daemon code named at each place):
 * - create: ContainerCreate; the name's pattern and the 409 text (daemon/names.go reserveName); 400 "invalid
 *   reference format" for an `Image` that is no reference (daemon/images/image.go GetImage: ParseAnyReference,
 *   InvalidParameter), 404 for an image not on the machine, "No such image: <familiar ref>" (ErrImageDoesNotExist).
 *   The image's config is merged into the container's as daemon/commit.go merge does (the same in v20.10.24,
 *   v26.1.5 and docker-v29.0.0): User, WorkingDir when the container has none; the image's Env entries whose names
 *   the container's Env lacks, after it; and `if len(Entrypoint) == 0 { if len(Cmd) == 0 { Cmd = image's };
 *   if Entrypoint == nil { Entrypoint = image's } }`: a container that sets no Entrypoint (absent or null) runs the
 *   image's with its own Cmd as arguments; `[]` keeps the image's out and its Cmd too only when Cmd is empty. Then
 *   daemon/create.go mergeAndVerifyConfig: an Entrypoint of [""] is none, and neither Entrypoint nor Cmd is 400
 *   "no command specified".
 * - start: ContainerStart, 204, 304 when already running; the runtime's refusal of a command not in PATH (runc).
 * - wait: ContainerWait, headers written at once from API 1.30 (before it, with the body when the container stops, and
 *   `condition` unread: container_routes.go postContainersWait legacyBehaviorPre130), then `{"StatusCode"}` and
 *   `Error` only when there is one (api/types/container WaitResponse, `Error,omitempty`); conditions not-running,
 *   next-exit, removed.
 * - logs: ContainerLogs; frames `[stream,0,0,0,size uint32 BE]` + payload when Tty is false (api/pkg/stdcopy);
 *   Content-Type application/vnd.docker.multiplexed-stream from API 1.42 on for a non-TTY container, else
 *   application/vnd.docker.raw-stream (api/server/router/container/container_routes.go getContainersLogs).
 * - kill: ContainerKill, 204; 409 "Container <id> is not running" (daemon/errors.go errNotRunning).
 * - remove: ContainerDelete, 204; 409 "cannot remove container "/<name>": container is running: stop the container
 *   before removing or force remove" (daemon/delete.go).
 * - image inspect and pull: docker-images.ts.
 * - not found: 404 "No such container: <id>" (daemon/container/view.go).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { constants as os } from "node:os";
import { join } from "node:path";
import { familiar, type ImageStore, parseRef, type StandInImage } from "./docker-images.ts";
import { isPlainObject, parseJson, readBody, sendEmpty, sendJson } from "./http.ts";

/** One bind: the host's directory and where the container sees it. */
export interface ContainerBind {
  source: string;
  target: string;
  readOnly: boolean;
}

/** A container as the stand-in recorded it, for a test's assertions. Removed ones stay in the list. */
export interface StandInContainer {
  id: string;
  /** Without Docker's leading slash. */
  name: string;
  image: string;
  /** `User` as sent ("988:988"); "" when none. */
  user: string;
  workingDir: string;
  /** Entrypoint and Cmd after the image's were merged in, as `docker inspect` shows them; the command is both. */
  cmd: string[];
  entrypoint: string[];
  /** The container's Env, the image's after it (those it does not set). */
  env: string[];
  labels: Record<string, string>;
  binds: ContainerBind[];
  tty: boolean;
  networkMode: string;
  memory: number;
  /** HostConfig.CapDrop, SecurityOpt and PidsLimit as sent (0: none). */
  capDrop: string[];
  securityOpt: string[];
  pidsLimit: number;
  autoRemove: boolean;
  state: "created" | "running" | "exited" | "removed";
  /** What was run here: the command line after the paths were mapped, the directory and the ids. */
  ran?: { argv: string[]; cwd: string; uid: number; gid: number };
  exitCode?: number;
  /** The signal a kill (or a forced remove) sent. */
  killedWith?: string;
  /** Everything it printed, as [stream, bytes] (1 stdout, 2 stderr), bounded. */
  output: { stream: 1 | 2; data: Buffer }[];
}

/** The most output kept per container (a runaway command must not fill the test's memory). */
const OUTPUT_KEPT = 16 * 2 ** 20;
/** Docker's PATH when neither the image nor the container sets one (moby container.CreateDaemonEnvironment). */
const DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const NAME = /^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

type Event = (action: string, container: StandInContainer, attributes?: Record<string, string>) => void;

/** A request the container and image routes answered: method, path (without the version prefix), status. */
export interface ContainerCall {
  method: string;
  path: string;
  status: number;
  /** The API version it was answered at, its minor number (41 for /v1.41/…; the engine's own without a prefix). */
  api: number;
}

interface Live {
  child: ChildProcess;
  exited: Promise<void>;
}

/**
 * The container routes: what each reads of the query before it looks the container up (a 400 for any container),
 * and the words moby puts before each of its errors (postContainersKill: `cannot kill container: <ref>: `).
 */
const ROUTES: Record<
  string,
  { check?: (query: URLSearchParams) => string | undefined; wrap?: (ref: string) => string }
> = {
  "POST start": {},
  "POST wait": {
    check: (query) => {
      const condition = query.get("condition") ?? "";
      const known = ["", "not-running", "next-exit", "removed"].includes(condition);
      return known ? undefined : `invalid condition: ${JSON.stringify(condition)}`;
    },
  },
  "GET logs": {
    check: (query) =>
      truthy(query.get("stdout")) || truthy(query.get("stderr"))
        ? undefined
        : "Bad parameters: you must choose at least one stream",
  },
  "POST kill": {
    // daemon/kill.go ContainerKill parses the signal before it looks the container up.
    check: (query) => {
      const signal = query.get("signal") || "SIGKILL";
      return signalName(signal) ? undefined : `invalid signal: ${signal}`; // moby/sys/signal ParseSignal
    },
    wrap: (ref) => `cannot kill container: ${ref}: `,
  },
  "DELETE ": {},
};

/** The networks a node running Wings has beside Docker's own: Wings' (its config.yml docker.network.name). */
export const DEFAULT_NETWORKS = ["pterodactyl_nw"];

export class ContainerEngine {
  readonly containers: StandInContainer[] = [];
  readonly calls: ContainerCall[] = [];
  readonly #images: ImageStore;
  /** Creates still to be made and then left unanswered (the connection dropped): DockerStandIn.dropNextCreateAnswer. */
  dropCreateAnswers = 0;
  /** The user-defined networks on the engine (Wings' pterodactyl_nw by default). */
  readonly #networks: Set<string>;
  /** The image each container was made from (its programs stand in for the image's). */
  readonly #imageOf = new Map<string, StandInImage>();
  readonly #event: Event;
  readonly #live = new Map<string, Live>();
  /** How many times each container's command ended (a wait for `next-exit` waits for one more). */
  readonly #exits = new Map<string, number>();
  /** Waiters and log followers, told when a container's state changes or it prints. */
  readonly #watchers = new Set<() => void>();
  readonly #followers = new Map<StandInContainer, Set<(chunk: { stream: 1 | 2; data: Buffer } | null) => void>>();

  constructor(images: ImageStore, event: Event, networks: readonly string[] = DEFAULT_NETWORKS) {
    this.#images = images;
    this.#event = event;
    this.#networks = new Set(networks);
  }

  /** Answers a container or image route; false when `path` is none of them. */
  /** `api`: the request's API version's minor number (1.NN). */
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, api: number): boolean {
    const method = req.method ?? "GET";
    const record = () => this.calls.push({ method, path, status: res.statusCode, api });
    if (method === "POST" && path === "/containers/create") {
      res.on("finish", record);
      void this.#create(req, res, query);
      return true;
    }
    if (method === "POST" && path === "/images/create") {
      res.on("finish", record);
      this.#images.pull(res, query);
      return true;
    }
    const image = /^\/images\/(.+)\/json$/.exec(path);
    if (method === "GET" && image?.[1]) {
      res.on("finish", record);
      this.#images.inspect(res, decodeURIComponent(image[1]), api);
      return true;
    }
    const match = /^\/containers\/([^/]+)(?:\/(start|wait|logs|kill))?$/.exec(path);
    if (!match?.[1]) return false;
    const [, encoded, action] = match;
    const ref = decodeURIComponent(encoded ?? "");
    const route = ROUTES[`${method} ${action ?? ""}`];
    if (!route) return false;
    res.on("finish", record);
    // The query is read before the container is looked up (container_routes.go): a bad one is 400 for any container.
    const refused = route.check?.(query);
    const container = refused === undefined ? this.#find(ref) : undefined;
    const wrap = route.wrap?.(ref) ?? "";
    if (refused !== undefined) sendJson(res, 400, { message: `${wrap}${refused}` });
    else if (!container) sendJson(res, 404, { message: `${wrap}No such container: ${ref}` });
    else {
      const handlers: Record<string, (c: StandInContainer) => void> = {
        "POST start": (c) => this.#start(res, c),
        // Before API 1.30 the condition is not read (postContainersWait legacyBehaviorPre130).
        "POST wait": (c) =>
          this.#wait(req, res, c, api >= 30 ? query.get("condition") || "not-running" : "not-running", api),
        "GET logs": (c) => this.#logs(req, res, c, query, api),
        "POST kill": (c) => this.#kill(res, c, ref, query.get("signal") || "SIGKILL"),
        "DELETE ": (c) => void this.#remove(res, c, ref, query.get("force")),
      };
      handlers[`${method} ${action ?? ""}`]?.(container);
    }
    return true;
  }

  /** Kills every command still running (the stand-in closes) and ends the log streams. */
  async close(): Promise<void> {
    const exits = [...this.#live.values()].map(({ child, exited }) => {
      killGroup(child, "SIGKILL");
      return exited;
    });
    await Promise.all(exits);
    for (const followers of this.#followers.values()) for (const follow of followers) follow(null);
  }

  /** By full id, name (with or without the slash) or a unique prefix of the id, as Docker looks containers up. */
  #find(ref: string): StandInContainer | undefined {
    const present = this.containers.filter((c) => c.state !== "removed");
    const exact = present.find((c) => c.id === ref || c.name === ref.replace(/^\//, ""));
    if (exact) return exact;
    const prefixed = present.filter((c) => ref.length > 0 && c.id.startsWith(ref));
    return prefixed.length === 1 ? prefixed[0] : undefined;
  }

  async #create(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const text = await readBody(req);
    const type = notJson(req.headers["content-type"] ?? "", text);
    if (type) {
      sendJson(res, 400, { message: type });
      return;
    }
    const parsed = parseJson(text);
    if (!parsed.ok || !isPlainObject(parsed.value)) {
      sendJson(res, 400, { message: "invalid JSON: the body is not a JSON object" });
      return;
    }
    const body = parsed.value;
    const name = query.get("name") ?? "";
    if (name !== "" && !NAME.test(name)) {
      sendJson(res, 400, { message: `Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed` });
      return;
    }
    const ref = typeof body.Image === "string" ? body.Image : "";
    if (!parseRef(ref)) {
      sendJson(res, 400, { message: "invalid reference format" });
      return;
    }
    const image = this.#images.get(ref);
    if (!image) {
      sendJson(res, 404, { message: `No such image: ${familiar(ref)}` });
      return;
    }
    const taken = name === "" ? undefined : this.#find(name.replace(/^\//, ""));
    if (taken && taken.name === name.replace(/^\//, "")) {
      const message = `Conflict. The container name "/${taken.name}" is already in use by container "${taken.id}". You have to remove (or rename) that container to be able to reuse that name.`;
      sendJson(res, 409, { message });
      return;
    }
    const binds = readBinds(body.HostConfig);
    if ("error" in binds) {
      sendJson(res, 400, { message: binds.error });
      return;
    }
    const container = newContainer(body, image, name.replace(/^\//, ""), binds.value);
    if (container.entrypoint.length === 0 && container.cmd.length === 0) {
      sendJson(res, 400, { message: "no command specified" });
      return;
    }
    this.#imageOf.set(container.id, image);
    this.containers.push(container);
    this.#event("create", container);
    if (this.dropCreateAnswers > 0) {
      this.dropCreateAnswers -= 1;
      res.socket?.destroy();
      return;
    }
    sendJson(res, 201, { Id: container.id, Warnings: [] });
  }

  #start(res: ServerResponse, container: StandInContainer): void {
    if (container.state === "running") {
      sendEmpty(res, 304);
      return;
    }
    // A network the engine lacks is found only at the start (moby daemon/container_operations.go, seen on Debian's
    // docker.io 20.10: create 201, start 404 "network <name> not found"). `bridge` and `default` are the engine's own
    // bridge, which a daemon with `--bridge=none` leaves the container without any network for, not an error.
    const mode = container.networkMode;
    if (
      !["default", "bridge", "host", "none"].includes(mode) &&
      !mode.startsWith("container:") &&
      !this.#networks.has(mode)
    ) {
      sendJson(res, 404, { message: `network ${mode} not found` });
      return;
    }
    const image = this.#imageOf.get(container.id);
    const plan = runPlan(container, image, (path) => image && this.#images.program(image, path));
    if ("error" in plan) {
      sendJson(res, 400, { message: plan.error });
      return;
    }
    container.ran = plan.value;
    container.exitCode = undefined;
    container.killedWith = undefined;
    const child = spawn("setpriv", asUser(plan.value), {
      cwd: plan.value.cwd,
      env: environment(container.env),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => {
      child.on("close", (code, signal) => {
        this.#exited(container, code ?? 128 + (signal ? (os.signals[signal] ?? 0) : 0));
        resolve();
      });
    });
    child.on("error", (error) => this.#print(container, 2, Buffer.from(`docker stand-in: ${error.message}\n`)));
    child.stdout?.on("data", (data: Buffer) => this.#print(container, 1, data));
    child.stderr?.on("data", (data: Buffer) => this.#print(container, 2, data));
    this.#live.set(container.id, { child, exited });
    container.state = "running";
    this.#event("start", container);
    this.#changed();
    sendEmpty(res, 204);
  }

  #print(container: StandInContainer, stream: 1 | 2, data: Buffer): void {
    const kept = container.output.reduce((sum, chunk) => sum + chunk.data.length, 0);
    if (kept + data.length > OUTPUT_KEPT) return;
    const chunk = { stream, data };
    container.output.push(chunk);
    for (const follow of this.#followers.get(container) ?? []) follow(chunk);
  }

  #exited(container: StandInContainer, code: number): void {
    this.#live.delete(container.id);
    this.#exits.set(container.id, (this.#exits.get(container.id) ?? 0) + 1);
    container.exitCode = code;
    container.state = "exited";
    this.#event("die", container, { exitCode: String(code) });
    for (const follow of this.#followers.get(container) ?? []) follow(null);
    this.#followers.delete(container);
    if (container.autoRemove) this.#removed(container);
    this.#changed();
  }

  #removed(container: StandInContainer): void {
    container.state = "removed";
    this.#event("destroy", container);
    this.#changed();
  }

  #changed(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  /** Headers at once (the client knows the wait is in place), the body when the condition holds. */
  #wait(req: IncomingMessage, res: ServerResponse, container: StandInContainer, condition: string, api: number): void {
    res.writeHead(200, { "Content-Type": "application/json" });
    if (api >= 30) res.flushHeaders();
    const exitsBefore = this.#exits.get(container.id) ?? 0;
    const done = () => {
      if (condition === "removed") return container.state === "removed";
      if (condition === "next-exit") return (this.#exits.get(container.id) ?? 0) > exitsBefore;
      return container.state !== "running";
    };
    const check = () => {
      if (!done()) return;
      this.#watchers.delete(check);
      res.end(`${JSON.stringify({ StatusCode: container.exitCode ?? 0 })}\n`);
    };
    this.#watchers.add(check);
    req.on("close", () => this.#watchers.delete(check));
    check();
  }

  #logs(req: IncomingMessage, res: ServerResponse, c: StandInContainer, query: URLSearchParams, api: number): void {
    const wanted = new Set<number>();
    if (truthy(query.get("stdout"))) wanted.add(1);
    if (truthy(query.get("stderr"))) wanted.add(2);
    const multiplexed = !c.tty && api >= 42;
    res.writeHead(200, {
      "Content-Type": multiplexed ? "application/vnd.docker.multiplexed-stream" : "application/vnd.docker.raw-stream",
    });
    res.flushHeaders();
    const write = (chunk: { stream: 1 | 2; data: Buffer }) => {
      if (!wanted.has(chunk.stream)) return;
      res.write(c.tty ? chunk.data : frame(chunk.stream, chunk.data));
    };
    for (const chunk of c.output) write(chunk);
    if (!truthy(query.get("follow")) || c.state === "exited" || c.state === "removed") {
      res.end();
      return;
    }
    const followers = this.#followers.get(c) ?? new Set();
    this.#followers.set(c, followers);
    const follow = (chunk: { stream: 1 | 2; data: Buffer } | null) => {
      if (chunk) write(chunk);
      else {
        followers.delete(follow);
        res.end();
      }
    };
    followers.add(follow);
    req.on("close", () => followers.delete(follow));
  }

  #kill(res: ServerResponse, container: StandInContainer, ref: string, signal: string): void {
    const live = this.#live.get(container.id);
    if (!live || container.state !== "running") {
      // daemon/errors.go errNotRunning, wrapped by postContainersKill.
      sendJson(res, 409, { message: `cannot kill container: ${ref}: container ${container.id} is not running` });
      return;
    }
    const name = signalName(signal) as NodeJS.Signals;
    container.killedWith = name;
    this.#event("kill", container, { signal: String(os.signals[name]) });
    killGroup(live.child, name);
    sendEmpty(res, 204);
  }

  async #remove(res: ServerResponse, container: StandInContainer, ref: string, force: string | null): Promise<void> {
    const live = this.#live.get(container.id);
    if (live && !truthy(force)) {
      // daemon/delete.go: the name as the request gave it, quoted (%q).
      const message = `cannot remove container ${JSON.stringify(ref)}: container is running: stop the container before removing or force remove`;
      sendJson(res, 409, { message });
      return;
    }
    if (live) {
      container.killedWith = "SIGKILL";
      killGroup(live.child, "SIGKILL");
      await live.exited;
    }
    if (container.state !== "removed") this.#removed(container);
    sendEmpty(res, 204);
  }
}

/** The container as created: the request's config with the image's merged in (daemon/commit.go merge). */
function newContainer(
  body: Record<string, unknown>,
  image: StandInImage,
  name: string,
  binds: ContainerBind[],
): StandInContainer {
  const host = isPlainObject(body.HostConfig) ? body.HostConfig : {};
  const id = randomBytes(32).toString("hex");
  const user = typeof body.User === "string" ? body.User : "";
  const workingDir = typeof body.WorkingDir === "string" ? body.WorkingDir : "";
  return {
    id,
    name: name || `stand_in_${id.slice(0, 12)}`,
    image: typeof body.Image === "string" ? body.Image : image.ref,
    user: user || image.config.User,
    workingDir: workingDir || image.config.WorkingDir,
    ...command(body, image),
    env: mergeEnv(strings(body.Env), image.config.Env),
    labels: isPlainObject(body.Labels)
      ? Object.fromEntries(Object.entries(body.Labels).map(([k, v]) => [k, String(v)]))
      : {},
    binds,
    tty: body.Tty === true,
    networkMode: typeof host.NetworkMode === "string" ? host.NetworkMode : "default",
    memory: typeof host.Memory === "number" ? host.Memory : 0,
    capDrop: strings(host.CapDrop),
    securityOpt: strings(host.SecurityOpt),
    pidsLimit: typeof host.PidsLimit === "number" ? host.PidsLimit : 0,
    autoRemove: host.AutoRemove === true,
    state: "created",
    output: [],
  };
}

/**
 * Entrypoint and Cmd as moby merges them with the image's (daemon/commit.go merge, then mergeAndVerifyConfig): an
 * Entrypoint absent or null (Go's nil: strslice leaves it nil) takes the image's; an empty list keeps it out; either
 * way, without an Entrypoint of its own the container takes the image's Cmd when its own is empty. `[""]` is none.
 */
function command(body: Record<string, unknown>, image: StandInImage): { entrypoint: string[]; cmd: string[] } {
  const own = (value: unknown) =>
    value === undefined || value === null ? undefined : typeof value === "string" ? [value] : strings(value);
  let entrypoint = own(body.Entrypoint);
  let cmd = own(body.Cmd);
  if (!entrypoint || entrypoint.length === 0) {
    if (!cmd || cmd.length === 0) cmd = image.config.Cmd ?? undefined;
    if (!entrypoint) entrypoint = image.config.Entrypoint ?? undefined;
  }
  if (entrypoint?.length === 1 && entrypoint[0] === "") entrypoint = undefined;
  return { entrypoint: entrypoint ?? [], cmd: cmd ?? [] };
}

/** The container's Env, then each of the image's whose name it does not set (daemon/commit.go merge). */
function mergeEnv(own: string[], image: string[]): string[] {
  const names = new Set(own.map((entry) => entry.split("=")[0]));
  return [...own, ...image.filter((entry) => !names.has(entry.split("=")[0]))];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * HostConfig.Binds ("/host:/ctr[:ro|rw]"; a missing host directory is made, as Docker does for Binds) and
 * HostConfig.Mounts of type bind (a missing source refused, daemon/volume/mounts/linux_parser.go).
 */
function readBinds(hostConfig: unknown): { value: ContainerBind[] } | { error: string } {
  const host = isPlainObject(hostConfig) ? hostConfig : {};
  const binds: ContainerBind[] = [];
  for (const spec of strings(host.Binds)) {
    const [source = "", target = "", mode = ""] = spec.split(":");
    if (!source.startsWith("/"))
      return { error: `invalid volume specification: '${spec}': named volumes are not in the stand-in` };
    if (!target.startsWith("/")) return { error: `invalid volume specification: '${spec}'` };
    mkdirSync(source, { recursive: true });
    binds.push({ source, target, readOnly: mode.split(",").includes("ro") });
  }
  for (const mount of Array.isArray(host.Mounts) ? host.Mounts : []) {
    if (!isPlainObject(mount) || mount.Type !== "bind")
      return { error: "mount type not supported by the stand-in: only bind" };
    const source = String(mount.Source ?? "");
    if (!statSync(source, { throwIfNoEntry: false })) {
      return { error: `invalid mount config for type "bind": bind source path does not exist: ${source}` };
    }
    binds.push({ source, target: String(mount.Target ?? ""), readOnly: mount.ReadOnly === true });
  }
  return { value: binds };
}

/**
 * Entrypoint then Cmd, the image's programs replaced by the stand-in's scripts for them (`program`), paths in binds
 * mapped, the executable found, the user's ids (numbers, or a name in the image's /etc/passwd); or the runtime's
 * refusal.
 */
function runPlan(
  c: StandInContainer,
  image: StandInImage | undefined,
  program: (path: string) => string | undefined,
): { value: NonNullable<StandInContainer["ran"]> } | { error: string } {
  const [name = "", group] = c.user.split(":");
  const known = name === "root" ? "0:0" : image?.users[name];
  const ids = /^(\d+)(?::(\d+))?$/.exec(known ?? c.user);
  if (c.user !== "" && !ids) {
    return { error: `unable to find user ${c.user}: no matching entries in passwd file` };
  }
  // runc mounts each bind in the container's new mount namespace: a descriptor's path resolves to a mount of another
  // namespace, which mount(2) refuses (seen on Debian's docker.io 20.10 and 26.1 with runc 1.1).
  const magic = c.binds.find((b) => /^\/proc\/(?:self|\d+)\/fd\//.test(b.source));
  if (magic) {
    return {
      error: `failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error mounting "${magic.source}" to rootfs at "${magic.target}": mount ${magic.source}:${magic.target} (via /proc/self/fd/6), flags: 0x5000: invalid argument: unknown`,
    };
  }
  const uid = ids ? Number(ids[1]) : (process.getuid?.() ?? 0);
  const gid =
    group !== undefined && /^\d+$/.test(group) ? Number(group) : ids ? Number(ids[2] ?? 0) : (process.getgid?.() ?? 0);
  const argv = [...c.entrypoint, ...c.cmd].map((arg) => program(arg) ?? mapPaths(arg, c));
  const cwd = hostDirOf(c.workingDir || "/", c) ?? c.binds[0]?.source ?? process.cwd();
  const [command = ""] = argv;
  if (command === "") return { error: "no command specified" };
  if (!command.includes("/") && !onPath(command, c.env)) {
    return {
      error: `failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "${command}": executable file not found in $PATH: unknown`,
    };
  }
  return { value: { argv, cwd, uid, gid } };
}

/**
 * setpriv's arguments to run the command as the container's user with no other groups, keeping one capability:
 * CAP_DAC_READ_SEARCH, to pass the host's parents of a bind's source (a private staging directory under a root-only
 * directory), which a real bind mount hides. It can read more than a container could; it writes only where the user
 * may.
 */
function asUser(plan: NonNullable<StandInContainer["ran"]>): string[] {
  const caps = ["--inh-caps", "+dac_read_search", "--ambient-caps", "+dac_read_search"];
  return [`--reuid=${plan.uid}`, `--regid=${plan.gid}`, "--clear-groups", ...caps, "--", ...plan.argv];
}

/** The host directory a container path is in, through the bind whose target holds it. */
function hostDirOf(path: string, c: StandInContainer): string | undefined {
  const bind = [...c.binds]
    .sort((a, b) => b.target.length - a.target.length)
    .find((b) => path === b.target || path.startsWith(`${b.target}/`));
  return bind ? join(bind.source, path.slice(bind.target.length)) : undefined;
}

/**
 * Absolute paths in an argument (alone, or after `=`, `:`, `,`, a quote or a space) that are inside a bind become
 * the bind's host source; paths of the image (/usr/bin/java) stay.
 */
function mapPaths(arg: string, c: StandInContainer): string {
  return arg.replace(
    /(^|[=:,"'\s])(\/[^=:,"'\s]*)/g,
    (_all, before: string, path: string) => `${before}${hostDirOf(path, c) ?? path}`,
  );
}

/** The container's environment (its Env with the image's merged in); Docker's PATH when it has none. */
function environment(env: string[]): Record<string, string> {
  const out: Record<string, string> = { HOME: "/home/container" };
  for (const entry of [DEFAULT_PATH, ...env]) {
    const at = entry.indexOf("=");
    if (at > 0) out[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return out;
}

function onPath(command: string, env: string[]): boolean {
  const path = environment(env).PATH ?? "";
  return path.split(":").some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return statSync(join(dir, command)).isFile();
    } catch {
      return false;
    }
  });
}

/** Docker's `signal` parameter: SIGKILL, KILL or a number. */
function signalName(signal: string): NodeJS.Signals | undefined {
  const signals = os.signals as Record<string, number>;
  if (/^\d+$/.test(signal)) {
    return Object.keys(signals).find((name) => signals[name] === Number(signal)) as NodeJS.Signals | undefined;
  }
  const name = signal.toUpperCase().startsWith("SIG") ? signal.toUpperCase() : `SIG${signal.toUpperCase()}`;
  return name in signals ? (name as NodeJS.Signals) : undefined;
}

/** The whole process group, as a container's PID namespace ends together. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

/** One stdcopy frame: stream, three zero bytes, the payload's length (uint32 big-endian), the payload. */
function frame(stream: 1 | 2, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(data.length, 4);
  return Buffer.concat([header, data]);
}

/**
 * api/server/httputils/httputils.go CheckForJSON: a body must come as application/json (no Content-Type is fine only
 * without a body); the 400's words, or undefined.
 */
function notJson(contentType: string, body: string): string | undefined {
  if (contentType === "" && body === "") return undefined;
  if (contentType === "") return "malformed Content-Type header (): mime: no media type";
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json"
    ? undefined
    : `unsupported Content-Type header (${contentType}): must be 'application/json'`;
}

/** Docker reads booleans in queries with strconv.ParseBool-like rules: 1, true, yes. */
function truthy(value: string | null): boolean {
  return value !== null && ["1", "true", "True", "TRUE", "yes"].includes(value);
}
