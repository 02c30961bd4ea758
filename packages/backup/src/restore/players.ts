import { join } from "node:path";
import { BusyError, UsageError } from "@mcops/core/errors";
import { UnsafePathError, type VolumeDir } from "@mcops/core/volume";
import type { Restic, Snapshot } from "@mcops/world/restic";
import { distance } from "fastest-levenshtein";

/**
 * Who `--player` names: a UUID as it is (usercache.json is not read for it), or a name looked up in the server's
 * usercache.json (the game's own record of the names and UUIDs it has seen), first the volume's, then the snapshot's.
 * Names are matched as the game matches them, ignoring case; a name that more than one UUID has there (a forged entry,
 * or offline mode's own second entry for "sTeVe") is refused, never settled by the order of the file. usercache.json is
 * the game's file: read without following a link and without blocking (VolumeDir.readFile), at most 4 MiB, and
 * anything in it that is not a name and a UUID is skipped.
 */
export interface Player {
  /** With dashes, lower case: the name of its files. */
  uuid: string;
  /** As usercache.json spells it; undefined when only the UUID is known. */
  name: string | undefined;
  /**
   * The names the server knows now for the UUID (its own usercache.json): what the game log shows when the player is
   * online, also when `name` is an older one found in the snapshot's cache. Undefined for a UUID given as it is: then
   * the cache is read only when somebody is online (refuseIfOnline).
   */
  current: string[] | undefined;
}

const USERCACHE = "usercache.json";
const USERCACHE_MAX_BYTES = 4 * 1024 * 1024;
const UUID = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;
/** A Java Edition name: 3 to 16 letters, digits and underscores (older accounts: a few more, still no spaces). */
const NAME = /^[A-Za-z0-9_]{1,16}$/;

interface CacheEntry {
  name: string;
  uuid: string;
  /** When the game forgets the entry, as it writes it ("2026-12-25 10:00:00 +0000"); only when it looks like that. */
  expiresOn?: string;
}

/** usercache.json's date: anything else in that field is the game's text and never shown. */
const EXPIRES_ON = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}$/;

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
    const { name, uuid, expiresOn } = (item ?? {}) as { name?: unknown; uuid?: unknown; expiresOn?: unknown };
    if (typeof name !== "string" || !NAME.test(name) || typeof uuid !== "string") continue;
    const canonical = canonicalUuid(uuid);
    if (!canonical) continue;
    const entry: CacheEntry = { name, uuid: canonical };
    if (typeof expiresOn === "string" && EXPIRES_ON.test(expiresOn)) entry.expiresOn = expiresOn;
    entries.push(entry);
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

/**
 * The player `who` names: a UUID as it is, without reading any usercache.json; a name from the volume's usercache.json,
 * then the snapshot's. Exit 2 with close matches if unknown, and exit 2 listing every UUID if more than one has it.
 */
export async function resolvePlayer(
  who: string,
  from: { volume: VolumeDir; restic: Restic; snapshot: Snapshot; worldDir: string; level: string },
): Promise<Player> {
  const uuid = canonicalUuid(who);
  // A UUID names the player's files by itself: a FIFO or an oversized usercache.json refuses nothing here.
  if (uuid) return { uuid, name: undefined, current: undefined };
  if (!NAME.test(who)) {
    throw new UsageError(`"${who}" is neither a player name nor a UUID`, {
      hint: "give the name as the game shows it, e.g. Steve, or the UUID",
    });
  }
  const volumeCache = readVolumeCache(from.volume);
  const matching = (entries: CacheEntry[]) => entries.filter((e) => e.name.toLowerCase() === who.toLowerCase());
  let matches = matching(volumeCache);
  let source = "the server's usercache.json";
  let snapshotCache: CacheEntry[] = [];
  if (matches.length === 0) {
    snapshotCache = await readSnapshotCache(from);
    matches = matching(snapshotCache);
    source = `snapshot ${from.snapshot.short_id}'s usercache.json`;
  }
  if (new Set(matches.map((e) => e.uuid)).size > 1) throw ambiguousName(who, matches, source, from);
  const entry = matches.find((e) => e.name === who) ?? matches[0];
  if (entry) return { uuid: entry.uuid, name: entry.name, current: namesOf(volumeCache, entry.uuid) };
  const close = closeMatches(
    who,
    [...volumeCache, ...snapshotCache].map((e) => e.name),
  );
  throw new UsageError(`no player "${who}" in the server's usercache.json`, {
    hint: close.length ? `did you mean ${close.join(", ")}?` : "give the player's UUID instead",
  });
}

