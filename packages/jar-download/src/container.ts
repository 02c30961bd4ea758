import { randomBytes } from "node:crypto";
import { closeSync, constants, openSync } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { formatDuration, parseJsonOrUndefined } from "@mcops/core/format";
import type { VolumeDir } from "@mcops/core/volume";
import { CONTAINER_ANSWER_MS, DockerSocket, printable } from "./docker-socket.ts";
import { ensureImage, type PullLog } from "./image-pull.ts";

/**
 * A loader's installer (Forge, NeoForge, Quilt) runs in the server's own container image through the Docker Engine
 * API on Wings' socket, never on the host: it is the vendor's code, downloading the vendor's libraries, so it runs as
 * the game's user with only the private staging directory bound in, as Wings runs an egg's install script
 * (pterodactyl/wings server/install.go: create, start, logs followed, wait, then the container removed).
 *
 * Docker's side: moby/moby api/swagger.yaml, at the API version docker-socket.ts negotiates: create 201 `{Id}`, 404
 * `No such image`; start 204/304; wait 200 `{StatusCode, Error?}`; logs of a non-TTY container as stdcopy frames
 * `[stream,0,0,0,size uint32 BE]` + payload (api/pkg/stdcopy); kill; DELETE ?force=1. The image is pulled first
 * (image-pull.ts).
 *
 * The container sets its own Entrypoint (a shell that checks the bind, then execs the command, which is its Cmd), so
 * that the image's own ENTRYPOINT never runs: Docker merges a container's config with its image's
 * (moby/moby daemon/commit.go merge, the same in v20.10.24, v26.1.5 and docker-v29.0.0): `if len(userConf.Entrypoint)
 * == 0 { if len(userConf.Cmd) == 0 { userConf.Cmd = imageConf.Cmd }; if userConf.Entrypoint == nil {
 * userConf.Entrypoint = imageConf.Entrypoint } }`. With Cmd alone, the image's ENTRYPOINT runs with the installer as its
 * arguments: temurin's /__cacert_entrypoint.sh (pterodactyl/yolks java_17, java_21, java_25) ends in `exec "$@"` and
 * runs it, but pterodactyl/yolks java_22 to java_24 and every Ptero-Eggs/yolks Java image have
 * `ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/entrypoint.sh"]`, whose entrypoint.sh ignores its arguments, runs the
 * empty $STARTUP and ends with 0: the installer never ran. An empty Entrypoint `[]` would also keep the image's out,
 * but only by being a non-nil empty list after Docker decodes the JSON (strslice), and, with no Cmd, it takes the
 * image's Cmd: a non-empty Entrypoint leaves nothing to merge on any engine.
 */

export interface RunInstallerOptions {
  /** Docker's socket (/var/run/docker.sock beside Wings). */
  socket: string;
  /** The server's image, as the panel reports it (ghcr.io/pterodactyl/yolks:java_21). */
  image: string;
  /** Who the installer runs as: the game's user (988:988). */
  user: { uid: number; gid: number };
  /**
   * The private staging directory, bound at /home/container, the installer's working directory: Docker is given its
   * path (`dir.path`), and the container proves it was given this directory (placeGuard) before the installer runs.
   */
  dir: VolumeDir;
  /**
   * The command, run in the image (`java -jar installer.jar --installServer /home/container`): the container's Cmd,
   * which its own Entrypoint execs once the bind is proved; the image's ENTRYPOINT does not run.
   */
  cmd: string[];
  /** Past this the container is killed and removed and the install fails. */
  timeoutMs: number;
  /** Each line the installer prints (stdout and stderr), bounded, control characters removed. */
  onLine: (line: string) => void;
  /** The image's pull (a line per layer done, the final status) and its warnings. */
  log: PullLog;
  /** Aborting it kills and removes the container (the tool was stopped). */
  signal?: AbortSignal;
  /** The container's name (default mcops-installer-<random>). */
  name?: string;
  /** The most memory the container may use, swap included (default INSTALLER_MEMORY_BYTES). */
  memoryBytes?: number;
  /** The Docker network it joins (INSTALLER_NETWORK; default `bridge`, Docker's own). */
  network?: string;
}

