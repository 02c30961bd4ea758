import { JobError } from "@mcops/core/errors";
import type { DigitalOcean, Droplet, Snapshot } from "./digitalocean.ts";

/** The game VM and hibernate's snapshots as DigitalOcean lists them (fetch only: the CLIs and the Worker share it). */

const SNAPSHOT_PREFIX = "mcops-";

/** `mcops-2026-11-21-0612`: sorts by time, names the day. */
export function snapshotName(now: number): string {
  const iso = new Date(now).toISOString();
  return `${SNAPSHOT_PREFIX}${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/** The snapshots hibernate took, newest first. */
export function mcopsSnapshots(snapshots: Snapshot[]): Snapshot[] {
  return snapshots
    .filter((s) => s.name.startsWith(SNAPSHOT_PREFIX))
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
}

/** The game VM: by DROPLET_NAME, else the one droplet tagged DROPLET_TAG (default mcops); undefined when none. */
export async function findDroplet(
  digitalocean: DigitalOcean,
  env: { DROPLET_NAME?: string | undefined; DROPLET_TAG?: string | undefined },
): Promise<Droplet | undefined> {
  if (env.DROPLET_NAME) {
    const named = (await digitalocean.droplets()).filter((d) => d.name === env.DROPLET_NAME);
    if (named.length > 1) {
      throw new JobError(`${named.length} droplets are named ${env.DROPLET_NAME}`, {
        where: "DROPLET_NAME",
        hint: "rename the others in the DigitalOcean control panel",
      });
    }
    return named[0];
  }
  const tag = env.DROPLET_TAG ?? "mcops";
  const tagged = await digitalocean.droplets(tag);
  if (tagged.length > 1) {
    throw new JobError(`${tagged.length} droplets carry the tag ${tag}: ${tagged.map((d) => d.name).join(", ")}`, {
      where: "DROPLET_TAG",
      hint: "set DROPLET_NAME in .env to the game VM's name",
    });
  }
  return tagged[0];
}
