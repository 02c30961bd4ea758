import { JobError } from "@mcops/core/errors";
import { formatDuration, parseJsonOrUndefined } from "@mcops/core/format";
import type { Logger } from "@mcops/core/log";
import { type DockerSocket, printable } from "./docker-socket.ts";
import { imageParts } from "./image-ref.ts";

/**
 * The installer's image, pulled before its container is made, as Wings pulls the server's image before it creates the
 * server's container (pterodactyl/wings environment/docker/container.go Create → ensureImageExists): when the Java
 * version changes, the installer runs in the image the server is switched to, which a node that only ran the old one
 * usually lacks (Wings pulls it only when it next creates the server's container). Pulled whether or not it is there,
 * as Wings does, so that the installer runs in the image the server will start in.
 *
 * - `~image` (Wings' mark of a local image, "Images prefixed with a ~ are local images that we do not need to try and
 *   pull"): never pulled; the container is made from `image`, as Wings' Create does
 *   (`Image: strings.TrimPrefix(e.meta.Image, "~")`).
 * - A pull that fails when the image is on the machine goes on with it and a warning, as Wings' ensureImageExists
 *   does ("unable to pull requested image from remote source, however the image exists locally"; Wings looks for the
 *   reference among the images' RepoTags, here image inspect answers it, resolving the reference as the create will).
 *   Wings reads only the error before the stream and ignores one in it; here both fail the pull.
 * - No registry credentials: Wings sends those of its `docker.registries` config for an image of that registry
 *   (X-Registry-Auth); mcops does not read Wings' config, so a private registry's image must be pulled on the node by
 *   hand (the error's hint says so).
 *
 * Docker's side (moby/moby api/server/router/image/image_routes.go postImagesCreate, the same from v20.10 to 29):
 * `POST /images/create?fromImage=<repository>&tag=<tag or digest>` (client/image_pull.go: the tag `latest` when the
 * reference has none). Until the first progress message nothing is sent, so a refusal before it (the registry
 * unreachable, the tag or repository unknown, a login wanted) is the answer's status and `{"message"}`: 404 for
 * "manifest … not found" and "pull access denied … may require 'docker login'", 500 for "…: unauthorized" and a
 * registry not reached (distribution/errors.go translatePullError), 401/403 from Docker 29's containerd image store
 * (daemon/containerd/registry_errors.go). After it the status is 200 and the stream carries the error as
 * `{"errorDetail":{"message"},"error"}` (pkg/streamformatter FormatError). The stream is JSON messages, `\r\n` after
 * each (pkg/jsonmessage): per layer `Pulling fs layer`, `Waiting`, `Downloading` and `Extracting` with a progress bar
 * (dozens each), `Verifying Checksum`, `Download complete`, then `Pull complete` or `Already exists`; at the end
 * `Digest: …` and `Status: Downloaded newer image for …` or `Status: Image is up to date for …`.
 */

/** Wings' bound on a pull: "Give it up to 15 minutes to pull the image" (ensureImageExists). */
export const PULL_TIMEOUT_MS = 15 * 60_000;
/** The pull's lines passed on: a layer's end and the final status each (an image has a few dozen layers at most). */
const MAX_PULL_LINES = 200;
/** One progress message; a longer one (no message is) is dropped. */
const MAX_MESSAGE_BYTES = 64 * 1024;

export type PullLog = Pick<Logger, "info" | "warn">;

export interface EnsureImageOptions {
  /** The pull's progress (a line per layer done and the final status) and the warning when it failed. */
  log: PullLog;
  /** Aborting it stops the pull (the tool was stopped). */
  signal?: AbortSignal | undefined;
  timeoutMs?: number;
}

/**
 * Makes sure `image` is on the machine and returns the reference to create the container from (`~` trimmed). Throws
 * JobError when it is not there and cannot be pulled, or when `signal` stops the pull.
 */
export async function ensureImage(docker: DockerSocket, image: string, options: EnsureImageOptions): Promise<string> {
  const { log } = options;
  if (image.startsWith("~")) {
    const local = image.slice(1);
    log.info(`${local} is a local image (~ in the panel): it is not pulled`);
    return local;
  }
  log.info(`pulling ${image}`);
  const failure = await pull(docker, image, options);
  if (failure === undefined) return image;
  if (await onMachine(docker, image)) {
    log.warn(`could not pull ${image} (${failure.reason}): the image on this machine is used, as Wings does`);
    return image;
  }
  throw new JobError(`the image ${image} is not on this machine and could not be pulled: ${failure.reason}`, {
    where: docker.socket,
    hint: pullHint(image, failure),
  });
}

interface PullFailure {
  reason: string;
  /** The answer's status when the daemon refused before streaming. */
  status?: number;
}