/**
 * Wings' own installer containers get the higher of the server's memory limit and `docker.installer_limits.memory`
 * (1024 MiB by default; pterodactyl/wings config/config_docker.go, server/install.go resourceLimits): the least an
 * installer is given here too. A runaway installer is killed by the kernel in its container, not the VM's game.
 */
export const INSTALLER_MEMORY_BYTES = 1024 * 1024 * 1024;

/** Where the installer runs inside the container: the yolks images' home, where Wings mounts a server's data. */
export const CONTAINER_DIR = "/home/container";
/** The labels on the installer's container (Wings' installer has Service=Pterodactyl, ContainerType=server_installer). */
export const INSTALLER_LABELS = { Service: "mcops", ContainerType: "mcops_installer" };

/** The installer's processes and threads (a Java installer uses a few dozen). */
const INSTALLER_PIDS = 512;
/** After the wait ends, how long the log stream may take to end with it. */
const LOGS_END_MS = 5_000;
/** One line of the installer's output, and all of it that is passed on (a NeoForge install prints ~1,000 lines). */
export const MAX_LINE_BYTES = 4096;
export const MAX_OUTPUT_LINES = 20_000;

/**
 * Pulls `image` and runs `cmd` in a new container of it; returns its exit code (a non-zero one is the caller's to
 * judge). Throws JobError when the image is neither on the machine nor pulled, Docker refuses, or the time runs out
 * (the container is then killed); ConfigError when Docker's socket cannot be reached. The container is removed on
 * every path.
 */
export async function runInstaller(options: RunInstallerOptions): Promise<{ exitCode: number }> {
  const source = options.dir.path;
  if (!source.startsWith("/") || /[:,]/.test(source)) {
    throw new JobError("the staging directory cannot be bound into a container", {
      where: source,
      hint: "it must be an absolute path without ':' or ','",
    });
  }
  const docker = new DockerSocket(options.socket);
  const image = await ensureImage(docker, options.image, { log: options.log, signal: options.signal });
  const guard = placeGuard(options.dir);
  try {
    const id = await createContainer(docker, { ...options, image }, guard);
    const stop = new AbortController();
    try {
      await startContainer(docker, id, options);
      const logs = followLogs(docker, id, options.onLine, stop.signal);
      const waited = docker.wait(id, stop.signal);
      waited.catch(() => undefined); // when the time runs out first, its end (aborted) is nobody's business
      const exitCode = await untilDone(waited, options, () => kill(docker, id));
      await Promise.race([logs, delay(LOGS_END_MS)]);
      if (options.dir.lstat(guard) !== undefined) {
        throw new JobError("Docker bound another directory than the installer's at /home/container: nothing was run", {
          where: source,
          hint: "the staging directory's path was changed while its container started (by the game's user?); run again",
        });
      }
      return { exitCode };
    } finally {
      stop.abort();
      await docker.remove(id);
    }
  } finally {
    if (options.dir.lstat(guard) !== undefined) options.dir.unlink(guard);
  }
}

/**
 * Starts the container. A network the engine lacks is found only now (Docker creates the container, then answers the
 * start 404 "network <name> not found"): said with the setting that named it.
 */
async function startContainer(docker: DockerSocket, id: string, options: RunInstallerOptions): Promise<void> {
  const answer = await docker.call("POST", `/containers/${id}/start`, undefined, { answerMs: CONTAINER_ANSWER_MS });
  if (answer.status === 204 || answer.status === 304) return;
  const network = options.network ?? "bridge";
  if (answer.status === 404 && answer.message === `network ${network} not found`) {
    throw new JobError(`Docker has no network ${network} for the installer's container (INSTALLER_NETWORK)`, {
      where: options.socket,
      hint: "docker network ls names the networks there: set INSTALLER_NETWORK to one that reaches the internet (bridge is Docker's own, pterodactyl_nw Wings')",
    });
  }
  throw docker.refused("start the installer's container", answer);
}

/**
 * Docker binds a directory by its path, resolved when the container starts: a descriptor's path
 * (/proc/<pid>/fd/<n>) cannot be bound (runc mounts it in the container's own mount namespace, where it is another
 * namespace's mount: "invalid argument"), so the path the staging directory was made at is given. That path runs
 * through the volume, whose entries the game's user can rename: it could have Docker bind a directory of its choosing
 * there. So a file only this process knows the name of (the private directory above is root's, mode 700) is put in the
 * staging directory first, and the container's own first step removes it and runs the installer only if it is there;
 * one still there afterwards (seen through the descriptor) means the container was given another directory, and
 * nothing it did is used. Returns the file's name.
 */
