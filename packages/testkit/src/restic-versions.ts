/**
 * The restic and rclone pairs of Debian's releases that set-up (scripts/restic-versions.sh) fetched with apt and
 * unpacked into a cache, for tests that run against each: put a pair's `dir` first in PATH and both `restic` and the
 * `rclone` restic starts are that release's.
 */
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface ResticPair {
  /** Debian's name of the release: "bullseye". */
  release: string;
  /** Its number: 11. */
  debian: number;
  /** As `restic version` says it: "0.11.0". */
  restic: string;
  /** As `rclone version` says it, without the v and the build suffix: "1.53.3". */
  rclone: string;
  /** The folder holding the two binaries `restic` and `rclone`, and nothing else that runs. */
  dir: string;
}

/**
 * Where set-up keeps the cache, in the order it looks: MCOPS_RESTIC_VERSIONS when set; else
 * /var/cache/mcops-test/restic-versions, then the user's own cache (when the first could not be written).
 */
export function resticVersionsPlaces(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.MCOPS_RESTIC_VERSIONS) return [env.MCOPS_RESTIC_VERSIONS];
  const userCache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return ["/var/cache/mcops-test/restic-versions", join(userCache, "mcops-test", "restic-versions")];
}

/** The cached pairs, oldest release first, from the cache's versions.json; a missing or broken cache is an error. */
export function resticVersions(env: NodeJS.ProcessEnv = process.env): ResticPair[] {
  const places = resticVersionsPlaces(env);
  const place = places.find((dir) => existsSync(join(dir, "versions.json")));
  if (!place) {
    throw new Error(
      `the restic versions are not fetched (no versions.json in ${places.join(" or ")}): run npm run setup`,
    );
  }
  const file = join(place, "versions.json");
  let listed: { pairs?: unknown };
  try {
    listed = JSON.parse(readFileSync(file, "utf8")) as { pairs?: unknown };
  } catch (error) {
    throw new Error(`${file} cannot be read (${(error as Error).message}): run npm run setup`);
  }
  if (!Array.isArray(listed.pairs) || listed.pairs.length === 0) {
    throw new Error(`${file} lists no restic versions: run npm run setup`);
  }
  return listed.pairs.map((entry: Record<string, unknown>) => {
    const { release, debian, restic, rclone, dir } = entry;
    if (
      typeof release !== "string" ||
      typeof debian !== "number" ||
      typeof restic !== "string" ||
      typeof rclone !== "string" ||
      typeof dir !== "string"
    ) {
      throw new Error(
        `${file} has an entry that is not a release's pair (${JSON.stringify(entry)}): run npm run setup`,
      );
    }
    const pair = { release, debian, restic, rclone, dir: join(place, dir) };
    for (const tool of ["restic", "rclone"]) {
      try {
        accessSync(join(pair.dir, tool), constants.X_OK);
      } catch {
        throw new Error(`${join(pair.dir, tool)} is missing or cannot run: run npm run setup`);
      }
    }
    return pair;
  });
}