/** One pull, its progress logged; undefined when it ended well, else why not. */
async function pull(
  docker: DockerSocket,
  image: string,
  options: EnsureImageOptions,
): Promise<PullFailure | undefined> {
  const { repository, tag, digest } = imageParts(image);
  const query = new URLSearchParams({ fromImage: repository, tag: digest ?? tag ?? "latest" });
  const timeoutMs = options.timeoutMs ?? PULL_TIMEOUT_MS;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  const onAbort = () => stop.abort();
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const progress = new PullProgress(options.log);
  try {
    const answer = await docker.stream(
      "POST",
      `/images/create?${query}`,
      { stop: stop.signal, answerMs: timeoutMs },
      (chunk) => progress.push(chunk),
    );
    progress.end();
    if (options.signal?.aborted) throw stopped(image);
    if (stop.signal.aborted) return { reason: `it did not finish within ${formatDuration(timeoutMs)}` };
    if (answer.status !== 200) return { reason: `${answer.status} ${answer.message}`.trim(), status: answer.status };
    if (progress.error !== undefined) return { reason: progress.error };
    if (answer.complete === false) return { reason: "Docker ended the pull's answer before its end" };
    return undefined;
  } catch (error) {
    if (options.signal?.aborted) throw stopped(image);
    if (stop.signal.aborted) return { reason: `it did not finish within ${formatDuration(timeoutMs)}` };
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function stopped(image: string): JobError {
  return new JobError("stopped while the installer's image was pulled", { where: image });
}

/** Whether the machine has the image (image inspect: 200, else 404 "No such image"). */
async function onMachine(docker: DockerSocket, image: string): Promise<boolean> {
  const path = image.split("/").map(encodeURIComponent).join("/");
  return (await docker.call("GET", `/images/${path}/json`)).status === 200;
}

/**
 * What to do about a pull that failed, by what the daemon said: a refusal a login would get past (401, 403, or the
 * registry's words for it, which Docker answers as 404 or 500; see the top of this file), or anything else.
 */
function pullHint(image: string, failure: PullFailure): string {
  const first = image.split("/")[0] ?? "";
  const registry = image.includes("/") && /[.:]|^localhost$/.test(first) ? first : "docker.io";
  const login =
    failure.status === 401 ||
    failure.status === 403 ||
    /unauthorized|denied|docker login|authentication required/i.test(failure.reason);
  if (login) {
    return `${registry} gave it only with a login, or has no such image: check the image in the egg; mcops does not log in to registries (Wings' docker.registries are not read), so pull a private image on the node yourself (docker login ${registry}, docker pull ${image}), then run again`;
  }
  return `check that this node reaches ${registry} and that the egg's image exists, or pull it yourself (docker pull ${image}), then run again`;
}

/**
 * A pull's JSON messages read as they come (a message may be split across chunks): a line per layer done
 * (`Pull complete`, `Already exists`) and the final `Digest:` and `Status:`, at most MAX_PULL_LINES; the progress
 * bars are not passed on. The first error in the stream is kept.
 */
class PullProgress {
  readonly #log: PullLog;
  #pending = "";
  #lines = 0;
  error: string | undefined;

  constructor(log: PullLog) {
    this.#log = log;
  }

  push(chunk: Buffer): void {
    this.#pending += chunk.toString("utf8");
    for (let nl = this.#pending.indexOf("\n"); nl !== -1; nl = this.#pending.indexOf("\n")) {
      this.#message(this.#pending.slice(0, nl));
      this.#pending = this.#pending.slice(nl + 1);
    }
    if (this.#pending.length > MAX_MESSAGE_BYTES) this.#pending = "";
  }

  end(): void {
    if (this.#pending.trim() !== "") this.#message(this.#pending);
    this.#pending = "";
  }

  #message(line: string): void {
    const message = parseJsonOrUndefined(line.trim()) as
      | { status?: unknown; id?: unknown; error?: unknown; errorDetail?: { message?: unknown } | null }
      | undefined;
    if (typeof message !== "object" || message === null) return;
    const error = message.errorDetail?.message ?? message.error;
    if (typeof error === "string" && error !== "") {
      this.error ??= printable(error.replace(/\s*\n\s*/g, " ")).slice(0, 500);
      return;
    }
    const { status, id } = message;
    if (typeof status !== "string") return;
    const layerDone = typeof id === "string" && (status === "Pull complete" || status === "Already exists");
    const final = id === undefined && (status.startsWith("Digest: ") || status.startsWith("Status: "));
    if (layerDone) this.#emit(`pull: ${printable(id)}: ${status}`);
    else if (final) this.#emit(`pull: ${printable(status)}`);
  }

  #emit(line: string): void {
    this.#lines += 1;
    if (this.#lines < MAX_PULL_LINES) this.#log.info(line.slice(0, 500));
    else if (this.#lines === MAX_PULL_LINES) this.#log.info("pull: (it goes on; the rest is not logged)");
  }
}