function placeGuard(dir: VolumeDir): string {
  const name = `.mcops-bound-${randomBytes(16).toString("hex")}`;
  closeSync(
    openSync(dir.at(name), constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o444),
  );
  return name;
}

/**
 * The container's Entrypoint: a shell that removes the guard and then becomes the installer (Cmd, as "$@"), or says
 * why not and ends with 125 (Docker's own code for a container that could not run its command) having run nothing.
 */
function guardedEntrypoint(guard: string): string[] {
  const file = `${CONTAINER_DIR}/${guard}`;
  const script = `if [ -f ${file} ] && rm -f ${file}; then exec "$@"; fi; echo "mcops: the working directory is not the one jar-download made for the installer: nothing was run" >&2; exit 125`;
  return ["/bin/sh", "-c", script, "mcops-installer"];
}

/**
 * The container: the image, the command as its own Entrypoint and Cmd (the top of this file), the user, the staging
 * directory bound as its working directory, the network.
 */
async function createContainer(docker: DockerSocket, options: RunInstallerOptions, guard: string): Promise<string> {
  if (options.cmd[0] === undefined || options.cmd[0] === "") {
    throw new JobError("the installer has no command to run", { where: options.image });
  }
  // Always named: a create whose answer never came may still have made the container, which is then removed by name.
  const name = options.name ?? `mcops-installer-${randomBytes(6).toString("hex")}`;
  const create = `/containers/create?name=${encodeURIComponent(name)}`;
  const answer = await docker
    .call("POST", create, containerConfig(options, guard), {
      answerMs: CONTAINER_ANSWER_MS,
    })
    .catch(async (error: unknown) => {
      await docker.remove(name);
      throw error;
    });
  if (answer.status === 404) {
    // It was pulled or found a moment ago: removed since, or a local (~) image that is not there.
    throw new JobError(`the image ${options.image} is not on this machine`, {
      where: options.socket,
      hint: `build or load it on this node (docker image ls ${options.image}), then run again`,
    });
  }
  if (answer.status === 409) {
    throw new JobError(`a container named ${name} is already there (${answer.message})`, {
      where: options.socket,
      hint: `an earlier install was cut off: docker rm -f ${name}`,
    });
  }
  const id = (parseJsonOrUndefined(answer.body) as { Id?: unknown } | undefined)?.Id;
  if (answer.status !== 201 || typeof id !== "string" || !/^[0-9a-f]{12,64}$/.test(id)) {
    throw docker.refused("create the installer's container", answer);
  }
  return id;
}

/** What the container is made of (ContainerCreate's body). */
function containerConfig(options: RunInstallerOptions, guard: string) {
  return {
    Image: options.image,
    Entrypoint: guardedEntrypoint(guard),
    Cmd: options.cmd,
    User: `${options.user.uid}:${options.user.gid}`,
    WorkingDir: CONTAINER_DIR,
    Labels: INSTALLER_LABELS,
    Tty: false,
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: {
      Binds: [`${options.dir.path}:${CONTAINER_DIR}`],
      // The installer downloads its libraries and Mojang's server jar: the network must reach the internet.
      NetworkMode: options.network ?? "bridge",
      // As Wings runs the game (environment/docker/container.go): no capability, so no setuid binary of the image
      // makes the installer root in its container, and a bounded number of processes (Wings' default 512), so that
      // a runaway one cannot take the host's process ids from Wings and the game.
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: INSTALLER_PIDS,
      Memory: options.memoryBytes ?? INSTALLER_MEMORY_BYTES,
      MemorySwap: options.memoryBytes ?? INSTALLER_MEMORY_BYTES,
    },
  };
}

