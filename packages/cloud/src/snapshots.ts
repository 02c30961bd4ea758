import { JobError } from "@mcops/core/errors";
import { parseGameAddress } from "@mcops/game-log/list-ping";
import type { DigitalOcean, Droplet, Snapshot } from "./digitalocean.ts";

/**
 * The game VM and hibernate's snapshots as DigitalOcean lists them (fetch only: the CLIs and the Worker share it).
 *
 * One server, one identity (issue 30): the play host of SERVER_ADDR, lower case. It is in the tag of every droplet a
 * revive creates (`mcops-server:play_example_co_uk`: a tag takes no dots) and in the name of every snapshot hibernate
 * takes (`mcops-play.example.co.uk-2026-11-21-0612`), so that two servers on one DigitalOcean account (or a test
 * droplet beside the game VM) never take, prune or restore each other's. A snapshot of the earlier naming
 * (`mcops-2026-11-21-0612`) is this server's only when it was taken of a droplet this server knows (by its id).
 */

const SNAPSHOT_PREFIX = "mcops-";
/** `2026-11-21-0612`, or `2026-11-21-061245` when this server had a snapshot of that minute already. */
const STAMP = /^\d{4}-\d\d-\d\d-\d{4}(\d\d)?$/;

export interface ServerIdentity {
  /** The play host, lower case: `play.example.co.uk`. */
  key: string;
  /** Droplets known to have been this server's (the one being hibernated, the one hibernation remembered). */
  dropletIds?: readonly number[] | undefined;
}

/**
 * The server's identity from SERVER_ADDR (`play.example.co.uk:25565` → `play.example.co.uk`). Only a host name's
 * letters, digits, dots and hyphens: the tag writes dots as underscores, so `play_example.co.uk` would share
 * `play.example.co.uk`'s tag and take its droplet for its own.
 */
export function serverKey(serverAddr: string): string {
  const host = parseGameAddress(serverAddr).host.toLowerCase();
  if (!/^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/.test(host)) {
    throw new JobError(`SERVER_ADDR ${JSON.stringify(serverAddr.slice(0, 100))} is not a host name`, {
      where: "SERVER_ADDR",
      hint: "the play address players type, e.g. play.example.com or play.example.com:25565",
    });
  }
  return host;
}

/** The tag every droplet of this server carries (DigitalOcean's tags take letters, digits, `:`, `-` and `_`). */
export function serverTag(key: string): string {
  return `mcops-server:${key.replace(/\./g, "_")}`;
}

/** The tag of the droplet one revive run creates, so that a create whose answer was lost is found again. */
export function runTag(runId: string): string {
  return `mcops-run:${runId}`;
}

/**
 * `mcops-play.example.co.uk-2026-11-21-0612`: names the server and the minute; with the seconds
 * (`…-061245`) when a snapshot in `taken` has that name already (two hibernations in one minute).
 */
export function snapshotName(key: string, now: number, taken: readonly Snapshot[] = []): string {
  const iso = new Date(now).toISOString();
  const minute = `${SNAPSHOT_PREFIX}${key}-${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
  return taken.some((s) => s.name === minute) ? `${minute}${iso.slice(17, 19)}` : minute;
}

/** `mcops-2026-11-21-0612`: the naming before issue 30, which says nothing of the server. */
export function isLegacySnapshot(s: Snapshot): boolean {
  return s.name.startsWith(SNAPSHOT_PREFIX) && STAMP.test(s.name.slice(SNAPSHOT_PREFIX.length));
}

/** This server's by its name: `mcops-<key>-<stamp>` exactly (another server's key never matches, whatever it is). */
function namedFor(s: Snapshot, key: string): boolean {
  const head = `${SNAPSHOT_PREFIX}${key}-`;
  return s.name.startsWith(head) && STAMP.test(s.name.slice(head.length));
}

/**
 * This server's snapshots, newest first: named for it, or of the earlier naming and taken of one of its known droplets.
 * Nothing else is ever pruned or restored.
 */
export function serverSnapshots(snapshots: Snapshot[], server: ServerIdentity): Snapshot[] {
  const known = new Set((server.dropletIds ?? []).map(String));
  return snapshots
    .filter((s) => namedFor(s, server.key) || (isLegacySnapshot(s) && known.has(s.resource_id)))
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
}

export interface FindOptions {
  DROPLET_NAME?: string | undefined;
  DROPLET_TAG?: string | undefined;
}

/**
 * The droplets that are this server's game VM: by DROPLET_NAME; else those with the server's tag; else (an install from
 * before the server's tag, whose VM was made by hand) those with DROPLET_TAG (default mcops) that carry no server's tag
 * at all, so that another server's droplet is never taken for this one's.
 */
export async function serverDroplets(
  digitalocean: DigitalOcean,
  env: FindOptions,
  key: string,
): Promise<{ droplets: Droplet[]; by: string }> {
  if (env.DROPLET_NAME) {
    const named = (await digitalocean.droplets()).filter((d) => d.name === env.DROPLET_NAME);
    return { droplets: named, by: "DROPLET_NAME" };
  }
  const own = serverTag(key);
  const tagged = await digitalocean.droplets(own);
  if (tagged.length) return { droplets: tagged, by: `tag ${own}` };
  const tag = env.DROPLET_TAG ?? "mcops";
  const legacy = (await digitalocean.droplets(tag)).filter((d) => !d.tags.some((t) => t.startsWith("mcops-server:")));
  return { droplets: legacy, by: `tag ${tag}` };
}

/** The game VM: one droplet of `serverDroplets`, or undefined when there is none; more than one is an error. */
export async function findDroplet(
  digitalocean: DigitalOcean,
  env: FindOptions,
  key: string,
): Promise<Droplet | undefined> {
  const { droplets, by } = await serverDroplets(digitalocean, env, key);
  if (droplets.length > 1) {
    throw new JobError(`${droplets.length} droplets are this server's game VM (${by}): ${names(droplets)}`, {
      where: env.DROPLET_NAME ? "DROPLET_NAME" : "DROPLET_TAG",
      hint: env.DROPLET_NAME
        ? "rename the others in the DigitalOcean control panel"
        : "set DROPLET_NAME in .env to the game VM's name, or destroy the extra one in the DigitalOcean control panel",
    });
  }
  return droplets[0];
}

export function names(droplets: Droplet[]): string {
  return droplets.map((d) => `${d.name} (${d.id})`).join(", ");
}
