import { JobError } from "@mcops/core/errors";
import { formatSpan } from "@mcops/core/format";
import { checkShape, type HttpClient, HttpFailure } from "@mcops/core/http";
import type * as z from "zod/mini";

/**
 * What the jar sources (sources.ts) and the loaders' installers (loaders.ts) share: the hosts they ask, the kinds of
 * answers, and the way a service's JSON is read and its failure told. Its own module, so that neither imports the
 * other for it.
 */

/**
 * docs/system.md 1's heavy modpack loaders (Forge, NeoForge) and Quilt ship an installer that builds the server, not a
 * server jar: loaders.ts says where each installer comes from.
 */
export const INSTALLER_TYPES = ["neoforge", "forge", "quilt"] as const;
export type InstallerType = (typeof INSTALLER_TYPES)[number];

export type Channel = "STABLE" | "BETA" | "ALPHA";

/** Each host's base address (settings.ts has the real ones as the defaults of DOWNLOAD_BASE and the rest). */
export interface Bases {
  paper: string;
  purpur: string;
  mojang: string;
  fabric: string;
  /** maven.neoforged.net (its /releases repository and Reposilite's API). */
  neoforge: string;
  /** maven.minecraftforge.net. */
  forge: string;
  /** files.minecraftforge.net (promotions_slim.json). */
  forgeFiles: string;
  /** meta.quiltmc.org (v3). */
  quilt: string;
  /** Quilt's release repository (maven.quiltmc.org/repository/release). */
  quiltMaven: string;
}

/** sha512: a Modrinth modpack's files (with their sha1, checked too: see DownloadOptions.alsoVerify). */
export type ChecksumAlgorithm = "sha256" | "sha1" | "md5" | "sha512";

/** What every host's functions work with: the client (its User-Agent, retries and signal) and the base addresses. */
export interface Hosts {
  http: HttpClient;
  bases: Bases;
}

/** The parsed body, or one line naming the host, the route and the field that is not as the tool reads it. */
export function shape<S extends z.ZodMiniType>(schema: S, value: unknown, url: string): z.infer<S> {
  const { host, pathname } = new URL(url);
  return checkShape(schema, value, { service: host, route: `GET ${pathname}` });
}

/** A failed request as one line: what the service said, where, what to do. */
export function failed(error: unknown, what: string): never {
  if (!(error instanceof HttpFailure)) throw error;
  if (error.waitMs !== undefined) {
    // The message names the wait; the body (Modrinth's ratelimit_error) says it again in other words.
    throw new JobError(`${what} failed: ${error.message}`, {
      where: error.url,
      hint: `run it again in ${formatSpan(error.waitMs)} (the service limits requests from this machine's address, whoever sends them)`,
    });
  }
  const said = error.body ? `: ${error.body.replace(/\s+/g, " ").slice(0, 200)}` : "";
  throw new JobError(`${what} failed: ${error.message}${said}`, {
    where: error.url,
    hint:
      error.status === 403
        ? "the service refused the request; set DOWNLOAD_CONTACT (an e-mail or address) so the User-Agent names you"
        : "try again later; a mirror can be set with DOWNLOAD_BASE, PURPUR_BASE, MOJANG_BASE, FABRIC_BASE or the loaders' *_BASE",
  });
}

export async function getJson<S extends z.ZodMiniType>(
  http: HttpClient,
  url: string,
  schema: S,
  what: string,
  notFound?: (failure: HttpFailure) => Error,
  /** The statuses that mean "no such thing" for this service (default 404). */
  notFoundStatuses: readonly number[] = [404],
): Promise<z.infer<S>> {
  let body: unknown;
  try {
    body = await http.json(url);
  } catch (error) {
    if (notFound && error instanceof HttpFailure && notFoundStatuses.includes(error.status ?? 0)) {
      throw notFound(error);
    }
    failed(error, what);
  }
  return shape(schema, body, url);
}