/** The exit code, unless the time runs out or the caller aborts first: then the container is killed. */
async function untilDone(
  waited: Promise<number>,
  options: RunInstallerOptions,
  killIt: () => Promise<void>,
): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<"timeout" | "aborted">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
    onAbort = () => resolve("aborted");
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const first = await Promise.race([waited, ended]);
    if (typeof first === "number") return first;
    await killIt();
    if (first === "timeout") {
      throw new JobError(`the installer did not finish within ${formatDuration(options.timeoutMs)}`, {
        where: options.image,
        hint: "its container was killed; see its last lines above (a download that hung?) and run again",
      });
    }
    throw new JobError("stopped while the installer ran", { where: options.image, hint: "its container was killed" });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
}

async function kill(docker: DockerSocket, id: string): Promise<void> {
  // 409: it ended meanwhile. The forced removal that follows kills it anyway.
  await docker.call("POST", `/containers/${id}/kill?signal=SIGKILL`).catch(() => undefined);
}

/** The installer's output as lines, until the container ends (or `stop`). Never rejects. */
function followLogs(
  docker: DockerSocket,
  id: string,
  onLine: (line: string) => void,
  stop: AbortSignal,
): Promise<void> {
  const frames = new LogFrames(onLine);
  return docker
    .stream("GET", `/containers/${id}/logs?stdout=1&stderr=1&follow=1`, { stop }, (chunk) => frames.push(chunk))
    .then(
      () => frames.end(),
      () => frames.end(),
    );
}

/**
 * Docker's stdcopy frames turned into lines, per stream (a frame may end mid-line, and stdout's and stderr's frames
 * interleave): each line at most MAX_LINE_BYTES (the rest of a longer one dropped), at most MAX_OUTPUT_LINES in all,
 * escape sequences and control characters removed. A header of an unknown stream ends the reading, as stdcopy does.
 */
export class LogFrames {
  readonly #onLine: (line: string) => void;
  #header = Buffer.alloc(0);
  #left = 0;
  #stream = 1;
  #broken = false;
  #lines = 0;
  readonly #pending = new Map<number, { bytes: Buffer[]; size: number; cut: boolean }>();

  constructor(onLine: (line: string) => void) {
    this.#onLine = onLine;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.#broken) {
      if (this.#left === 0) {
        const need = 8 - this.#header.length;
        this.#header = Buffer.concat([this.#header, chunk.subarray(at, at + need)]);
        at += Math.min(need, chunk.length - at);
        if (this.#header.length === 8) this.#startFrame();
        continue;
      }
      const take = Math.min(this.#left, chunk.length - at);
      this.#payload(chunk.subarray(at, at + take));
      this.#left -= take;
      at += take;
    }
  }

  /** The stream ended: what is left of each stream is its last line. */
  end(): void {
    for (const stream of [...this.#pending.keys()]) this.#flush(stream);
  }

  #startFrame(): void {
    const type = this.#header[0] ?? 255;
    this.#left = this.#header.readUInt32BE(4);
    this.#header = Buffer.alloc(0);
    if (type > 2) {
      this.#broken = true;
      this.#emit(`(the installer's output stops here: Docker's stream has an unknown header ${type})`);
    }
    this.#stream = type === 2 ? 2 : 1;
  }

  #payload(bytes: Buffer): void {
    let from = 0;
    for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, from)) {
      this.#append(bytes.subarray(from, nl));
      this.#flush(this.#stream);
      from = nl + 1;
    }
    this.#append(bytes.subarray(from));
  }

  #append(bytes: Buffer): void {
    const line = this.#pending.get(this.#stream) ?? { bytes: [], size: 0, cut: false };
    this.#pending.set(this.#stream, line);
    const room = MAX_LINE_BYTES - line.size;
    if (bytes.length > room) line.cut = true;
    const kept = bytes.subarray(0, Math.max(0, room));
    if (kept.length > 0) {
      line.bytes.push(Buffer.from(kept));
      line.size += kept.length;
    }
  }

  #flush(stream: number): void {
    const line = this.#pending.get(stream);
    this.#pending.delete(stream);
    if (!line) return;
    const text = printable(Buffer.concat(line.bytes).toString("utf8"));
    if (text.trim() !== "") this.#emit(line.cut ? `${text} …` : text);
  }

  #emit(text: string): void {
    this.#lines += 1;
    if (this.#lines < MAX_OUTPUT_LINES) this.#onLine(text);
    else if (this.#lines === MAX_OUTPUT_LINES) this.#onLine("(the installer's output goes on; the rest is not logged)");
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
