import { createHash } from "node:crypto";
import { closeSync, createReadStream, fsyncSync, openSync, readSync, rmSync, type Stats, writeSync } from "node:fs";
import type { Clock } from "@mcops/core/clock";
import { JobError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { type HttpClient, HttpFailure } from "@mcops/core/http";
import type { VolumeDir } from "@mcops/core/volume";
import type { ChecksumAlgorithm } from "./service.ts";
import type { Artifact } from "./sources.ts";

interface DownloadOptions {
  http: HttpClient;
  clock: Clock;
  /** Attempts at the whole body (a cut connection, a short body); default 4. */
  attempts?: number;
  /** A body that sends nothing for this long is given up and fetched again (default 60 s). */
  stallMs?: number;
  retryDelayMs?: number;
  /** Called as bytes arrive (for a progress line). */
  onProgress?: (done: number, total: number | undefined) => void;
  onRetry?: (reason: string, attempt: number) => void;
  /** Further checksums the file must match besides the artifact's own (a modpack gives both sha512 and sha1). */
  alsoVerify?: readonly { algorithm: ChecksumAlgorithm; hex: string }[];
  /** Default true: the file must start with a zip header (a jar). A modpack's config file need not. */
  zipHeader?: boolean;
  /** What a failure left untouched, for its hint (default "nothing in the volume was changed"). */
  untouched?: string;
  /** The most bytes taken when neither the artifact nor the answer says how many (an address given by hand). */
  maxBytes?: number;
}

/** What a download needs: a server jar (Artifact) or a loader's installer (InstallerArtifact's installer). */
export type Downloadable = Pick<Artifact, "fileName" | "url" | "size" | "checksum">;

export interface Downloaded {
  path: string;
  size: number;
  /** Hex digest in the artifact's algorithm (sha256 when the service gives none). */
  digest: string;
  algorithm: ChecksumAlgorithm;
}

const UNTOUCHED = "nothing in the volume was changed";

/** A failure worth another try: the body was cut or came short. */
class Incomplete extends Error {}

/**
 * Downloads the artifact into `path` (a temporary file next to server.jar) and proves it is the right file: as many
 * bytes as the service said (its size, else Content-Length), the checksum the service gave, and a jar (zip) header.
 * A cut or short body is fetched again; a wrong checksum is not (the same mirror would send the same file). The file
 * is fsynced before this returns; on any failure it is removed.
 */
export async function downloadVerified(
  artifact: Downloadable,
  path: string,
  options: DownloadOptions,
): Promise<Downloaded> {
  const attempts = options.attempts ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await downloadOnce(artifact, path, options);
    } catch (error) {
      rmSync(path, { force: true });
      if (!(error instanceof Incomplete) || attempt >= attempts) {
        if (error instanceof Incomplete) {
          throw new JobError(`the download of ${artifact.fileName} failed ${attempts} times: ${error.message}`, {
            where: artifact.url,
            hint: `${options.untouched ?? UNTOUCHED}; try again later`,
          });
        }
        throw error;
      }
      options.onRetry?.(error.message, attempt);
      await options.clock.sleep(retryDelayMs * 2 ** (attempt - 1));
    }
  }
}

/** Aborts when no data arrived for `ms`: ky's timeout ends with the headers, a stalled body is cut here. */
function stallWatch(ms: number) {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  return {
    signal: controller.signal,
    stalled: () => controller.signal.aborted,
    feed(): void {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), ms);
    },
    stop: () => clearTimeout(timer),
  };
}

async function downloadOnce(artifact: Downloadable, path: string, options: DownloadOptions): Promise<Downloaded> {
  const stallMs = options.stallMs ?? 60_000;
  const watch = stallWatch(stallMs);
  try {
    return await fetchInto(artifact, path, options, watch, stallMs);
  } finally {
    watch.stop();
  }
}

