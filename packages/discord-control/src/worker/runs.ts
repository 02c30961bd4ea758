import { connect } from "cloudflare:sockets";
import { createCloudflare } from "@mcops/cloud/cloudflare";
import { createDigitalOcean } from "@mcops/cloud/digitalocean";
import type { HibernateDeps, HibernatedDroplet } from "@mcops/cloud/hibernate-steps";
import { KEEP_SNAPSHOTS_DEFAULT } from "@mcops/cloud/keep";
import type { DropletSpec, ReviveDeps } from "@mcops/cloud/revive-steps";
import { serverKey } from "@mcops/cloud/snapshots";
import type { Clock } from "@mcops/core/clock";
import { listPing, parseGameAddress } from "@mcops/game-log/list-ping";
import type { Env } from "./env.ts";

/** The Worker's clock: real time (in a Durable Object, setTimeout waits while the call lasts). */
export const workerClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    }),
};

/**
 * The VM as hibernation remembered it (the Durable Object's own hibernate, or nothing). Its id (what a snapshot of the
 * earlier naming was taken of) is absent in what was stored before it was read.
 */
export type RememberedDroplet = Omit<HibernatedDroplet, "id"> & { id?: number | undefined };

/** The players answering at `address`, or undefined when the game does not answer within 3 s. */
export async function pingFromWorker(address: string): Promise<{ online: number; names: string[] } | undefined> {
  const { host, port } = parseGameAddress(address);
  let socket: ReturnType<typeof connect> | undefined;
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3000));
  try {
    socket = connect({ hostname: host, port });
    const open = socket;
    return await Promise.race([listPing(open, host, port), timeout]);
  } catch {
    return undefined;
  } finally {
    await socket?.close().catch(() => undefined);
  }
}

export function clouds(env: Env) {
  return {
    digitalocean: createDigitalOcean({
      base: env.DIGITALOCEAN_API_URL,
      token: env.DIGITALOCEAN_ACCESS_TOKEN,
      clock: workerClock,
    }),
    cloudflare: createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: workerClock }),
  };
}

/** What the revive steps need, from the Worker's settings and what the Durable Object remembers. */
export function reviveDeps(env: Env, remembered: RememberedDroplet | undefined): ReviveDeps {
  const { digitalocean, cloudflare } = clouds(env);
  const tag = env.DROPLET_TAG ?? "mcops";
  return {
    digitalocean,
    cloudflare,
    serverAddr: env.SERVER_ADDR,
    panelUrl: env.PANEL_URL,
    find: { DROPLET_NAME: env.DROPLET_NAME, DROPLET_TAG: env.DROPLET_TAG },
    server: { key: serverKey(env.SERVER_ADDR), dropletIds: remembered?.id === undefined ? [] : [remembered.id] },
    async spec(): Promise<DropletSpec> {
      return {
        name: env.DROPLET_NAME ?? remembered?.name ?? "mcops",
        size: remembered?.size ?? env.DROPLET_SIZE,
        region: remembered?.region ?? env.DROPLET_REGION,
        tags: [...new Set([...(remembered?.tags ?? []), tag])],
        sshKeys: await digitalocean.sshKeyIds(),
      };
    },
    gameAddress: (ip) => env.GAME_ADDRESS ?? `${ip}:${parseGameAddress(env.SERVER_ADDR).port}`,
    answers: async (address) => (await pingFromWorker(address)) !== undefined,
    now: () => Date.now(),
    pollMs: Number(env.POLL_MS ?? 5000),
  };
}

/** What the hibernate steps need: DigitalOcean, the VM, and the game pinged from the Worker before anything is undone. */
export function hibernateDeps(env: Env): HibernateDeps {
  const { digitalocean } = clouds(env);
  const gameAddress = (ip: string) => env.GAME_ADDRESS ?? `${ip}:${parseGameAddress(env.SERVER_ADDR).port}`;
  return {
    digitalocean,
    find: { DROPLET_NAME: env.DROPLET_NAME, DROPLET_TAG: env.DROPLET_TAG },
    server: { key: serverKey(env.SERVER_ADDR) },
    players: async (ip) => (await pingFromWorker(gameAddress(ip)))?.online,
    keep: keepSnapshots(env.KEEP_SNAPSHOTS),
    now: () => Date.now(),
    pollMs: Number(env.POLL_MS ?? 5000),
  };
}

/**
 * KEEP_SNAPSHOTS: a whole number of 1 or more; anything else keeps KEEP_SNAPSHOTS_DEFAULT (a setting that does not parse
 * deletes nothing).
 */
export function keepSnapshots(value: string | undefined): number {
  const keep = Number(value);
  if (value !== undefined && value.trim() !== "" && Number.isInteger(keep) && keep >= 1) return keep;
  if (value !== undefined) {
    console.log(
      `KEEP_SNAPSHOTS=${JSON.stringify(value)} is not a number of snapshots of 1 or more: keeping ${KEEP_SNAPSHOTS_DEFAULT}`,
    );
  }
  return KEEP_SNAPSHOTS_DEFAULT;
}