/** The names `entries` give the UUID. */
function namesOf(entries: CacheEntry[], uuid: string): string[] {
  return [...new Set(entries.filter((e) => e.uuid === uuid).map((e) => e.name))];
}

/**
 * The most UUIDs the refusal of a shared name lists: the game's own cache gives a name two at most (offline mode's
 * second entry), a forged one can give it tens of thousands (4 MiB of usercache.json holds 60,000 entries).
 */
const MOST_LISTED = 10;

/**
 * Exit 2: `who` is the name of more than one UUID. Each is listed (the first MOST_LISTED, in the file's order, then how
 * many more) with its entry's expiry and whether the world has its playerdata, for the operator to choose one by UUID;
 * nothing is restored.
 */
function ambiguousName(
  who: string,
  matches: CacheEntry[],
  source: string,
  from: { volume: VolumeDir; level: string },
): UsageError {
  // Grouped in one pass: the entries of each UUID looked for among all of them took minutes for a forged cache.
  const byUuid = new Map<string, CacheEntry[]>();
  for (const entry of matches) {
    const entries = byUuid.get(entry.uuid);
    if (entries) entries.push(entry);
    else byUuid.set(entry.uuid, [entry]);
  }
  const described = [...byUuid].slice(0, MOST_LISTED).map(([uuid, entries]) => {
    const names = [...new Set(entries.map((e) => e.name))].join(" or ");
    const expires = entries.map((e) => e.expiresOn).find((e) => e !== undefined);
    const data = from.volume.lstat(`${from.level}/playerdata/${uuid}.dat`)?.isFile() ? "playerdata" : "no playerdata";
    return `${uuid} (${names}, ${expires ? `expires ${expires}` : "no expiry"}, ${data} in ${from.level})`;
  });
  const more = byUuid.size - described.length;
  return new UsageError(
    `"${who}" names ${byUuid.size} players in ${source}: ${described.join(", ")}${more > 0 ? `, and ${more} more` : ""}`,
    { hint: "nothing was restored; choose one with --player <uuid>" },
  );
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

/** "6f4b2c1e-… (Steve)" or the UUID alone: the UUID first, as it names the files (the name is the game's word). */
export function describePlayer(player: Player): string {
  return player.name ? `${player.uuid} (${player.name})` : player.uuid;
}

/**
 * Refuses (exit 75) while the player is online: the server writes their file when they leave, over the restored one.
 * Who is online comes from the game log; when the log cannot tell, a running server is not trusted. With somebody
 * online, a player given by UUID is looked up in the server's usercache.json now; a cache that cannot be read (a FIFO,
 * too large) cannot tell either.
 */
export function refuseIfOnline(player: Player, online: string[] | undefined, volume: VolumeDir): void {
  if (online === undefined) {
    throw new BusyError(
      `cannot tell whether ${describePlayer(player)} is online: the server runs and has no game log`,
      {
        hint: "stop the server first, or try again once logs/latest.log is there",
      },
    );
  }
  if (online.length === 0) return;
  // The log names players as they are called now: every name the server's own cache has for the UUID.
  const names = new Set((player.current ?? currentNames(player, volume, online)).map((n) => n.toLowerCase()));
  if (names.size === 0) {
    throw new BusyError(
      `cannot tell whether ${describePlayer(player)} is online: the server's usercache.json has no name for ${player.uuid}`,
      { hint: `${online.length} player(s) online; try again when nobody plays` },
    );
  }
  if (online.some((n) => names.has(n.toLowerCase()))) throw new PlayerOnlineError(player);
}

/** The names the server's usercache.json has now for a player given by UUID; exit 75 if it cannot be read. */
function currentNames(player: Player, volume: VolumeDir, online: string[]): string[] {
  try {
    return namesOf(readVolumeCache(volume), player.uuid);
  } catch (error) {
    if (!(error instanceof UnsafePathError)) throw error;
    throw new BusyError(`cannot tell whether ${describePlayer(player)} is online: ${error.message}`, {
      hint: `${online.length} player(s) online; try again when nobody plays`,
      cause: error,
    });
  }
}

/** Exit 75: the player is online; the server would write their file over the restored one when they leave. */
export class PlayerOnlineError extends BusyError {
  constructor(player: Player) {
    super(`${describePlayer(player)} is online: the server would overwrite the restored file when they leave`, {
      hint: "try again once they have left the game (other players can keep playing)",
    });
  }
}
