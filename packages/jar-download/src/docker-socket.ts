import { type IncomingMessage, request } from "node:http";
import { ConfigError, JobError } from "@mcops/core/errors";
import { formatDuration, parseJsonOrUndefined } from "@mcops/core/format";

/**
 * Requests to the Docker Engine API on its Unix socket, at an API version negotiated as Docker's own client does
 * (moby/moby client/client.go NegotiateAPIVersion, client/ping.go; the same in v20.10.24, v26.1.5 and v28.5.2): the
 * first request is a `GET /_ping` (unversioned, so every engine answers it), whose `Api-Version` header says the
 * engine's highest version; every later request uses the lower of that and MAX_API, `/v1.NN/...`. No header (an
 * engine older than API 1.25, Docker 1.13): 1.24, the client's `fallbackAPIVersion`. Once per DockerSocket, which
 * lives for one installer run.
 *
 * Why not a fixed version: an engine refuses every version outside its own range with 400 "client version 1.N is too
 * old/new" (api/server/middleware/version.go). Debian 11 and 12 ship docker.io 20.10 (API 1.41 at most), Debian 13
 * ships 26.1 (1.45), and Docker 29.0 to 29.2 refuse anything below 1.44 by default (docker-v29.0.0
 * daemon/config/config.go defaultMinAPIVersion "1.44"; 29.3 lowered it to 1.40) while answering 1.52: no one version
 * is served by all of them.
 */

/**
 * The highest API version this code was written against: 1.52, Docker 29.0's. The changes of every version from 1.24
 * up to it (moby/moby api/docs/CHANGELOG.md) were read for the calls made here, and none changes what they send or
 * read, but for these, which they allow for:
 * - 1.30: a wait's headers come at once, the body when the container stops (before, only then: MIN_API);
 * - 1.42: a non-TTY container's logs are labelled `application/vnd.docker.multiplexed-stream` (before,
 *   `application/vnd.docker.raw-stream`); the stdcopy frames are the same, so LogFrames reads both;
 * - 1.48: a pull's `error` and `progress` fields are deprecated: its errors are read from `errorDetail`;
 * - 1.52: image inspect leaves the Config fields that are not set out (only its status is read here).
 * A newer engine is asked for 1.52, which it still serves, so a change it makes after 1.52 cannot reach this code
 * unread.
 */
export const MAX_API = "1.52";
/** The lowest this code works with: from API 1.30 (Docker 17.06) a wait's headers come at once (MAX_API). */
export const MIN_API = "1.30";
/** What Docker's client assumes when the ping has no `Api-Version` (its fallbackAPIVersion). */
const FALLBACK_API = "1.24";

/** How long Docker may take to answer a request's headers (a create on a busy node can take seconds). */
const ANSWER_MS = 30_000;
/**
 * How long a container's create, start and removal may take to answer: the engine prepares (or removes) the
 * container's copy of the image's file system first, which a storage driver that copies (vfs, devicemapper) or a slow
 * disk makes take tens of seconds for an image of a few hundred MiB (seen: over 30 s for a create on a busy 2-core
 * machine with vfs).
 */
export const CONTAINER_ANSWER_MS = 120_000;
/** An error body read for its message. */
const MAX_ERROR_BYTES = 64 * 1024;

/** An answer read whole (bounded). */
export interface Answer {
  status: number;
  body: string;
  /** Docker's `message`, one line, bounded. */
  message: string;
  /** A streamed 200: whether the answer came to its end (false: the connection closed before it). */
  complete?: boolean;
}