async function fetchInto(
  artifact: Downloadable,
  path: string,
  options: DownloadOptions,
  watch: ReturnType<typeof stallWatch>,
  stallMs: number,
): Promise<Downloaded> {
  let response: Response;
  try {
    response = await options.http.get(artifact.url, { signal: watch.signal });
  } catch (error) {
    if (error instanceof HttpFailure && error.status === undefined && error.message !== "interrupted") {
      throw new Incomplete(error.message);
    }
    if (error instanceof HttpFailure) {
      throw new JobError(`downloading ${artifact.fileName} failed: ${error.message}`, {
        where: error.url,
        hint: `${options.untouched ?? UNTOUCHED}; try again later`,
      });
    }
    throw error;
  }
  const header = response.headers.get("content-length");
  const expected = artifact.size ?? (header && /^\d+$/.test(header) ? Number(header) : undefined);
  const algorithm = artifact.checksum?.algorithm ?? "sha256";
  const hash = createHash(algorithm);
  const more = (options.alsoVerify ?? []).map((sum) => ({ ...sum, hash: createHash(sum.algorithm) }));
  if (options.maxBytes !== undefined && expected !== undefined && expected > options.maxBytes) {
    await response.body?.cancel();
    throw tooLarge(artifact, options);
  }
  // A new file in a directory only root can enter (the caller's private directory): created, never opened through.
  const fd = openSync(path, "wx", 0o600);
  let size = 0;
  try {
    if (!response.body) throw new Incomplete("the answer had no body");
    try {
      watch.feed();
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        watch.feed();
        // A body longer than the file can be is cut here, not written to the end first.
        if (expected !== undefined && size + chunk.length > expected)
          throw new Incomplete(`more than ${expected} bytes`);
        if (options.maxBytes !== undefined && size + chunk.length > options.maxBytes) throw tooLarge(artifact, options);
        hash.update(chunk);
        for (const sum of more) sum.hash.update(chunk);
        let offset = 0;
        while (offset < chunk.length) offset += writeSync(fd, chunk, offset);
        size += chunk.length;
        options.onProgress?.(size, expected);
      }
    } catch (error) {
      if (error instanceof Incomplete || error instanceof JobError) throw error;
      if (watch.stalled()) throw new Incomplete(`no data for ${formatDuration(stallMs)} after ${formatBytes(size)}`);
      if ((error as Error).name === "AbortError")
        throw new JobError("interrupted", { hint: options.untouched ?? UNTOUCHED });
      throw new Incomplete(`the connection broke after ${formatBytes(size)} (${(error as Error).message})`);
    }
    if (expected !== undefined && size !== expected) {
      throw new Incomplete(`got ${size} bytes of ${expected}`);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const digest = hash.digest("hex");
  if (artifact.checksum && digest !== artifact.checksum.hex) {
    throw new JobError(
      `${artifact.fileName} does not match its ${algorithm} (expected ${artifact.checksum.hex}, got ${digest})`,
      { where: artifact.url, hint: `${options.untouched ?? UNTOUCHED}; try again later, or use another mirror` },
    );
  }
  for (const sum of more) {
    const got = sum.hash.digest("hex");
    if (got !== sum.hex.toLowerCase()) {
      throw new JobError(
        `${artifact.fileName} does not match its ${sum.algorithm} (expected ${sum.hex.toLowerCase()}, got ${got})`,
        { where: artifact.url, hint: `${options.untouched ?? UNTOUCHED}; try again later, or use another mirror` },
      );
    }
  }
  if ((options.zipHeader ?? true) && !isZip(path)) {
    throw new JobError(`${artifact.fileName} is not a jar (no zip header)`, {
      where: artifact.url,
      hint: `${options.untouched ?? UNTOUCHED}; the address may serve an error page`,
    });
  }
  return { path, size, digest, algorithm };
}

function tooLarge(artifact: Downloadable, options: DownloadOptions): JobError {
  return new JobError(`${artifact.fileName} is larger than ${formatBytes(options.maxBytes ?? 0)}: not taken`, {
    where: artifact.url,
    hint: options.untouched ?? UNTOUCHED,
  });
}

function isZip(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
  } finally {
    closeSync(fd);
  }
}

/** No server jar comes near this; a larger server.jar (a sparse file of terabytes) is not read to hash it. */
export const INSTALLED_JAR_MAX_BYTES = 512 * 1024 * 1024;

/**
 * A jar in the volume opened for reading (the caller closes `fd`): a regular file of at most INSTALLED_JAR_MAX_BYTES,
 * opened without following a link or blocking on a FIFO; undefined for anything else, or nothing.
 */
export function openJar(volume: VolumeDir, name: string): { fd: number; stat: Stats } | undefined {
  let file: ReturnType<VolumeDir["tryOpenFile"]>;
  try {
    file = volume.tryOpenFile(name);
  } catch {
    return undefined;
  }
  if (file && file.stat.size > INSTALLED_JAR_MAX_BYTES) {
    closeSync(file.fd);
    return undefined;
  }
  return file;
}

/**
 * The digest of server.jar already in the volume, to see whether it is this build already: a regular file only (a
 * link, a FIFO or a device is never read: it is simply not this build), and only when its size is the expected one.
 */
export async function installedDigest(
  volume: VolumeDir,
  name: string,
  algorithm: ChecksumAlgorithm,
  expectedSize: number | undefined,
): Promise<string | undefined> {
  const file = openJar(volume, name);
  if (!file) return undefined;
  if (expectedSize !== undefined && file.stat.size !== expectedSize) {
    closeSync(file.fd);
    return undefined;
  }
  const hash = createHash(algorithm);
  try {
    // No further than the size just checked: a file grown meanwhile (a sparse terabyte) is not read on.
    const stream = createReadStream("", {
      fd: file.fd,
      autoClose: true,
      start: 0,
      end: Math.max(0, file.stat.size - 1),
    });
    for await (const chunk of stream) hash.update(chunk as Buffer);
  } catch {
    return undefined;
  }
  return hash.digest("hex");
}
