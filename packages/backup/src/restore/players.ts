import { join } from "node:path";
import { BusyError, UsageError } from "@mcops/core/errors";
import type { VolumeDir } from "@mcops/core/volume";
import { distance } from "fastest-levenshtein";
import type { Restic, Snapshot } from "../restic.ts";

/**
 * Who `--player` names: a UUID as it is, or a name looked up in the server's usercache.json (the game's own record of
 * the names and UUIDs it has seen), first the volume's, then the snapshot's. Names are matched as the game matches
 * them, ignoring case. usercache.json is the game's file: read without following a link, at most 4 MiB, and anything in
 * it that is not a name and a UUID is skipped.
 */
export interface Player {
  /** With dashes, lower case: the name of its files. */
  uuid: string;
  /** As usercache.json spells it; undefined when only the UUID is known. */
  name: string | undefined;
  /**
   * The names the server knows now for the UUID (its own usercache.json): what the game log shows when the player is
   * online, also when `name` is an older one found in the snapshot's cache.
   */
  current: string[];
}

const USERCACHE = "usercache.json";
const USERCACHE_MAX_BYTES = 4 * 1024 * 1024;
const UUID = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;
/** A Java Edition name: 3 to 16 letters, digits and underscores (older accounts: a few more, still no spaces). */
const NAME = /^[A-Za-z0-9_]{1,16}$/;

interface CacheEntry {
  name: string;
  uuid: string;
}

/** The entries of a usercache.json text that are a name and a UUID. */
export function parseUsercache(text: string): CacheEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(data)) return [];
  const entries: CacheEntry[] = [];
  for (const item of data as unknown[]) {
    const { name, uuid } = (item ?? {}) as { name?: unknown; uuid?: unknown };
    if (typeof name !== "string" || !NAME.test(name) || typeof uuid !== "string") continue;
    const canonical = canonicalUuid(uuid);
    if (canonical) entries.push({ name, uuid: canonical });
  }
  return entries;
}

function canonicalUuid(text: string): string | undefined {
  const parts = UUID.exec(text.trim());
  return parts ? parts.slice(1).join("-").toLowerCase() : undefined;
}

/** The names closest to `wanted` (ignoring case): a prefix, or at most two letters off; the closest first. */
export function closeMatches(wanted: string, names: readonly string[], most = 5): string[] {
  const lower = wanted.toLowerCase();
  return [...new Set(names)]
    .map((name) => ({ name, d: name.toLowerCase().startsWith(lower) ? 0.5 : distance(lower, name.toLowerCase()) }))
    .filter(({ d }) => d <= 2)
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, most)
    .map(({ name }) => name);
}

/** The player `who` names, from the volume's usercache.json, then the snapshot's; exit 2 with close matches if unknown. */
export async function resolvePlayer(
  who: string,
  from: { volume: VolumeDir; restic: Restic; snapshot: Snapshot; worldDir: string },
): Promise<Player> {
  const uuid = canonicalUuid(who);
  const volumeCache = readVolumeCache(from.volume);
  const current = (id: string) => [...new Set(volumeCache.filter((e) => e.uuid === id).map((e) => e.name))];
  if (uuid) return { uuid, name: current(uuid)[0], current: current(uuid) };
  if (!NAME.test(who)) {
    throw new UsageError(`"${who}" is neither a player name nor a UUID`, {
      hint: "give the name as the game shows it, e.g. Steve, or the UUID",
    });
  }
  const found = (entries: CacheEntry[]) => entries.find((e) => e.name.toLowerCase() === who.toLowerCase());
  const snapshotCache = found(volumeCache) ? [] : await readSnapshotCache(from);
  const entry = found(volumeCache) ?? found(snapshotCache);
  if (entry) return { ...entry, current: current(entry.uuid) };
  const close = closeMatches(
    who,
    [...volumeCache, ...snapshotCache].map((e) => e.name),
  );
  throw new UsageError(`no player "${who}" in the server's usercache.json`, {
    hint: close.length ? `did you mean ${close.join(", ")}?` : "give the player's UUID instead",
  });
}

function readVolumeCache(volume: VolumeDir): CacheEntry[] {
  const bytes = volume.readFile(USERCACHE, USERCACHE_MAX_BYTES);
  return bytes ? parseUsercache(bytes.toString("utf8")) : [];
}

/** The snapshot's usercache.json, when it holds one (BACKUP_EXTRA_PATHS with it): at most 4 MiB. */
async function readSnapshotCache(from: {
  restic: Restic;
  snapshot: Snapshot;
  worldDir: string;
}): Promise<CacheEntry[]> {
  const path = join(from.worldDir, USERCACHE);
  if (!from.snapshot.paths.includes(path)) return [];
  const [node] = (await from.restic.ls(from.snapshot.id, [path])).filter((n) => n.path === path && n.type === "file");
  if (!node || (node.size ?? 0) > USERCACHE_MAX_BYTES) return [];
  return parseUsercache(await from.restic.dump(from.snapshot.id, path));
}

/** "Steve (6f4b2c1e-…)" or the UUID alone. */
export function describePlayer(player: Player): string {
  return player.name ? `${player.name} (${player.uuid})` : player.uuid;
}

/**
 * Refuses (exit 75) while the player is online: the server writes their file when they leave, over the restored one.
 * Who is online comes from the game log; when the log cannot tell, a running server is not trusted.
 */
export function refuseIfOnline(player: Player, online: string[] | undefined): void {
  if (online === undefined) {
    throw new BusyError(
      `cannot tell whether ${describePlayer(player)} is online: the server runs and has no game log`,
      {
        hint: "stop the server first, or try again once logs/latest.log is there",
      },
    );
  }
  // The log names players as they are called now: every name the server's own cache has for the UUID.
  const names = new Set(player.current.map((n) => n.toLowerCase()));
  if (names.size === 0 && online.length > 0) {
    throw new BusyError(
      `cannot tell whether ${describePlayer(player)} is online: the server's usercache.json has no name for ${player.uuid}`,
      { hint: `${online.length} player(s) online; try again when nobody plays` },
    );
  }
  if (online.some((n) => names.has(n.toLowerCase()))) throw new PlayerOnlineError(player);
}

/** Exit 75: the player is online; the server would write their file over the restored one when they leave. */
export class PlayerOnlineError extends BusyError {
  constructor(player: Player) {
    super(`${describePlayer(player)} is online: the server would overwrite the restored file when they leave`, {
      hint: "try again once they have left the game (other players can keep playing)",
    });
  }
}