/** `1.41` → [1, 41]; undefined when it is no version. */
function versionParts(text: string): [number, number] | undefined {
  const match = /^(\d+)\.(\d+)$/.exec(text);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** Whether API version `a` is below `b` (moby api/types/versions LessThan: numbers compared part by part). */
function lessThan(a: string, b: string): boolean {
  const [aMajor = 0, aMinor = 0] = versionParts(a) ?? [];
  const [bMajor = 0, bMinor = 0] = versionParts(b) ?? [];
  return aMajor < bMajor || (aMajor === bMajor && aMinor < bMinor);
}

/**
 * The version a client that can speak up to MAX_API uses with an engine whose ping said `engine` (its `Api-Version`,
 * or undefined when there was none): the lower of the two.
 */
export function negotiatedVersion(engine: string | undefined): string {
  const said = engine !== undefined && versionParts(engine) ? engine : FALLBACK_API;
  return lessThan(said, MAX_API) ? said : MAX_API;
}

/** Requests to Docker's API on its Unix socket, each bounded: the headers within a time, an error body in size. */
export class DockerSocket {
  readonly socket: string;
  #version: Promise<string> | undefined;

  constructor(socket: string) {
    this.socket = socket;
  }

  /** The negotiated API version (the ping, on the first call). */
  version(): Promise<string> {
    this.#version ??= this.#negotiate();
    return this.#version;
  }

  /**
   * A request whose whole (bounded) answer is read; its headers within `answerMs` (default ANSWER_MS: a container's
   * create and start take CONTAINER_ANSWER_MS).
   */
  async call(
    method: string,
    path: string,
    body?: unknown,
    options: { signal?: AbortSignal | undefined; answerMs?: number } = {},
  ): Promise<Answer> {
    const versioned = await this.#path(path);
    const answerMs = options.answerMs ?? ANSWER_MS;
    return new Promise((resolve, reject) => {
      const req = this.#request(method, versioned, { signal: options.signal, answerMs }, reject, (res) =>
        readWhole(res).then(resolve, reject),
      );
      if (body !== undefined) req.setHeader("Content-Type", "application/json");
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /**
   * A request whose 200 answer is read as it comes (a log stream, a pull's progress) until it ends or `stop`; its
   * headers within `answerMs`. Any other status is read whole and returned.
   */
  async stream(
    method: string,
    path: string,
    options: { stop: AbortSignal; answerMs?: number },
    onChunk: (chunk: Buffer) => void,
  ): Promise<Answer> {
    const versioned = await this.#path(path);
    return new Promise((resolve, reject) => {
      const answerMs = options.answerMs ?? ANSWER_MS;
      const req = this.#request(method, versioned, { signal: options.stop, answerMs }, reject, (res) => {
        if (res.statusCode !== 200) {
          readWhole(res).then(resolve, reject);
          return;
        }
        // The answer's end, or the connection's (`stop`, the daemon gone): `complete` tells them apart.
        const ended = () => resolve({ status: 200, body: "", message: "", complete: res.complete });
        res.on("data", onChunk);
        res.on("end", ended);
        res.on("error", () => ended());
        res.on("close", ended);
      });
      req.end();
    });
  }

  /** POST /wait: the container's exit code once it is not running. */
  async wait(id: string, stop: AbortSignal): Promise<number> {
    const answer = await this.call("POST", `/containers/${id}/wait`, undefined, { signal: stop });
    const result = parseJsonOrUndefined(answer.body) as
      | { StatusCode?: unknown; Error?: { Message?: unknown } | null }
      | undefined;
    if (answer.status !== 200 || typeof result?.StatusCode !== "number") {
      throw this.refused("wait for the installer's container", answer);
    }
    const error = result.Error?.Message;
    if (typeof error === "string" && error !== "") {
      throw new JobError(`Docker could not follow the installer's container: ${error}`, { where: this.socket });
    }
    return result.StatusCode;
  }

  /** DELETE ?force=1: on every path out; a container already gone (404) is fine, any failure only costs a leftover. */
  async remove(id: string): Promise<void> {
    await this.call("DELETE", `/containers/${id}?force=1`, undefined, { answerMs: CONTAINER_ANSWER_MS }).catch(
      () => undefined,
    );
  }

  refused(what: string, answer: Answer): JobError {
    return new JobError(`Docker refused to ${what}: ${answer.status} ${answer.message}`.trim(), {
      where: this.socket,
    });
  }

  /** `path` under the negotiated version's prefix. */
  async #path(path: string): Promise<string> {
    return `/v${await this.version()}${path}`;
  }

  /** GET /_ping, then the version (see the top of this file); an engine below MIN_API is refused. */
  async #negotiate(): Promise<string> {
    const header = await new Promise<string | undefined>((resolve, reject) => {
      const req = this.#request("GET", "/_ping", { answerMs: ANSWER_MS }, reject, (res) => {
        // Whatever the status: the version middleware sets the header on errors too, and Docker's client reads it.
        res.resume();
        const version = res.headers["api-version"];
        resolve(typeof version === "string" ? version : undefined);
      });
      req.end();
    });
    const version = negotiatedVersion(header);
    if (lessThan(version, MIN_API)) {
      throw new JobError(`Docker's Engine API is ${version}, older than the ${MIN_API} loader installs need`, {
        where: this.socket,
        hint: "Docker 17.06 or newer is needed; Wings itself needs a newer one: upgrade Docker on the node",
      });
    }
    return version;
  }

  #request(
    method: string,
    path: string,
    options: { signal?: AbortSignal | undefined; answerMs: number },
    reject: (error: Error) => void,
    onAnswer: (res: IncomingMessage) => void,
  ) {
    const req = request({ socketPath: this.socket, path, method, signal: options.signal }, (res) => {
      clearTimeout(unanswered);
      onAnswer(res);
    });
    const unanswered = setTimeout(
      () => req.destroy(new Error(`it did not answer within ${formatDuration(options.answerMs)}`)),
      options.answerMs,
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(unanswered);
      reject(this.#unreachable(error));
    });
    return req;
  }

  /** No socket, no right to it, nothing listening: the machine's set-up, not this install. */
  #unreachable(error: NodeJS.ErrnoException): Error {
    if (error.name === "AbortError") return error;
    if (!["ENOENT", "EACCES", "ECONNREFUSED", "ENOTSOCK", "EPERM"].includes(error.code ?? "")) {
      return new JobError(`Docker did not answer: ${error.message}`, { where: this.socket });
    }
    return new ConfigError(`Docker's socket cannot be reached (${error.code})`, {
      where: this.socket,
      hint: "loader installs run in a container through Docker, whose socket beside Wings is /var/run/docker.sock: run as root on the node",
    });
  }
}

/** The answer's body, bounded, and Docker's message in it. */
function readWhole(res: IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let text = "";
    res.on("data", (chunk: Buffer) => {
      if (text.length < MAX_ERROR_BYTES) text += chunk.toString("utf8").slice(0, MAX_ERROR_BYTES);
    });
    res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, message: messageOf(text) }));
    res.on("error", reject);
  });
}

/** Docker's error body `{"message": "..."}`, one line, bounded; else the text. */
function messageOf(text: string): string {
  const message = (parseJsonOrUndefined(text) as { message?: unknown } | undefined)?.message;
  return printable((typeof message === "string" ? message : text).replace(/\s*\n\s*/g, " ")).slice(0, 500);
}

/** Without terminal escape sequences and control characters (a tab stays), trailing white space trimmed. */
export function printable(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is removed
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
      .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, "")
      .trimEnd()
  );
}
